//! What a cluster replay reports: per-user and overall waits, slowdowns and completions,
//! utilisation and dominant shares over time, Jain's index and the live tree's work — the
//! document `--json` writes and the report draws.

use fairshare_core::model::Time;
use fairshare_core::rank::livetree::LiveTreeCounters;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// Users whose dominant share over time a replay keeps by default, and the report draws (one
/// palette colour each).
pub const TOP_USERS: usize = 8;

/// Below this runtime, slowdown is computed as if the task ran this long (bounded slowdown).
pub const SLOWDOWN_FLOOR_S: f64 = 10.0;

/// One user's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserResult {
    /// The user's name in the trace.
    pub id: String,
    /// Tasks that arrived within the horizon.
    pub tasks_submitted: u64,
    /// Tasks started within the horizon.
    pub tasks_started: u64,
    /// Tasks finished within the horizon.
    pub tasks_completed: u64,
    /// Tasks larger than the whole capacity (or than every machine), which can never start;
    /// they are left out of the waits.
    #[serde(default)]
    pub tasks_never_fit: u64,
    /// Tasks its owner cancelled while they waited (the log's cancellations): withdrawn from
    /// the queue then, and left out of the waits.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tasks_cancelled: u64,
    /// Mean wait of the user's tasks that can fit and were not cancelled, seconds (a task
    /// still waiting counts its wait so far).
    pub mean_wait_s: f64,
    /// Median (nearest rank) of those waits, seconds.
    #[serde(default)]
    pub median_wait_s: f64,
    /// Their 95th percentile (nearest rank), seconds.
    #[serde(default)]
    pub p95_wait_s: f64,
    /// Time-averaged dominant share.
    pub mean_dominant_share: f64,
    /// Mean bounded slowdown of the user's started tasks.
    #[serde(default)]
    pub mean_slowdown: f64,
    /// Median (nearest rank) of their bounded slowdowns.
    #[serde(default)]
    pub median_slowdown: f64,
    /// Their 95th percentile (nearest rank).
    #[serde(default)]
    pub p95_slowdown: f64,
    /// Mean response time (wait + run) of the user's started tasks, seconds.
    #[serde(default)]
    pub mean_response_s: f64,
    /// Time-averaged fraction of each resource held (empty for a user who never held any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mean_held: Vec<f64>,
    /// Seconds during which the user had a task waiting (one that can fit).
    #[serde(default)]
    pub waiting_s: f64,
    /// Seconds of those during which its dominant share was below its entitlement.
    #[serde(default)]
    pub below_share_s: f64,
    /// Its mean dominant share while it had a task waiting, over its entitlement (1: it held
    /// its share whenever it waited); `None` for a user that never waited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_while_waiting: Option<f64>,
    /// What a fairshare policy charged the user's jobs (its usage metric × seconds run until
    /// they finished or the run ended, undecayed); `None` under other policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charged: Option<f64>,
}

/// One account's results: its users' jobs and waits, and what it received against what it
/// is entitled to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccountResult {
    /// The account's name.
    pub name: String,
    /// Its parent account, `None` for the root.
    pub parent: Option<String>,
    /// Its fraction of the cluster by the share tree.
    pub entitlement: f64,
    /// Trace users charging it directly.
    pub users: usize,
    /// Their tasks submitted.
    pub tasks_submitted: u64,
    /// Their mean wait, seconds, weighted by tasks.
    pub mean_wait_s: f64,
    /// Their mean bounded slowdown, weighted by started tasks.
    #[serde(default)]
    pub mean_slowdown: f64,
    /// Their mean response time (wait + run), seconds, weighted by started tasks.
    #[serde(default)]
    pub mean_response_s: f64,
    /// Its users' (and sub-accounts') share of the first resource (processors) delivered to
    /// all users; compare with `entitlement`.
    pub delivered: f64,
    /// The same share counted from the start until each timeline sample (`null` before
    /// anything was delivered): how the account's deviation from its entitlement evolved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delivered_over_time: Vec<Option<f64>>,
}

/// A user's dominant share sampled over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShareSeries {
    /// The user's name.
    pub id: String,
    /// Dominant share at each sample time.
    pub values: Vec<f64>,
}

/// Samples of the cluster's state at regular times, for plots.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Timeline {
    /// Sample times, seconds from the first event.
    pub times_s: Vec<f64>,
    /// Per resource, the fraction in use at each sample time.
    pub utilization: Vec<Vec<f64>>,
    /// Dominant share over time of the users with the most tasks.
    pub dominant_share: Vec<ShareSeries>,
    /// Per user (by index), the processor-seconds received from the start until each sample,
    /// in fractions of the cluster's processors: what per-account shares over time are
    /// gathered from. Not written out.
    #[serde(skip)]
    pub received_by_user: Vec<Vec<f64>>,
}

/// The machine as it stood when a window cut from a site's life opened
/// ([`ClusterConfig::opens`](crate::cluster::ClusterConfig::opens)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opened {
    /// Jobs running then (every one the log started before it and had not ended).
    pub jobs_running: u64,
    /// Jobs waiting then (submitted before it, not started, not cancelled by then).
    pub jobs_waiting: u64,
    /// What the running jobs held of each resource, in the trace's units.
    pub held: Vec<f64>,
    /// The cluster's total of each resource, in the trace's units.
    pub capacity: Vec<f64>,
}

/// The results of replaying one trace under one policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyResult {
    /// The policy, as specified.
    pub policy: String,
    /// Tasks that arrived within the horizon.
    pub tasks_submitted: u64,
    /// Tasks started within the horizon.
    pub tasks_started: u64,
    /// Tasks finished within the horizon.
    pub tasks_completed: u64,
    /// Submitted, able to fit, not cancelled while waiting, but not finished within the
    /// horizon (submitted = completed + unfinished + never fit + cancelled).
    pub tasks_unfinished: u64,
    /// Submitted tasks larger than the whole capacity (or than every machine), which can never
    /// start: not unfinished, and left out of every wait and slowdown.
    pub tasks_never_fit: u64,
    /// Submitted tasks their owners cancelled while they waited, at the moment the log
    /// records: withdrawn then, not unfinished, and left out of every wait and slowdown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tasks_cancelled: u64,
    /// Tasks that arrive after the horizon (not submitted).
    pub tasks_beyond_horizon: u64,
    /// Submitted tasks whose recorded runtime exceeds their walltime request, each run only
    /// until that request (`--overrun kill`; 0 under `extend`).
    #[serde(default)]
    pub tasks_killed_at_walltime: u64,
    /// Mean wait over submitted tasks that can fit and were not cancelled, seconds (a task
    /// still waiting counts its wait so far).
    pub mean_wait_s: f64,
    /// 95th percentile of the waits of the submitted tasks that can fit, seconds.
    pub p95_wait_s: f64,
    /// The waits' 0th, 5th, …, 100th percentiles, seconds (the distribution the report draws).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wait_quantiles_s: Vec<f64>,
    /// The bounded slowdowns' 0th, 5th, …, 100th percentiles, of started tasks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slowdown_quantiles: Vec<f64>,
    /// Mean over users of each user's mean wait, seconds (SDRF paper, Figure 4).
    pub user_mean_wait_s: f64,
    /// Mean bounded slowdown of started tasks: max(1, (wait + run) / max(run, 10 s)).
    pub mean_slowdown: f64,
    /// Mean response time (wait + run) of started tasks, seconds.
    #[serde(default)]
    pub mean_response_s: f64,
    /// Seconds from the first event to the last finish.
    #[serde(default)]
    pub makespan_s: f64,
    /// Mean fraction of each resource in use, by resource name.
    pub utilization: IndexMap<String, f64>,
    /// Jain's fairness index of the time-averaged dominant shares of the users with a task
    /// that can fit (it follows the users' demands more than the policy: when every task
    /// finishes, each user's mean share is set by what it asked for).
    #[serde(alias = "jain_index")]
    pub jain_dominant_share: f64,
    /// Jain's index of 1 / each user's mean bounded slowdown, over the users with a started
    /// task: 1 when every user's tasks are slowed alike.
    #[serde(default)]
    pub jain_slowdown: f64,
    /// Jain's index of each user's service while it waited (its `service_while_waiting`,
    /// capped at 1), over the users that waited: 1 when each held at least its entitlement
    /// whenever it had a task waiting, or all fell short alike.
    #[serde(default)]
    pub jain_service: f64,
    /// Of all the seconds users spent with a task waiting, the fraction they spent below their
    /// entitlement (their dominant share under it).
    #[serde(default)]
    pub time_below_share: f64,
    /// Certificates of the live tree that fell due (SDRF only; docs/mechanisms.md, SDRF §7.8).
    pub livetree_events: Option<u64>,
    /// Live-tree events per 1,000 tasks started (SDRF only).
    pub livetree_events_per_1000_tasks: Option<f64>,
    /// All live-tree counters (SDRF only).
    pub livetree: Option<LiveTreeCounters>,
    /// Simulated span, seconds from the first event to the end of the run.
    pub simulated_s: f64,
    /// Engine events (arrivals and finishes) processed.
    pub events: u64,
    /// Per user, in order of first appearance.
    pub users: Vec<UserResult>,
    /// Regular samples for plots.
    pub timeline: Timeline,
    /// Submitted tasks that name a node property no machine declares; such a property is not
    /// enforced.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tasks_with_unknown_properties: u64,
    /// Jobs a fairshare policy's metric could not price on any machine (a property or size the
    /// engine does not enforce), charged Maui's system-wide PE instead.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tasks_priced_system_wide: u64,
    /// Jobs the log started before the window opened ([`ClusterConfig::opens`]), started as
    /// it started them and left out of every count and wait.
    ///
    /// [`ClusterConfig::opens`]: crate::cluster::ClusterConfig::opens
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tasks_pinned: u64,
    /// Of those, the ones the nodes the log names could not hold in the replay (a node
    /// unknown to the configuration, or taken): placed where they fit then, or left to wait.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tasks_pinned_elsewhere: u64,
    /// Jobs a site's limit held at least once (passed over while it would have taken its group
    /// past a cap), by the first limit that held each.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub held_by_limits: IndexMap<String, u64>,
    /// The machine as it stood when the window opened, when the run opens one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened: Option<Opened>,
    /// Per account, root first, when the replay had a share file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accounts: Vec<AccountResult>,
    /// Every job that finished, by start, when the run was asked to record them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<JobRecord>,
}

/// Whether a count is zero (such counts are left out of the JSON).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One finished job: when it came, ran and ended, on which nodes, and its first reservation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    /// Its id in the trace.
    pub id: u64,
    /// Its user's index.
    pub user: u32,
    /// When it was submitted.
    pub submit: Time,
    /// When it started.
    pub start: Time,
    /// When it ended.
    pub end: Time,
    /// The nodes it held (indices in catalogue order; 0 for a pool), each with what it held
    /// there as fractions of the cluster's total of each resource.
    pub placed: Vec<(usize, Vec<f64>)>,
    /// The first reservation it was given, if backfilling gave it one.
    pub first_reserved: Option<Time>,
}
