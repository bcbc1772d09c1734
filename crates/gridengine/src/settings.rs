//! The scheduler's settings that decide whether a POSIX priority orders jobs (`qconf
//! -ssconf`): Grid Engine's priority is `weight_priority·npprior + weight_urgency·nurg +
//! weight_ticket·ntckts`, so the priority fairshare writes orders the queue alone only with
//! `weight_priority` above 0 and the two other weights 0; and `halftime`, the half-life of Grid
//! Engine's own usage, which a policy without a memory of its own takes.

use crate::{number, OutputError};

/// The command whose output [`parse_scheduler`] reads.
pub const SCHEDULER_COMMAND: [&str; 2] = ["qconf", "-ssconf"];

/// Grid Engine's scheduler configuration (`sched_conf(5)`): its weights and half-time.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedConf {
    /// `weight_priority`: the POSIX priority's weight.
    pub weight_priority: f64,
    /// `weight_urgency`: the urgency's weight (waiting time, deadline, resources).
    pub weight_urgency: f64,
    /// `weight_ticket`: the tickets' weight (share tree, functional, override).
    pub weight_ticket: f64,
    /// `halftime`, in hours: the half-life of Grid Engine's own usage (0: no decay).
    pub halftime_h: f64,
    /// `weight_tickets_share`: the tickets the share tree hands out.
    pub weight_tickets_share: f64,
}

/// The scheduler's settings of `qconf -ssconf`'s output.
pub fn parse_scheduler(text: &str) -> Result<SchedConf, OutputError> {
    let value = |key: &str| -> Result<f64, OutputError> {
        let line = text.lines().find_map(|l| {
            l.strip_prefix(key)
                .filter(|v| v.starts_with(char::is_whitespace))
        });
        let line = line.ok_or_else(|| OutputError::new("qconf -ssconf", key, "the setting", ""))?;
        number(line, "qconf -ssconf", key, "a number")
    };
    Ok(SchedConf {
        weight_priority: value("weight_priority")?,
        weight_urgency: value("weight_urgency")?,
        weight_ticket: value("weight_ticket")?,
        halftime_h: value("halftime")?,
        weight_tickets_share: value("weight_tickets_share")?,
    })
}

impl SchedConf {
    /// Whether a job's POSIX priority enters Grid Engine's priority at all.
    pub fn lever(&self) -> bool {
        self.weight_priority > 0.0
    }

    /// What an administrator should know: that the POSIX priority orders nothing, or where
    /// Grid Engine's other terms mix into the order.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if !self.lever() {
            notes.push("Grid Engine's weight_priority is 0: the POSIX priorities fairshare writes would order nothing, so it writes none; set weight_priority 1, weight_urgency 0 and weight_ticket 0 (qconf -msconf; docs/gridengine.md)".to_string());
        }
        for (key, weight, what) in [
            (
                "weight_urgency",
                self.weight_urgency,
                "waiting time and requests",
            ),
            (
                "weight_ticket",
                self.weight_ticket,
                "share-tree, functional and override tickets",
            ),
        ] {
            if weight != 0.0 {
                notes.push(format!("Grid Engine's {key} is {weight}: {what} weigh in beside the POSIX priority fairshare writes, so the order is not fairshare's alone; set {key} 0 (qconf -msconf; docs/gridengine.md)"));
            }
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debians_defaults_are_read_and_their_weights_named() {
        let text = "algorithm                         default\nhalftime                          168\nweight_tickets_share              0\nweight_ticket                     0.500000\nweight_waiting_time               0.278000\nweight_urgency                    0.500000\nweight_priority                   0.000000\n";
        let s = parse_scheduler(text).unwrap();
        assert_eq!(
            s,
            SchedConf {
                weight_priority: 0.0,
                weight_urgency: 0.5,
                weight_ticket: 0.5,
                halftime_h: 168.0,
                weight_tickets_share: 0.0,
            }
        );
        let notes = s.notes();
        assert_eq!(notes.len(), 3);
        assert!(
            notes[0].starts_with("Grid Engine's weight_priority is 0"),
            "{notes:?}"
        );
        assert!(
            notes[1].starts_with("Grid Engine's weight_urgency is 0.5: waiting time"),
            "{notes:?}"
        );
        let e = parse_scheduler("halftime 168\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "qconf -ssconf: weight_priority: expected the setting, found \"\""
        );
    }
}
