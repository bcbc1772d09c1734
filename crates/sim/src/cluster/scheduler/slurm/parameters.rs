//! The settings of a `slurm.conf` (or of `scontrol show config`) that change which job starts
//! when, read into [`SlurmParameters`], and the release the site ran ([`Release`]): what the
//! model of Slurm's schedulers runs with, apart from how it runs.

use super::LoopTurns;
use fairshare_core::error::Invalid;
use fairshare_core::model::{slurm_conf_duration, slurm_release, Time, TresWeights};
use fairshare_core::priority::multifactor::{JobPriority, Tres};
use std::sync::Arc;

/// The settings of a `slurm.conf` that change which job starts when, with Slurm 22.05's
/// defaults: the `SchedulerParameters` and the multifactor job priority.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmParameters {
    /// Whether the backfill scheduler runs (`SchedulerType=sched/backfill`, the default);
    /// `sched/builtin` runs the main scheduler alone.
    pub backfill: bool,
    /// `bf_interval`: seconds between backfill cycles (default 30).
    pub bf_interval_s: u64,
    /// Where the backfill's cycles fall: this many seconds past each multiple of
    /// `bf_interval` from the epoch (Slurm's timer runs from `slurmctld`'s start, which the
    /// starts of the jobs a dump says the backfill started reveal); `None`: on the multiples
    /// counted from the run's first submission.
    pub bf_phase_s: Option<u64>,
    /// `bf_window`, in seconds: how far ahead the backfill plans (default 1440 minutes); a job
    /// that cannot start sooner is not planned.
    pub bf_window_s: u64,
    /// `bf_max_job_test`: the most jobs one backfill cycle considers (default 500).
    pub bf_max_job_test: u32,
    /// `bf_max_job_user`: the most jobs of one user a backfill cycle considers (0: no limit).
    pub bf_max_job_user: u32,
    /// `bf_resolution`, in seconds: a backfill plan's start and end are rounded down to a
    /// multiple of it, and a plan holds at least that long (default 60).
    pub bf_resolution_s: u64,
    /// `default_queue_depth`: the most jobs the main scheduler considers after an event
    /// (default 100).
    pub default_queue_depth: u32,
    /// `batch_sched_delay`, in seconds: submissions and ends ask `slurmctld`'s background
    /// loop for the main scheduler, which it runs at most this often, at its next second
    /// (default 3; 0: at once, at every event).
    pub batch_sched_delay_s: u64,
    /// How long a job's nodes stay completing after its end, in microseconds, until they
    /// answer `slurmctld`'s terminate request (default 5 ms, `TERMINATE_ANSWERED_US`): neither
    /// scheduler starts a job on them before.
    pub completing_us: u64,
    /// How long the nodes of a job killed at its limit or cancelled while it ran stay
    /// completing, in microseconds, until the last reports its epilog complete (default
    /// 38 ms, `KILLED_EPILOG_US`).
    pub killed_completing_us: u64,
    /// `sched_interval`, in seconds: the background loop runs the main scheduler down the
    /// whole queue this often, whatever was asked (default 60).
    pub sched_interval_s: u64,
    /// When the controller's background loop began, each time the controller started, read
    /// from its log (`ControllerLog::background_loop_starts`): the `sched_interval` timer
    /// starts then; with none known no such pass is run.
    pub loop_starts: Vec<Time>,
    /// The seed of the background loop's turns within each second, when they are drawn (see
    /// the `timing` module); `None`: a submission is served at the next second, or by a
    /// pass already due in its own.
    pub turn_seed: Option<u64>,
    /// When the background loop takes its turns, read from `slurmctld`'s log (see
    /// [`LoopTurns`]); `None`: on the whole seconds, events recorded in a second coming after
    /// its turn.
    pub loop_turns: Option<Arc<LoopTurns>>,
    /// When the backfill's cycles ran, read from `slurmctld`'s log (its starts; see
    /// [`LoopTurns`], `bf_interval` apart): they fall there and between, not on the grid of
    /// `bf_interval` and `bf_phase_s`; `None`: on the grid.
    pub bf_cycles: Option<Arc<LoopTurns>>,
    /// The multifactor job priority's weights and periods.
    pub priority: JobPriority,
    /// The partitions whose jobs the Slurm adapter ranks (its `partitions`; empty, the
    /// default: all), when the policy reaches Slurm through it.
    pub adapter_partitions: Vec<String>,
    /// `OverTimeLimit`, in seconds: how long past its time limit a job may run before it is
    /// killed (0 by default; `None`: `UNLIMITED`, never).
    pub over_time_s: Option<u64>,
    /// The Slurm release whose scheduling is followed where it changed ([`Release`]).
    pub release: Release,
}

impl Default for SlurmParameters {
    fn default() -> SlurmParameters {
        SlurmParameters {
            backfill: true,
            bf_interval_s: 30,
            bf_phase_s: None,
            bf_window_s: 86_400,
            bf_max_job_test: 500,
            bf_max_job_user: 0,
            bf_resolution_s: 60,
            default_queue_depth: 100,
            batch_sched_delay_s: 3,
            completing_us: TERMINATE_ANSWERED_US,
            killed_completing_us: KILLED_EPILOG_US,
            sched_interval_s: 60,
            loop_starts: Vec::new(),
            turn_seed: None,
            loop_turns: None,
            bf_cycles: None,
            priority: JobPriority::default(),
            adapter_partitions: Vec::new(),
            over_time_s: Some(0),
            release: Release::default(),
        }
    }
}

impl SlurmParameters {
    /// The parameters of a Slurm configuration, given as a lookup of its settings by name:
    /// `SchedulerType`, `SchedulerParameters` and the multifactor priority's fairshare, age,
    /// size, partition, QOS, association and TRES weights, `PriorityMaxAge`,
    /// `PriorityFavorSmall` and `PriorityCalcPeriod` are read; and `OverTimeLimit`; settings
    /// that change outcomes but are not modelled (TRES it does not count, flags it does not
    /// follow, `SchedulerParameters` this model has no use for) are returned as notes, one
    /// sentence each.
    pub fn from_conf<'a>(
        setting: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<(SlurmParameters, Vec<String>), Invalid> {
        let mut notes = Vec::new();
        let text = setting("SchedulerParameters").unwrap_or_default();
        let (mut parameters, unmodelled) = SlurmParameters::from_scheduler_parameters(text)?;
        if !unmodelled.is_empty() {
            notes.push(format!(
                "SchedulerParameters not modelled, so left out: {}",
                unmodelled.join(", ")
            ));
        }
        match setting("SchedulerType").unwrap_or("sched/backfill") {
            "sched/backfill" => {}
            "sched/builtin" => parameters.backfill = false,
            other => {
                return Err(format!(
                    "SchedulerType {other:?} is not modelled: sched/backfill or sched/builtin"
                )
                .into())
            }
        }
        let (priority, unmodelled) = job_priority(&setting)?;
        parameters.priority = priority;
        if !unmodelled.is_empty() {
            notes.push(format!(
                "priority terms not modelled, so left out: {}",
                unmodelled.join(", ")
            ));
        }
        if parameters.priority.calc_period_s < 1.0 && parameters.priority.orders_jobs() {
            notes.push(format!(
                "PriorityCalcPeriod of {} s is taken as 1 s: the job priorities are recomputed every second",
                parameters.priority.calc_period_s
            ));
        }
        parameters.over_time_s = over_time(setting("OverTimeLimit"))?;
        parameters.release = Release::of(setting("SLURM_VERSION"));
        notes.extend(parameters.release.unfollowed());
        Ok((parameters, notes))
    }

    /// The parameters of a `SchedulerParameters` value (`bf_interval=60,bf_continue`): the
    /// ones modelled are read, the others left to Slurm's defaults and returned by name so
    /// that a caller can say they were not modelled.
    fn from_scheduler_parameters(text: &str) -> Result<(SlurmParameters, Vec<String>), Invalid> {
        let mut parameters = SlurmParameters::default();
        let mut unmodelled = Vec::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (key, value) = item.split_once('=').unwrap_or((item, ""));
            let number = || -> Result<u32, Invalid> {
                value.parse::<u32>().map_err(|_| {
                    Invalid::from(format!(
                        "SchedulerParameters {key} takes a whole number, found {value:?}"
                    ))
                })
            };
            match key {
                "bf_interval" => match number()? {
                    0 => return Err("SchedulerParameters bf_interval must be at least 1".into()),
                    n => parameters.bf_interval_s = u64::from(n),
                },
                "bf_window" => parameters.bf_window_s = u64::from(number()?.max(1)) * 60,
                "bf_max_job_test" => parameters.bf_max_job_test = number()?.max(1),
                "bf_max_job_user" => parameters.bf_max_job_user = number()?,
                // Slurm falls back to its default outside 1..=3600.
                "bf_resolution" => {
                    let n = u64::from(number()?);
                    parameters.bf_resolution_s = if (1..=3600).contains(&n) { n } else { 60 };
                }
                "default_queue_depth" => parameters.default_queue_depth = number()?.max(1),
                "batch_sched_delay" => parameters.batch_sched_delay_s = u64::from(number()?),
                // -1 turns the main scheduler off, which is not modelled.
                "sched_interval" if value.trim() != "-1" => {
                    parameters.sched_interval_s = u64::from(number()?.max(1))
                }
                _ => unmodelled.push(key.to_owned()),
            }
        }
        Ok((parameters, unmodelled))
    }
}

/// The Slurm release whose schedulers the model follows where they changed which job starts
/// when: read from `SLURM_VERSION`, taken as 22.05 where it is not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Release(Option<(u32, u32)>);

impl Release {
    /// The release of the Slurm whose `scontrol show config` printed `version`
    /// (`SLURM_VERSION`, `24.11.5`); 22.05's behaviour for `None` or a text that is not a
    /// version.
    pub fn of(version: Option<&str>) -> Release {
        Release(version.and_then(slurm_release))
    }

    /// Whether the release is `first` or later.
    fn from(&self, first: (u32, u32)) -> bool {
        self.0.is_some_and(|release| release >= first)
    }

    /// Whether the background loop wakes on each whole second (`cond_timedwait` to the next
    /// second, from 23.11) rather than a second after its work ends (22.05 and 23.02): where
    /// no log shows its turns, they fall on the whole seconds, the clock reading the one
    /// before when the loop wakes. Its next wake being that reading plus one,
    /// the loop runs again at once until the clock reads the turn's own second: each turn
    /// reads two seconds, and a pass runs at the first that is due.
    pub fn loop_on_whole_seconds(&self) -> bool {
        self.from((23, 11))
    }

    /// Whether `slurmctld` takes the nodes' answers to a terminate request on a whole second
    /// (24.11: a thread wakes for them at `time(NULL) + 2`; of 451 answers of a `debug2` log,
    /// 421 were logged at .000 s and the rest within 2 ms, 1 or 2 s apart) rather than as
    /// they come (22.05: 5 ms after the end); the model takes the next whole second. The
    /// releases between are not known and taken as 22.05's.
    pub fn answers_on_whole_seconds(&self) -> bool {
        self.from((24, 11))
    }

    /// Whether the backfill rounds a plan's end up to `bf_resolution` (24.11's
    /// `_set_slot_time`) rather than down.
    pub fn plan_ends_rounded_up(&self) -> bool {
        self.from((24, 11))
    }

    /// How the model times this release's schedulers, for a reader.
    pub fn followed(&self) -> String {
        let turns = match self.loop_on_whole_seconds() {
            true => "the background loop waking on each whole second where no log shows its turns (23.11 on)",
            false => "the background loop turning a second after its work (22.05)",
        };
        let ends = match self.plan_ends_rounded_up() {
            true => "backfill plans' ends rounded up to bf_resolution (24.11 on)",
            false => "backfill plans' ends rounded down to bf_resolution (22.05)",
        };
        let answers = match self.answers_on_whole_seconds() {
            true => "a job's end freeing its nodes at the next whole second (24.11 on)",
            false => "a job's end freeing its nodes 5 ms after it (22.05)",
        };
        format!("{turns}, {answers}, {ends}")
    }

    /// What this release's schedulers do that the model does not follow, one sentence each:
    /// the changes from 22.05 to 24.11 that it leaves out (none for 22.05).
    pub fn unfollowed(&self) -> Vec<String> {
        let mut left = Vec::new();
        if self.from((23, 2)) {
            left.push("the main scheduler's changes since 22.05 (rebooting nodes no longer offered, licenses tested in the node selection) are not followed".to_owned());
        }
        if self.loop_on_whole_seconds() {
            left.push("the background loop's clock (the kernel's coarse clock) reads the second before when the loop wakes on a whole second, and the loop runs again until it reads its own (23.11 on); the model reads each turn both ways, but not a wake late enough to read the new second at once, nor a turn whose work outlasts the tick, so that a pass of Slurm's now and then comes a second from the model's (in four 24.11 logs, where reading both ways puts a pass 2 s after the one before, 12 came 2 s on and 3 came 3 s on)".to_owned());
        }
        if self.answers_on_whole_seconds() {
            left.push("24.11 takes the nodes' answer to a job's end when a thread wakes for it, every one or two seconds as the coarse clock reads; the model frees the nodes at the next whole second, so a job can start there a second before Slurm starts it".to_owned());
        }
        if self.from((24, 11)) {
            left.push("24.11's backfill changes other than the plans' rounded ends (the window's end checked within a cycle, a reservation's overlap tested at the planned start, planned nodes, magnetic slots) are not followed".to_owned());
            left.push("a job asking for several QOS (24.11) is queued once per QOS in Slurm; the model queues it once, at its recorded QOS".to_owned());
        }
        left
    }
}

/// Seconds between `slurmctld`'s checks of running jobs' time limits (`PERIODIC_TIMEOUT`): a
/// job past its limit is killed at the first check after it.
pub(super) const TIME_LIMIT_CHECK_S: u64 = 30;

/// How long a job's nodes stay completing after its end by default, in microseconds, until
/// they answer the terminate request: 5 ms, the median on a 16-node Slurm on one host
/// (2026-11-28, 278 ends, `debug2` log; p90 7 ms, at most 30 ms).
const TERMINATE_ANSWERED_US: u64 = 5_000;

/// How long the nodes of a job killed at its limit stay completing by default, in
/// microseconds, until the last reports its epilog complete: 38 ms, the median on the same
/// Slurm (22 kills, 27–128 ms).
const KILLED_EPILOG_US: u64 = 38_000;

/// `OverTimeLimit` in seconds: minutes in a `slurm.conf` (`5`), with a unit in `scontrol show
/// config` (`5 min`); `UNLIMITED` is `None`; unset is 0.
fn over_time(value: Option<&str>) -> Result<Option<u64>, Invalid> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(Some(0));
    };
    let minutes = value.split_whitespace().next().unwrap_or_default();
    if minutes.eq_ignore_ascii_case("unlimited") || minutes.eq_ignore_ascii_case("infinite") {
        return Ok(None);
    }
    match minutes.parse::<u32>() {
        Ok(m) => Ok(Some(u64::from(m) * 60)),
        Err(_) if minutes.eq_ignore_ascii_case("none") => Ok(Some(0)),
        Err(_) => Err(format!("OverTimeLimit takes minutes or UNLIMITED, found {value:?}").into()),
    }
}

/// `PriorityWeightTRES` (`CPU=1000,Mem=2000,GRES/gpu=3000`, names in any case, units as
/// Slurm reads them: [`TresWeights`]): the weights of the TRES a replay counts, and the
/// names of the others it weighs (left out).
fn tres_weights(value: &str) -> Result<(Tres, Vec<String>), Invalid> {
    let read: TresWeights = value
        .parse()
        .map_err(|e: Invalid| format!("PriorityWeightTRES: {}", e.0))?;
    let mut weights = Tres::default();
    let mut others = Vec::new();
    for (name, weight) in read.iter() {
        match name {
            "cpu" => weights.cpu = weight,
            "mem" => weights.mem = weight,
            "node" => weights.node = weight,
            "gres/gpu" => weights.gpu = weight,
            _ if weight == 0.0 => {}
            other => others.push(other.to_owned()),
        }
    }
    Ok((weights, others))
}

/// The multifactor job priority of a Slurm configuration, and the non-zero weights it leaves
/// out. `scontrol show config` writes `(null)` for an unset weight, and durations as `7-00:00:00`
/// or `00:01:00`; `slurm.conf` may write `PriorityCalcPeriod` as minutes, and Slurm rounds its
/// durations up to whole minutes.
fn job_priority<'a>(
    setting: &impl Fn(&str) -> Option<&'a str>,
) -> Result<(JobPriority, Vec<String>), Invalid> {
    let value = |key: &str| {
        setting(key)
            .map(str::trim)
            .filter(|v| !v.is_empty() && *v != "(null)")
    };
    let weight = |key: &str| -> Result<Option<f64>, Invalid> {
        value(key)
            .map(|v| match v.parse::<u32>() {
                Ok(w) => Ok(f64::from(w)),
                Err(_) => Err(format!("{key} takes a whole number, found {v:?}").into()),
            })
            .transpose()
    };
    let duration = |key: &str| -> Result<Option<f64>, Invalid> {
        value(key)
            .map(|v| match slurm_conf_duration(v) {
                Ok(Some(s)) => Ok(s as f64),
                _ => Err(format!(
                    "{key} takes a Slurm duration such as 7-0 or 00:05:00, found {v:?}"
                )
                .into()),
            })
            .transpose()
    };
    let (tres_weights, unknown_tres) =
        tres_weights(value("PriorityWeightTRES").unwrap_or_default())?;
    let mut priority = JobPriority {
        fairshare_weight: weight("PriorityWeightFairshare")?.unwrap_or(0.0),
        age_weight: weight("PriorityWeightAge")?.unwrap_or(0.0),
        size_weight: weight("PriorityWeightJobSize")?.unwrap_or(0.0),
        partition_weight: weight("PriorityWeightPartition")?.unwrap_or(0.0),
        qos_weight: weight("PriorityWeightQOS")?.unwrap_or(0.0),
        assoc_weight: weight("PriorityWeightAssoc")?.unwrap_or(0.0),
        tres_weights,
        ..JobPriority::default()
    };
    priority.max_age_s = duration("PriorityMaxAge")?.unwrap_or(priority.max_age_s);
    priority.calc_period_s = duration("PriorityCalcPeriod")?.unwrap_or(priority.calc_period_s);
    priority.favor_small = match value("PriorityFavorSmall") {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("yes") => true,
        Some(v) if v.eq_ignore_ascii_case("no") => false,
        Some(v) => return Err(format!("PriorityFavorSmall takes YES or NO, found {v:?}").into()),
    };
    let flags = value("PriorityFlags").unwrap_or_default();
    let mut unmodelled = Vec::new();
    let flag = |name: &str| flags.split(',').any(|f| f.trim() == name);
    if flag("SMALL_RELATIVE_TO_TIME") && priority.size_weight != 0.0 {
        unmodelled.push(
            "PriorityFlags=SMALL_RELATIVE_TO_TIME (the size factor is computed without it)"
                .to_owned(),
        );
    }
    if flag("NO_NORMAL_QOS") && priority.qos_weight != 0.0 {
        unmodelled.push(
            "PriorityFlags=NO_NORMAL_QOS (the QOS factor is each QOS's priority over the highest)"
                .to_owned(),
        );
    }
    if flag("NO_NORMAL_TRES") && priority.tres_weights != Tres::default() {
        unmodelled.push(
            "PriorityFlags=NO_NORMAL_TRES (the TRES factors are each TRES over its partition's)"
                .to_owned(),
        );
    }
    if !unknown_tres.is_empty() {
        unmodelled.push(format!(
            "PriorityWeightTRES of {} (TRES a replay does not count)",
            unknown_tres.join(", ")
        ));
    }
    if flag("NO_NORMAL_ASSOC") && priority.assoc_weight != 0.0 {
        unmodelled.push(
            "PriorityFlags=NO_NORMAL_ASSOC (the association factor is each association's priority over the highest)"
                .to_owned(),
        );
    }
    Ok((priority, unmodelled))
}

#[cfg(test)]
mod tests {
    use super::super::{Scheduler, Slurm};
    use super::*;

    fn from(settings: &[(&str, &str)]) -> Result<(SlurmParameters, Vec<String>), Invalid> {
        SlurmParameters::from_conf(|key| {
            let found = settings.iter().find(|(k, _)| k.eq_ignore_ascii_case(key));
            found.map(|(_, v)| *v)
        })
    }

    #[test]
    fn a_main_scheduler_turned_off_is_named_not_modelled() {
        let (parameters, notes) = from(&[("SchedulerParameters", "sched_interval=-1")]).unwrap();
        assert_eq!(parameters.sched_interval_s, 60);
        assert_eq!(
            notes,
            ["SchedulerParameters not modelled, so left out: sched_interval"]
        );
        assert!(from(&[("SchedulerParameters", "sched_interval=soon")]).is_err());
    }

    #[test]
    fn a_site_configuration_sets_what_is_modelled_and_names_what_is_not() {
        let (parameters, notes) = from(&[
            ("SchedulerParameters", "bf_interval=60,bf_window=2880,bf_max_job_test=1000,bf_max_job_user=20,bf_resolution=120,default_queue_depth=50,batch_sched_delay=5,sched_interval=30,bf_continue"),
            ("PriorityWeightAge", "1000"),
            ("PriorityWeightFairshare", "10000"),
            ("PriorityWeightJobSize", "500"),
            ("PriorityMaxAge", "1-00:00:00"),
            ("PriorityFavorSmall", "Yes"),
            ("PriorityCalcPeriod", "00:01:00"),
            ("PriorityWeightQOS", "2000"),
            ("PriorityWeightPartition", "300"),
            ("PriorityWeightTRES", "CPU=1000,Mem=2000,billing=5,license/x=0"),
            ("OverTimeLimit", "5"),
            ("SLURM_VERSION", "24.11.5"),
        ])
        .unwrap();
        let expected = SlurmParameters {
            backfill: true,
            bf_interval_s: 60,
            bf_phase_s: None,
            bf_window_s: 2880 * 60,
            bf_max_job_test: 1000,
            bf_max_job_user: 20,
            bf_resolution_s: 120,
            default_queue_depth: 50,
            batch_sched_delay_s: 5,
            completing_us: TERMINATE_ANSWERED_US,
            killed_completing_us: KILLED_EPILOG_US,
            sched_interval_s: 30,
            loop_starts: Vec::new(),
            turn_seed: None,
            loop_turns: None,
            bf_cycles: None,
            over_time_s: Some(300),
            release: Release::of(Some("24.11.5")),
            adapter_partitions: Vec::new(),
            priority: JobPriority {
                fairshare_weight: 10_000.0,
                age_weight: 1000.0,
                max_age_s: 86_400.0,
                size_weight: 500.0,
                favor_small: true,
                partition_weight: 300.0,
                qos_weight: 2000.0,
                tres_weights: Tres {
                    cpu: 1000.0,
                    mem: 2000.0,
                    ..Tres::default()
                },
                calc_period_s: 60.0,
                ..JobPriority::default()
            },
        };
        assert_eq!(parameters, expected);
        assert!(parameters.release.loop_on_whole_seconds());
        assert!(parameters.release.plan_ends_rounded_up());
        assert_eq!(notes.len(), 7, "{notes:?}");
        assert_eq!(
            notes[..2],
            [
                "SchedulerParameters not modelled, so left out: bf_continue",
                "priority terms not modelled, so left out: PriorityWeightTRES of billing (TRES a replay does not count)",
            ]
        );
        assert_eq!(notes[2..], Release::of(Some("24.11.5")).unfollowed());
        assert_eq!(parameters.over_time_s, Some(300));
        let grace = |parameters| Slurm { parameters }.timing(Time::ZERO).kill_grace_us();
        assert_eq!(grace(parameters), Some(330_000_000));
        let (unlimited, _) = from(&[("OverTimeLimit", "UNLIMITED")]).unwrap();
        assert_eq!(grace(unlimited), None);
        assert_eq!(over_time(Some("5 min")), Ok(Some(300)));
        // 22.05, and a configuration that names no version, take 22.05's scheduling.
        for version in [Some("22.05.8"), None, Some("twenty-two")] {
            let release = Release::of(version);
            assert!(!release.loop_on_whole_seconds() && !release.plan_ends_rounded_up());
            assert!(release.unfollowed().is_empty(), "{version:?}");
        }
        let between = Release::of(Some("23.11.10"));
        assert!(between.loop_on_whole_seconds() && !between.plan_ends_rounded_up());
        assert!(!between.answers_on_whole_seconds());
        assert!(Release::of(Some("24.11.5")).answers_on_whole_seconds());
        // slurm.conf writes PriorityCalcPeriod in minutes.
        let (parameters, _) = from(&[("PriorityCalcPeriod", "2")]).unwrap();
        assert_eq!(parameters.priority.calc_period_s, 120.0);
        // Slurm reads its durations in whole minutes, rounded up: 30 s is a minute.
        let (parameters, _) = from(&[("PriorityCalcPeriod", "00:00:30")]).unwrap();
        assert_eq!(parameters.priority.calc_period_s, 60.0);
        let (_, notes) = from(&[("PriorityCalcPeriod", "0"), ("PriorityWeightAge", "1")]).unwrap();
        assert_eq!(
            notes,
            ["PriorityCalcPeriod of 0 s is taken as 1 s: the job priorities are recomputed every second"]
        );
        for bad in [
            ("PriorityWeightAge", "-3"),
            ("OverTimeLimit", "soon"),
            ("PriorityMaxAge", "a week"),
            ("PriorityFavorSmall", "maybe"),
            ("PriorityWeightTRES", "CPU=lots"),
            ("PriorityWeightTRES", "Mem=1Q"),
        ] {
            let refused = from(&[bad]).unwrap_err().to_string();
            assert!(refused.starts_with(bad.0), "{refused}");
        }
        // Units as in TRESBillingWeights, one reader for both: 2G of memory is 2/1024 per MB.
        let (parameters, _) = from(&[("PriorityWeightTRES", "Mem=2G,GRES/GPU=3")]).unwrap();
        let weights = parameters.priority.tres_weights;
        assert_eq!((weights.mem, weights.gpu), (2.0 / 1024.0, 3.0));
    }

    #[test]
    fn scontrol_show_config_defaults_say_nothing_and_builtin_turns_backfill_off() {
        let shown = [
            ("SchedulerType", "sched/builtin"),
            ("PriorityWeightAge", "0"),
            ("OverTimeLimit", "0 min"),
        ];
        let (parameters, notes) = from(&shown).unwrap();
        assert!(!parameters.backfill);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(from(&[]).unwrap(), (SlurmParameters::default(), Vec::new()));
        assert!(from(&[("SchedulerParameters", "bf_interval=0")]).is_err());
    }
}
