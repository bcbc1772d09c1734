//! A site's queues and their limits: the `.queues` file beside an SWF log (or given with
//! `--queues`), one queue per line, so a replay holds each queue to the processors the site
//! allowed it and serves higher-priority queues first, as PBS and Slurm partitions do.
//!
//! ```text
//! # name     processors   priority   cost
//! q_2h       -1           3
//! q_1d       512          2          1.5
//! backfill   64           0          0.5
//! ```
//!
//! Three or four whitespace-separated fields per line: the queue's name as the log writes it
//! (SWF field 20 of the Alea extension, else the queue number of field 15), the most
//! processors its running jobs may hold at once (`-1`: no limit), its priority (a whole
//! number, higher first), and optionally its cost (a number >= 0, default 1), which a
//! fairshare policy multiplies its jobs' charges by, as MetaCentrum's penalty does. Anything
//! from a `#` or `;` to the end of its line is a comment.

use crate::input::{At, Col, Lines};
use crate::TraceError;
use std::path::Path;

const NAME: Col = Col::new(1, "queue name");
const LIMIT: Col = Col::new(2, "processor limit");
const PRIORITY: Col = Col::new(3, "priority");
const COST: Col = Col::new(4, "cost");

/// One queue of a site.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRule {
    /// Its name, as the log writes it.
    pub name: String,
    /// The most processors its running jobs may hold at once (`None`: no limit).
    pub processor_limit: Option<f64>,
    /// Its priority: jobs of higher-priority queues are considered first.
    pub priority: i32,
    /// What its jobs' fairshare charges are multiplied by (1 unless the file says otherwise).
    pub cost: f64,
}

/// Reads a `.queues` file.
pub fn read_queues(path: &Path) -> Result<Vec<QueueRule>, TraceError> {
    let mut lines = Lines::new(&[path.to_path_buf()]);
    let mut queues: Vec<QueueRule> = Vec::new();
    while let Some(line) = lines.next_line() {
        let line = line?;
        let text = line
            .text
            .split(['#', ';'])
            .next()
            .unwrap_or_default()
            .trim();
        if text.is_empty() {
            continue;
        }
        let fields: Vec<&str> = text.split_ascii_whitespace().collect();
        if !(3..=4).contains(&fields.len()) {
            return Err(line.at.count_error(
                "3 or 4 (name, processor limit, priority, cost)",
                fields.len(),
            ));
        }
        let rule = queue(line.at, &fields)?;
        if queues.iter().any(|q| q.name == rule.name) {
            return Err(line.at.error(NAME, "a queue not listed before", rule.name));
        }
        queues.push(rule);
    }
    Ok(queues)
}

/// One line's queue.
fn queue(at: At, fields: &[&str]) -> Result<QueueRule, TraceError> {
    let limit = fields[1];
    let processor_limit = match limit {
        "-1" => None,
        _ => Some(at.amount(LIMIT, limit).map_err(|_| {
            at.error(
                LIMIT,
                "a number of processors from 0 to 1e15, or -1 for no limit",
                limit,
            )
        })?),
    };
    let priority = fields[2]
        .parse::<i32>()
        .map_err(|_| at.error(PRIORITY, "a whole number (higher first)", fields[2]))?;
    let cost = match fields.get(3) {
        None => 1.0,
        Some(cost) => at
            .amount(COST, cost)
            .map_err(|_| at.error(COST, "a number >= 0 (default 1)", cost))?,
    };
    Ok(QueueRule {
        name: fields[0].to_owned(),
        processor_limit,
        priority,
        cost,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<QueueRule>, TraceError> {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("log.swf.queues");
        std::fs::write(&path, text).unwrap();
        read_queues(&path)
    }

    #[test]
    fn queues_with_and_without_limits() {
        let queues =
            read("# name limit priority\n\nq_2h -1 3  # no limit\n  q_1d 512 2 1.5\n; old\nbackfill 64 -1 0;\n")
                .unwrap();
        let rule = |name: &str, processor_limit, priority, cost| QueueRule {
            name: name.into(),
            processor_limit,
            priority,
            cost,
        };
        assert_eq!(
            queues,
            [
                rule("q_2h", None, 3, 1.0),
                rule("q_1d", Some(512.0), 2, 1.5),
                rule("backfill", Some(64.0), -1, 0.0)
            ]
        );
    }

    #[test]
    fn bad_lines_say_where_and_what() {
        let said = |text: &str| read(text).unwrap_err().to_string();
        assert!(said("q 1\n").contains(
            ":1: expected 3 or 4 (name, processor limit, priority, cost) fields, found 2"
        ));
        assert!(said("q 1 1 1 1\n").contains("found 5"));
        assert!(said("q 1 1 -2\n")
            .contains("field 4 (cost): expected a number >= 0 (default 1), found \"-2\""));
        assert!(said("q -5 1\n").contains(":1: field 2 (processor limit): expected a number of processors from 0 to 1e15, or -1 for no limit, found \"-5\""));
        assert!(said("q 5 high\n").contains(
            "field 3 (priority): expected a whole number (higher first), found \"high\""
        ));
        assert!(said("q 5 1\nq 6 2\n")
            .contains(":2: field 1 (queue name): expected a queue not listed before, found \"q\""));
        assert!(said("q NaN 1\n").contains("field 2"));
    }
}
