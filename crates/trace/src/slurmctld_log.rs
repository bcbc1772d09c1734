//! Sub-second times from `slurmctld`'s log: when each job was submitted, started and ended to
//! the millisecond, and when the controller's background loop ran the main scheduler.
//!
//! `sacct` records whole seconds, and Slurm's background loop serves what happened in a second
//! at its own fraction of it, a fraction that creeps by the loop's work and restarts now and
//! then. Whether a submission or an end came before or after the loop's turn in its second
//! decides whether its jobs start in that second or a pass later, which a dump cannot tell.
//! The controller's log can: with Slurm's default `LogTimeFormat=iso8601_ms` every line starts
//! with `[YYYY-MM-DDTHH:MM:SS.mmm]`, and at the default `SlurmctldDebug=info` it says
//!
//! - `_slurm_rpc_submit_batch_job: JobId=N …` when job N was submitted;
//! - `sched: Allocate JobId=N …` when the main scheduler started it, at the loop's turn;
//! - `sched/backfill: _start_job: Started JobId=N …` when the backfill started it;
//! - `_job_complete: JobId=N done` when it ended, or `Time limit exhausted for JobId=N`
//!   when the controller killed it at its limit (which frees its nodes at once);
//! - `Running as primary controller` when the controller started: its background loop,
//!   which begins once the priority plugin has started (the next two lines), runs the main
//!   scheduler down the whole queue every `sched_interval` from the second it began;
//! - `_read_last_decay_ran: No last decay …` when the priority plugin's decay thread started
//!   without a saved state, and `mcs: MCSParameters = …` when the plugin loaded after it
//!   (the first of the two after each start, within a millisecond of each other): the
//!   thread set its timer then, and recomputes every `PriorityCalcPeriod` from that instant
//!   on, a quarter of a second after the controller's start;
//! - `update_node: node NAME state set to DRAINING` (or `DRAINED`, `DOWN`) when an
//!   administrator took node NAME from the jobs (the accounting's event begins only when its
//!   last job has ended), and `… state set to IDLE` (or any other state) when it came back.
//!
//! Every other line is passed over (bytes that are not UTF-8 included: a job's name can hold
//! them). A line this reader takes must have a timestamp with milliseconds and a job id that
//! is a number; an error names the line. A controller started afresh counts job ids from 1
//! again: a new submission of an id read before starts that job afresh, so a log spanning a
//! wiped controller holds its last job of each id. A site's log of a month runs to hundreds
//! of megabytes, often rotated and gzip'd: [`read_controller_log`] reads it a line at a time,
//! inflating it as it goes, and keeps only the moments it takes.

use crate::error::TraceError;
use crate::input::open_file;
use crate::slurm_output::{Problem, ReadError};
use fairshare_core::model::{Task, Time};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

/// What the log says of one job, each moment to the microsecond.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobMoments {
    /// When it was submitted.
    pub submitted: Option<Time>,
    /// When it started.
    pub started: Option<Time>,
    /// When it ended (completed, failed, or was killed at its time limit).
    pub ended: Option<Time>,
}

/// What [`parse_controller_log`] read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControllerLog {
    /// Each job's moments, by job id.
    pub jobs: BTreeMap<u64, JobMoments>,
    /// The instants the main scheduler started jobs (the background loop's turns the log
    /// shows), in order, each once.
    pub main_passes: Vec<Time>,
    /// The instants the backfill started jobs (the backfill cycles the log shows), in
    /// order, each once.
    pub backfill_passes: Vec<Time>,
    /// The instants the controller started (`Running as primary controller`), in order.
    pub controller_starts: Vec<Time>,
    /// The instants the priority plugin's decay thread started, one per controller start
    /// the log shows it for, in order: its recomputations fall `PriorityCalcPeriod` apart
    /// from there.
    pub decay_starts: Vec<Time>,
    /// Each node's changes of state by an administrator or the controller, by host name, in
    /// order: when, and whether it was asked to take no new job (`state set to DRAINING`,
    /// `DRAINED` or `DOWN`) or opened again (any other state).
    pub node_states: BTreeMap<String, Vec<(Time, bool)>>,
    /// Whether the main scheduler's passes fall at the start of each second, as 24.11's
    /// background loop wakes (`passes_on_whole_seconds`): there the dump's times lag the
    /// log's by the coarse clock's tick (`COARSE_CLOCK_LAG_US`).
    pub on_whole_seconds: bool,
}

/// How long after the controller's start its priority plugin's line may come and still mark
/// the start of the background loop (it comes a quarter of a second after; a line much later
/// is a reconfiguration's).
pub const LOOP_START_WITHIN_S: u64 = 10;

impl ControllerLog {
    /// The instant the last controller's fairshare recomputations are in phase with, and what
    /// the log says of it: its decay thread's start when the log shows it, else the
    /// controller's start (a quarter of a second early).
    pub fn recomputations_phase(&self) -> Option<(Time, &'static str)> {
        let started = *self.controller_starts.last()?;
        match self.decay_starts.last() {
            Some(&decay) if decay >= started => Some((decay, "the priority plugin's start")),
            _ => Some((started, "the controller's start")),
        }
    }

    /// When the controller's background loop began, once per controller start: the loop sets
    /// its timers (`sched_interval`'s among them) to the second it begins, after the priority
    /// plugin has started (`controller.c`), so the decay thread's start where the log shows
    /// it within [`LOOP_START_WITHIN_S`] of the controller's, else the controller's.
    pub fn background_loop_starts(&self) -> Vec<Time> {
        let starts = &self.controller_starts;
        (starts.iter().enumerate())
            .map(|(i, &start)| {
                let by = start.plus_micros(LOOP_START_WITHIN_S * 1_000_000);
                let before = starts.get(i + 1).map_or(by, |&next| next.min(by));
                (self.decay_starts.iter().copied())
                    .find(|&decay| decay >= start && decay < before)
                    .unwrap_or(start)
            })
            .collect()
    }

    /// When `host` was asked to take no new job, for a closing the accounting dates at `at`
    /// (whole seconds, so the log's line may fall up to a second later): the last change of
    /// its state by then, if that change closed it.
    pub fn closed_before(&self, host: &str, at: Time) -> Option<Time> {
        let by = at.plus_micros(1_000_000);
        let states = self.node_states.get(host)?;
        let last = states.iter().rev().find(|(t, _)| *t < by)?;
        last.1.then_some(last.0)
    }
}

/// How far into the next second the log may time a moment the dump records in a second, in
/// microseconds: `slurmctld` stamps jobs with `time()`, which reads the kernel's coarse clock,
/// a tick behind the log's (10 ms at the slowest tick, 100 Hz). 24.11's background loop wakes
/// at each whole second, so the jobs its passes start are logged a few milliseconds into a
/// second the dump records as the one before.
const COARSE_CLOCK_LAG_US: u64 = 10_000;

/// How far into a second a pass of a loop that wakes on whole seconds may be logged, in
/// microseconds: the pass's work before its first start (the queue built and sorted, a lock
/// waited for) takes up to a quarter of a second.
const WHOLE_SECOND_PASS_US: u64 = 250_000;

/// Whether a loop's `passes` fall at the start of each second: nine in ten of them, of ten or
/// more, within `WHOLE_SECOND_PASS_US` of one (24.11's: 97 to 100 % in every log measured,
/// 77 to 97 % within 10 ms; 22.05's loop turns a second after its work, its fraction of the
/// second creeping, so that 11 to 45 % fall there).
fn passes_on_whole_seconds(passes: &[Time]) -> bool {
    let on = passes
        .iter()
        .filter(|t| t.as_micros() % 1_000_000 < WHOLE_SECOND_PASS_US);
    passes.len() >= 10 && on.count() * 10 >= passes.len() * 9
}

/// How many of a dump's jobs a log timed ([`ControllerLog::time`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timed {
    /// Jobs whose submission it gave to the millisecond.
    pub submissions: usize,
    /// Jobs whose start it gave so.
    pub starts: usize,
    /// Jobs whose end it gave so.
    pub ends: usize,
}

impl ControllerLog {
    /// Gives `task`, job `job_id` of a dump of whole seconds, the log's submission, start
    /// and end where each falls in the second the dump records, or, where the passes fall on
    /// whole seconds, within the coarse clock's lag after it (`COARSE_CLOCK_LAG_US`; a
    /// moment in another second is another job's, of a controller started afresh, and is not
    /// taken) and the three stay in order, keeping the job's end where the log has none.
    /// Adds what it took to `timed`.
    pub fn time(&self, job_id: u64, task: &mut Task, timed: &mut Timed) {
        let Some(moments) = self.jobs.get(&job_id) else {
            return;
        };
        let in_second = |moment: Option<Time>, second: Time| {
            let from = Time::from_whole_secs(second.whole_secs());
            let lag = if self.on_whole_seconds {
                COARSE_CLOCK_LAG_US
            } else {
                0
            };
            let until = from.plus_micros(1_000_000 + lag);
            moment.filter(|m| (from..until).contains(m))
        };
        let end = task.start.map(|start| start.plus_micros(task.runtime));
        let started = task
            .start
            .and_then(|start| in_second(moments.started, start));
        let started = started.filter(|started| *started >= task.submit);
        let start = started.or(task.start);
        let submitted = in_second(moments.submitted, task.submit);
        if let Some(submitted) = submitted.filter(|s| start.is_none_or(|start| *s <= start)) {
            task.submit = submitted;
            timed.submissions += 1;
        }
        let (Some(start), Some(end)) = (start, end) else {
            return;
        };
        let ended = in_second(moments.ended, end).filter(|ended| *ended >= start);
        timed.starts += usize::from(started.is_some());
        timed.ends += usize::from(ended.is_some());
        task.start = Some(start);
        task.runtime = ended
            .unwrap_or(end)
            .as_micros()
            .saturating_sub(start.as_micros());
    }
}

/// The events of the log this reader takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Submitted,
    StartedByMain,
    StartedByBackfill,
    Ended,
}

/// How the line that says the controller started ends.
const CONTROLLER_STARTED: &str = "] Running as primary controller";

/// What the first lines the priority plugin's loading writes after the controller's start
/// hold: its decay thread's reading of a missing state file, else the next plugin's
/// settings, written within the same millisecond.
const DECAY_STARTED: [&str; 2] = ["_read_last_decay_ran: ", "] mcs: MCSParameters = "];

/// What a line says when a node's state is changed: `update_node: node NAME state set to
/// STATE`; the states that take it from the jobs.
const NODE_UPDATED: &str = "] update_node: node ";
const STATE_SET: &str = " state set to ";
const CLOSED_STATES: [&str; 3] = ["DRAINING", "DRAINED", "DOWN"];

/// Each event's mark in a line, which its job id follows, and how such a line must end
/// (`_job_complete: JobId=N WEXITSTATUS 0` comes before the job's `… done`).
const MARKS: [(&str, Event, &str); 5] = [
    ("_slurm_rpc_submit_batch_job: JobId=", Event::Submitted, ""),
    ("sched: Allocate JobId=", Event::StartedByMain, ""),
    (
        "sched/backfill: _start_job: Started JobId=",
        Event::StartedByBackfill,
        "",
    ),
    ("_job_complete: JobId=", Event::Ended, " done"),
    ("Time limit exhausted for JobId=", Event::Ended, ""),
];

/// Reads a `slurmctld` log (see the module documentation).
pub fn parse_controller_log(text: &str) -> Result<ControllerLog, ReadError> {
    let mut log = ControllerLog::default();
    for (index, line) in text.lines().enumerate() {
        log.read_line(index as u64 + 1, line)?;
    }
    Ok(log.finished())
}

/// Reads the `slurmctld` log at `path`, gzip'd or not, a line at a time (see the module
/// documentation); an error names the file and the line.
pub fn read_controller_log(path: &Path) -> Result<ControllerLog, TraceError> {
    let mut input = open_file(path)?;
    let mut log = ControllerLog::default();
    let mut bytes = Vec::new();
    for number in 1.. {
        bytes.clear();
        let read = input.read_until(b'\n', &mut bytes);
        match read.map_err(|e| TraceError::io_after(path, number - 1, e))? {
            0 => break,
            _ => {
                let line = String::from_utf8_lossy(&bytes);
                // Its end taken off as `str::lines` does, so that both readers see one line.
                let line = line.strip_suffix('\n').unwrap_or(&line);
                let line = line.strip_suffix('\r').unwrap_or(line);
                (log.read_line(number, line)).map_err(|error| TraceError::read(path, error))?
            }
        }
    }
    Ok(log.finished())
}

impl ControllerLog {
    /// Takes line `number` of the log, if it tells of an event.
    fn read_line(&mut self, number: u64, line: &str) -> Result<(), ReadError> {
        let record = || format!("line {number}");
        let at = || {
            timestamp(line).map_err(|problem| ReadError::field_of(&record(), "timestamp", problem))
        };
        if line.trim_end().ends_with(CONTROLLER_STARTED) {
            self.controller_starts.push(at()?);
            return Ok(());
        }
        if self.awaits_decay_start() && DECAY_STARTED.iter().any(|mark| line.contains(mark)) {
            self.decay_starts.push(at()?);
            return Ok(());
        }
        if let Some((host, closes)) = node_state(line) {
            let states = self.node_states.entry(host.to_owned()).or_default();
            states.push((at()?, closes));
            return Ok(());
        }
        let Some((event, id_text)) = event_of(line) else {
            return Ok(());
        };
        let at = at()?;
        let id =
            job_id(id_text).map_err(|problem| ReadError::field_of(&record(), "JobId", problem))?;
        self.take(event, id, at);
        Ok(())
    }

    /// Whether the controller has started since the decay thread last did.
    fn awaits_decay_start(&self) -> bool {
        match (self.controller_starts.last(), self.decay_starts.last()) {
            (Some(controller), Some(decay)) => decay < controller,
            (controller, _) => controller.is_some(),
        }
    }

    /// The log once every line is read: the passes in order, each once.
    fn finished(mut self) -> ControllerLog {
        for passes in [
            &mut self.main_passes,
            &mut self.backfill_passes,
            &mut self.controller_starts,
            &mut self.decay_starts,
        ] {
            passes.sort_unstable();
            passes.dedup();
        }
        self.on_whole_seconds = passes_on_whole_seconds(&self.main_passes);
        // A stable sort: two changes of one millisecond stay in the log's order.
        self.node_states
            .values_mut()
            .for_each(|states| states.sort_by_key(|(t, _)| *t));
        self
    }

    /// Records `event` of job `id` at `at`.
    fn take(&mut self, event: Event, id: u64, at: Time) {
        if event == Event::Submitted {
            self.jobs.insert(
                id,
                JobMoments {
                    submitted: Some(at),
                    ..JobMoments::default()
                },
            );
            return;
        }
        let job = self.jobs.entry(id).or_default();
        match event {
            Event::StartedByMain => {
                job.started = Some(at);
                self.main_passes.push(at);
            }
            Event::StartedByBackfill => {
                job.started = Some(at);
                self.backfill_passes.push(at);
            }
            // The first end counts: a job killed at its limit logs its completion later.
            Event::Ended => {
                job.ended.get_or_insert(at);
            }
            Event::Submitted => unreachable!("handled above"),
        }
    }
}

/// The node whose state a line changes, and whether the change takes it from the jobs, if
/// it is such a line.
fn node_state(line: &str) -> Option<(&str, bool)> {
    let (_, after) = line.split_once(NODE_UPDATED)?;
    let (host, state) = after.trim_end().split_once(STATE_SET)?;
    let closes = CLOSED_STATES.contains(&state);
    (!host.is_empty() && !host.contains(' ')).then_some((host, closes))
}

/// The event a line tells of, with the text after its `JobId=`; `None` for any other line.
fn event_of(line: &str) -> Option<(Event, &str)> {
    MARKS.iter().find_map(|(mark, event, ending)| {
        let (_, after) = line.split_once(mark)?;
        after
            .trim_end()
            .ends_with(ending)
            .then_some((*event, after))
    })
}

/// The leading `[YYYY-MM-DDTHH:MM:SS.mmm]` of a line.
fn timestamp(line: &str) -> Result<Time, Problem> {
    let stamp = line
        .strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .map(|(stamp, _)| stamp)
        .ok_or(Problem::WrongType("a leading [YYYY-MM-DDTHH:MM:SS.mmm]"))?;
    let fraction = stamp.rsplit_once('.').map(|(_, f)| f);
    if !fraction.is_some_and(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit())) {
        return Err(Problem::Invalid(format!(
            "`{stamp}` has no fraction of a second (Slurm's default LogTimeFormat=iso8601_ms writes milliseconds)"
        )));
    }
    Time::from_utc(stamp).ok_or_else(|| {
        Problem::Invalid(format!(
            "`{stamp}` is not a time such as 2026-11-28T00:08:20.316, from 1970 on"
        ))
    })
}

/// The job id at the start of `text`, up to the first character that is not a digit.
fn job_id(text: &str) -> Result<u64, Problem> {
    let digits = text
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap_or("");
    digits.parse().map_err(|_| {
        let shown: String = text.chars().take(20).collect();
        Problem::Invalid(format!("`{shown}` does not start with a job id"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
[2026-11-28T00:08:17.503] slurmctld version 22.05.8 started on cluster fairshare
[2026-11-28T00:08:18.221] Running as primary controller
[2026-11-28T00:08:18.483] priority/multifactor: _read_last_decay_ran: No last decay (/var/spool/slurmctld/priority_last_decay_ran) to recover
[2026-11-28T00:08:18.483] mcs: MCSParameters = (null). ondemand set.
[2026-11-28T00:08:19.100] mcs: MCSParameters = (null). ondemand set.
[2026-11-28T00:08:20.136] _slurm_rpc_submit_batch_job: JobId=4 InitPrio=100000 usec=468
[2026-11-28T00:08:20.154] _slurm_rpc_submit_batch_job: JobId=5 InitPrio=100000 usec=342
[2026-11-28T00:08:20.169] _slurm_rpc_submit_batch_job: JobId=6 InitPrio=100000 usec=263
[2026-11-28T00:08:20.316] sched/backfill: _start_job: Started JobId=4 in cpu on n[01-11]
[2026-11-28T00:08:20.317] sched/backfill: _start_job: Started JobId=6 in cpu on n12
[2026-11-28T00:09:30.358] _job_complete: JobId=4 WEXITSTATUS 0
[2026-11-28T00:09:30.358] _job_complete: JobId=4 done
[2026-11-28T00:09:34.860] Time limit exhausted for JobId=6
[2026-11-28T00:09:34.906] sched: Allocate JobId=5 NodeList=n[01-12] #CPUs=96 Partition=cpu
[2026-11-28T00:09:35.001] error: Could not open job state file
[2026-11-28T00:09:36.100] _job_complete: JobId=6 done
[2026-11-28T00:10:00.500] update_node: node n05 reason set to: maintenance
[2026-11-28T00:10:00.500] update_node: node n05 state set to DRAINING
[2026-11-28T00:11:00.500] update_node: node n05 state set to IDLE
[2026-11-28T00:12:00.250] update_node: node n05 state set to DRAINED
";

    fn at(text: &str) -> Time {
        timestamp(&format!("[{text}]")).unwrap()
    }

    #[test]
    fn reads_a_log_file_plain_or_gzipd_a_line_at_a_time() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("slurmctld.log");
        // Bytes that are not UTF-8 (a job's name may hold them) do not stop the reading.
        let mut bytes = LOG.as_bytes().to_vec();
        bytes.extend_from_slice(
            b"[2026-11-28T00:09:37.000] _slurm_rpc_submit_batch_job: job name \xff\xfe\n",
        );
        std::fs::write(&plain, &bytes).unwrap();
        let gzipped = dir.path().join("slurmctld.log.1.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&bytes).unwrap();
        std::fs::write(&gzipped, gz.finish().unwrap()).unwrap();
        let expected = parse_controller_log(LOG).unwrap();
        assert_eq!(read_controller_log(&plain).unwrap(), expected);
        assert_eq!(read_controller_log(&gzipped).unwrap(), expected);
        // Windows line ends read alike.
        let crlf = dir.path().join("crlf.log");
        std::fs::write(&crlf, LOG.replace('\n', "\r\n")).unwrap();
        assert_eq!(read_controller_log(&crlf).unwrap(), expected);
    }

    #[test]
    fn a_files_bad_line_is_named_with_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slurmctld.log");
        std::fs::write(
            &path,
            format!("{LOG}[2026-11-28T00:09:38] sched: Allocate JobId=9 NodeList=n01\n"),
        )
        .unwrap();
        let error = read_controller_log(&path).unwrap_err().to_string();
        assert!(
            error.contains("slurmctld.log") && error.contains("line 21"),
            "{error}"
        );
        assert!(error.contains("LogTimeFormat"), "{error}");
        let missing = read_controller_log(&dir.path().join("none.log")).unwrap_err();
        assert!(missing.to_string().contains("none.log"), "{missing}");
    }

    #[test]
    fn a_nodes_drain_is_read_where_it_was_asked() {
        let log = parse_controller_log(LOG).unwrap();
        assert_eq!(log.node_states.len(), 1, "{:?}", log.node_states);
        let before = |t| log.closed_before("n05", at(t));
        assert_eq!(
            before("2026-11-28T00:10:30.000"),
            Some(at("2026-11-28T00:10:00.500"))
        );
        assert_eq!(
            before("2026-11-28T00:12:30.000"),
            Some(at("2026-11-28T00:12:00.250"))
        );
        // The accounting dates a closing to its whole second, before the log's line.
        assert_eq!(
            before("2026-11-28T00:12:00.000"),
            Some(at("2026-11-28T00:12:00.250"))
        );
        // Opened again since the last request: that request was another closing's.
        assert_eq!(before("2026-11-28T00:11:30.000"), None);
        assert_eq!(before("2026-11-28T00:09:00.000"), None);
        assert_eq!(
            log.closed_before("n06", at("2026-11-28T00:12:30.000")),
            None
        );
    }

    #[test]
    fn a_moment_logged_just_past_the_dumps_second_is_taken_where_the_coarse_clock_lags() {
        // 24.11: submitted at 22.872, started by the loop's pass at 23.004, which time() read
        // as 22 (the dump's Start); a moment 20 ms into the next second is not taken.
        let mut log = parse_controller_log(
            "[2026-11-30T06:46:22.872] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=4\n\
             [2026-11-30T06:46:23.004] sched: Allocate JobId=1 NodeList=n01 #CPUs=8 Partition=cpu\n\
             [2026-11-30T06:46:24.020] sched: Allocate JobId=2 NodeList=n02 #CPUs=8 Partition=cpu\n",
        )
        .unwrap();
        assert!(!log.on_whole_seconds, "two passes are too few to tell");
        log.on_whole_seconds = true;
        let second = |t: &str| Time::from_whole_secs(at(t).whole_secs());
        let mut timed = Timed::default();
        let mut task = Task::new(
            1,
            0,
            second("2026-11-30T06:46:22.000"),
            60_000_000,
            vec![1.0],
        );
        task.start = Some(second("2026-11-30T06:46:22.000"));
        log.time(1, &mut task, &mut timed);
        assert_eq!(task.submit, at("2026-11-30T06:46:22.872"));
        assert_eq!(task.start, Some(at("2026-11-30T06:46:23.004")));
        let mut late = Task::new(
            2,
            0,
            second("2026-11-30T06:46:20.000"),
            60_000_000,
            vec![1.0],
        );
        late.start = Some(second("2026-11-30T06:46:23.000"));
        log.time(2, &mut late, &mut timed);
        assert_eq!(late.start, Some(second("2026-11-30T06:46:23.000")));
        assert_eq!((timed.submissions, timed.starts), (1, 1));
    }

    #[test]
    fn reads_each_jobs_moments_and_the_main_schedulers_turns() {
        let log = parse_controller_log(LOG).unwrap();
        assert_eq!(log.jobs.len(), 3);
        let four = log.jobs[&4];
        assert_eq!(four.submitted, Some(at("2026-11-28T00:08:20.136")));
        assert_eq!(four.started, Some(at("2026-11-28T00:08:20.316")));
        assert_eq!(four.ended, Some(at("2026-11-28T00:09:30.358")));
        // Killed at its limit: it ends then, not when its completion is logged.
        assert_eq!(log.jobs[&6].ended, Some(at("2026-11-28T00:09:34.860")));
        assert_eq!(log.jobs[&5].started, Some(at("2026-11-28T00:09:34.906")));
        assert_eq!(log.jobs[&5].ended, None);
        // The main scheduler's starts mark the background loop's turns; the backfill's, its
        // cycles (two starts in one cycle's millisecond: one instant).
        assert_eq!(log.main_passes, vec![at("2026-11-28T00:09:34.906")]);
        assert_eq!(
            log.backfill_passes,
            vec![at("2026-11-28T00:08:20.316"), at("2026-11-28T00:08:20.317")]
        );
        // The controller's start, after which its background loop times its passes down the
        // whole queue.
        assert_eq!(log.controller_starts, vec![at("2026-11-28T00:08:18.221")]);
        // Its decay thread's timer, once per start (a reconfiguration's line is not another).
        assert_eq!(log.decay_starts, vec![at("2026-11-28T00:08:18.483")]);
        let second = Time::from_micros(at("2026-11-28T00:08:20.000").as_micros());
        assert_eq!(
            four.submitted.unwrap().as_micros() - second.as_micros(),
            136_000
        );
    }

    #[test]
    fn the_recomputations_are_in_phase_with_the_last_decay_thread() {
        let log = parse_controller_log(LOG).unwrap();
        let phase = Some((at("2026-11-28T00:08:18.483"), "the priority plugin's start"));
        assert_eq!(log.recomputations_phase(), phase);
        // Restarted with its saved state: no `No last decay`, the next plugin's line marks it.
        let restarted = format!("{LOG}[2026-11-28T02:00:00.100] Running as primary controller\n[2026-11-28T02:00:00.361] mcs: MCSParameters = (null). ondemand set.\n");
        let log = parse_controller_log(&restarted).unwrap();
        let phase = Some((at("2026-11-28T02:00:00.361"), "the priority plugin's start"));
        assert_eq!(log.recomputations_phase(), phase);
        // Neither line after the last start: the start itself.
        let bare = format!("{LOG}[2026-11-28T02:00:00.100] Running as primary controller\n");
        let log = parse_controller_log(&bare).unwrap();
        let phase = Some((at("2026-11-28T02:00:00.100"), "the controller's start"));
        assert_eq!(log.recomputations_phase(), phase);
        assert_eq!(ControllerLog::default().recomputations_phase(), None);
    }

    #[test]
    fn the_background_loop_begins_once_the_priority_plugin_has_started() {
        let log = parse_controller_log(LOG).unwrap();
        // The controller's line at 18.221, the loop's timers in the second of 18.483.
        assert_eq!(
            log.background_loop_starts(),
            [at("2026-11-28T00:08:18.483")]
        );
        let restarted = format!("{LOG}[2026-11-28T02:00:00.900] Running as primary controller\n[2026-11-28T02:00:01.161] mcs: MCSParameters = (null). ondemand set.\n");
        let log = parse_controller_log(&restarted).unwrap();
        let starts = [at("2026-11-28T00:08:18.483"), at("2026-11-28T02:00:01.161")];
        assert_eq!(log.background_loop_starts(), starts);
        // No plugin's line after the last start: the start itself.
        let bare = format!("{LOG}[2026-11-28T02:00:00.100] Running as primary controller\n");
        let log = parse_controller_log(&bare).unwrap();
        let starts = [at("2026-11-28T00:08:18.483"), at("2026-11-28T02:00:00.100")];
        assert_eq!(log.background_loop_starts(), starts);
        // A plugin's line a minute later is a reconfiguration's: the start itself.
        let late =
            format!("{bare}[2026-11-28T02:01:00.300] mcs: MCSParameters = (null). ondemand set.\n");
        let log = parse_controller_log(&late).unwrap();
        assert_eq!(log.background_loop_starts(), starts);
    }

    #[test]
    fn a_resubmitted_id_starts_its_job_afresh() {
        let text = format!(
            "{LOG}[2026-11-28T01:00:00.500] _slurm_rpc_submit_batch_job: JobId=4 InitPrio=1\n"
        );
        let log = parse_controller_log(&text).unwrap();
        let four = log.jobs[&4];
        assert_eq!(four.submitted, Some(at("2026-11-28T01:00:00.500")));
        assert_eq!((four.started, four.ended), (None, None));
    }

    #[test]
    fn a_line_it_takes_must_have_milliseconds_and_a_job_id() {
        let whole = "x\n[2026-11-28T00:08:20] sched: Allocate JobId=5 NodeList=n01\n";
        let error = parse_controller_log(whole).unwrap_err().to_string();
        assert!(
            error.starts_with("line 2: field `timestamp` is invalid"),
            "{error}"
        );
        assert!(error.contains("iso8601_ms"), "{error}");
        let no_id = "[2026-11-28T00:08:20.100] sched: Allocate JobId=x5 NodeList=n01\n";
        let error = parse_controller_log(no_id).unwrap_err().to_string();
        assert!(error.starts_with("line 1: field `JobId`"), "{error}");
        let no_stamp = "sched: Allocate JobId=5 NodeList=n01\n";
        let error = parse_controller_log(no_stamp).unwrap_err().to_string();
        assert!(error.contains("`timestamp` is not a leading"), "{error}");
        let bad_date = "[2026-13-28T00:08:20.100] sched: Allocate JobId=5\n";
        assert!(parse_controller_log(bad_date).is_err());
        // Lines of other events are never looked at, whatever they hold.
        assert_eq!(
            parse_controller_log("garbage\n[bad] error: x\n").unwrap(),
            ControllerLog::default()
        );
    }
}
