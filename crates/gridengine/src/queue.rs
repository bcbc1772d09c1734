//! The jobs of `qstat -u '*' -pri -ext -xml`: the running ones (`<queue_info>`) and the pending
//! ones (`<job_info>`), each with its owner, state letters, POSIX priority, share-tree tickets,
//! submission or start, queue and slots.
//!
//! A task of an array job is its own job here: Grid Engine gives all the tasks one job number,
//! while the reconcile knows a job by one id, so task `t` of job `j` is [`task_id`]`(j, t)`,
//! the same id the accounting file's record of it gets.

use crate::{number, OutputError};
use fairshare_core::model::Time;

/// The command whose output [`parse_qstat`] reads.
pub const QSTAT_COMMAND: [&str; 6] = ["qstat", "-u", "*", "-pri", "-ext", "-xml"];

/// Grid Engine's priority (`JAT_prio`, in [0, 1], printed with five decimals) times this is the
/// whole number the reconcile's queue holds.
pub const PRIO_SCALE: u64 = 100_000;

/// One job (or one task of an array job) as `qstat` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct GeJob {
    /// Its id: its number while pending, [`task_id`] for a running task of an array job.
    pub id: u64,
    /// Its job number, which `qalter` takes.
    pub number: u64,
    /// Its owner.
    pub owner: String,
    /// Whether it is in `qstat`'s running list (running, transferring, suspended).
    pub running: bool,
    /// Its state letters: `qw`, `hqw` (on hold), `Eqw` (in error), `r`, `t`, `dr` …
    pub state: String,
    /// Its POSIX priority (`qsub -p`, `qalter -p`; `JB_priority`), from -1023 to 1024.
    pub posix_priority: i64,
    /// Grid Engine's priority from the last scheduler run (`JAT_prio`), in [0, 1].
    pub prio: f64,
    /// Its share-tree tickets from the last scheduler run (`stickets`, with `-ext`).
    pub share_tickets: Option<f64>,
    /// When it was submitted (pending jobs).
    pub submit: Option<Time>,
    /// When it started (running jobs).
    pub start: Option<Time>,
    /// The cluster queue it runs in (`all.q` of `all.q@vm`); empty while pending.
    pub queue: String,
    /// The slots it holds or asks for.
    pub slots: u32,
}

impl GeJob {
    /// Whether Grid Engine's priority can order it: pending, neither on hold nor in error.
    pub fn orderable(&self) -> bool {
        !self.running && !self.state.contains(['h', 'E'])
    }
}

/// The id of task `task` of job `number` (`task` 0: a job that is not an array job, whose id
/// is its number).
pub fn task_id(number: u64, task: u64) -> u64 {
    match task {
        0 => number,
        t => number.saturating_mul(1_000_000).saturating_add(t),
    }
}

/// The jobs of `qstat -u '*' -pri -ext -xml`, running first, in `qstat`'s order.
pub fn parse_qstat(text: &str) -> Result<Vec<GeJob>, OutputError> {
    let document = roxmltree::Document::parse(text).map_err(|e| {
        OutputError::new("qstat's XML", "document", "well-formed XML", &e.to_string())
    })?;
    document
        .descendants()
        .filter(|n| n.has_tag_name("job_list"))
        .enumerate()
        .map(|(i, node)| job(node, i + 1))
        .collect()
}

/// The `i`-th `<job_list>` element.
fn job(node: roxmltree::Node, i: usize) -> Result<GeJob, OutputError> {
    let place = format!("job_list {i}");
    let field = |name: &str| -> &str {
        node.children()
            .find(|c| c.has_tag_name(name))
            .and_then(|c| c.text())
            .unwrap_or("")
    };
    let job_number: u64 = number(
        field("JB_job_number"),
        &place,
        "JB_job_number",
        "a job number",
    )?;
    let place = format!("job {job_number}");
    // A pending array job's tasks wait as one job, its number (what `qalter` takes), whether
    // `qstat` lists them as a range (`1-10:1`) or one task; a running task is a job of its own.
    let running = node.attribute("state") == Some("running");
    let task: u64 = match running {
        true => field("tasks").parse().unwrap_or(0),
        false => 0,
    };
    let time = |name: &str| -> Result<Option<Time>, OutputError> {
        match field(name) {
            "" => Ok(None),
            text => Time::from_utc(text).map(Some).ok_or_else(|| {
                OutputError::new(&place, name, "a time such as 2026-11-28T23:24:15", text)
            }),
        }
    };
    let queue = field("queue_name");
    Ok(GeJob {
        id: task_id(job_number, task),
        number: job_number,
        owner: field("JB_owner").to_string(),
        running,
        state: field("state").to_string(),
        posix_priority: number(field("JB_priority"), &place, "JB_priority", "an integer")?,
        prio: number(field("JAT_prio"), &place, "JAT_prio", "a number")?,
        share_tickets: match field("stickets") {
            "" => None,
            text => Some(number(text, &place, "stickets", "a number of tickets")?),
        },
        submit: time("JB_submission_time")?,
        start: time("JAT_start_time")?,
        queue: queue.split_once('@').map_or(queue, |(q, _)| q).to_string(),
        slots: number(field("slots"), &place, "slots", "a whole number of slots")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUNNING_AND_PENDING: &str = r#"<?xml version='1.0'?>
<job_info  xmlns:xsd="http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/qstat.xsd">
  <queue_info>
    <job_list state="running">
      <JB_job_number>1</JB_job_number>
      <JAT_prio>0.50000</JAT_prio>
      <JB_priority>0</JB_priority>
      <JB_name>fill</JB_name>
      <JB_owner>gea</JB_owner>
      <state>r</state>
      <JAT_start_time>2026-11-28T23:24:25</JAT_start_time>
      <queue_name>all.q@vm</queue_name>
      <slots>1</slots>
    </job_list>
  </queue_info>
  <job_info>
    <job_list state="pending">
      <JB_job_number>9</JB_job_number>
      <JAT_prio>0.50000</JAT_prio>
      <JB_priority>5</JB_priority>
      <stickets>2500</stickets>
      <JB_name>pgea</JB_name>
      <JB_owner>gea</JB_owner>
      <state>qw</state>
      <JB_submission_time>2026-11-28T23:24:15</JB_submission_time>
      <queue_name></queue_name>
      <slots>1</slots>
    </job_list>
    <job_list state="pending">
      <JB_job_number>15</JB_job_number>
      <JAT_prio>0.00000</JAT_prio>
      <JB_priority>-10</JB_priority>
      <JB_name>held</JB_name>
      <JB_owner>geb</JB_owner>
      <state>hqw</state>
      <JB_submission_time>2026-11-28T23:25:35</JB_submission_time>
      <queue_name></queue_name>
      <slots>4</slots>
    </job_list>
  </job_info>
</job_info>
"#;

    #[test]
    fn running_and_pending_jobs_are_read_with_their_priorities() {
        let jobs = parse_qstat(RUNNING_AND_PENDING).unwrap();
        assert_eq!(jobs.len(), 3);
        let (run, wait, held) = (&jobs[0], &jobs[1], &jobs[2]);
        assert!(run.running && !run.orderable());
        assert_eq!(run.queue, "all.q");
        assert_eq!(run.start, Time::from_utc("2026-11-28T23:24:25"));
        assert_eq!(
            (wait.id, wait.posix_priority, wait.orderable()),
            (9, 5, true)
        );
        assert_eq!(wait.submit, Time::from_utc("2026-11-28T23:24:15"));
        assert_eq!(
            (wait.share_tickets, held.share_tickets),
            (Some(2500.0), None)
        );
        assert_eq!(
            (held.posix_priority, held.slots, held.orderable()),
            (-10, 4, false)
        );
    }

    #[test]
    fn a_bad_field_is_named_with_its_job() {
        let bad = RUNNING_AND_PENDING.replace("<slots>4</slots>", "<slots>four</slots>");
        let e = parse_qstat(&bad).unwrap_err();
        assert_eq!(
            e.to_string(),
            "job 15: slots: expected a whole number of slots, found \"four\""
        );
        let e = parse_qstat("<job_info>").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("qstat's XML: document: expected well-formed XML"),
            "{e}"
        );
    }

    #[test]
    fn a_pending_array_job_is_its_number_and_a_running_task_its_own_job() {
        let job = |state: &str, task: u32| {
            format!("<job_list state=\"{state}\"><JB_job_number>42</JB_job_number><JAT_prio>0.5</JAT_prio><JB_priority>0</JB_priority><JB_owner>gea</JB_owner><state>r</state><slots>1</slots><tasks>{task}</tasks></job_list>")
        };
        let xml = format!(
            "<job_info><queue_info>{}</queue_info><job_info>{}</job_info></job_info>",
            job("running", 3),
            job("pending", 5)
        );
        let jobs = parse_qstat(&xml).unwrap();
        assert_eq!((jobs[0].id, jobs[1].id), (42_000_003, 42));
    }

    #[test]
    fn tasks_of_an_array_job_get_ids_of_their_own() {
        assert_eq!(task_id(42, 0), 42);
        assert_eq!(task_id(42, 3), 42_000_003);
    }
}
