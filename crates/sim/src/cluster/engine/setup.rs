//! The engine built from a run's configuration: the policy's ranker, the partitions as the run
//! applies them, and the scheduler's planning and timing.

use super::factors::FactorScope;
use super::order::JobOrder;
use super::reservations::Resolution;
use super::{Engine, Held, Meter, Outages, Recorder, Smallest, Space};
use crate::cluster::scheduler::{PassKind, Reservations};
use crate::cluster::{Capacity, ClusterConfig, SimError};
use fairshare_core::model::partition_property;
use fairshare_core::policy::PolicyKind;
use fairshare_core::priority::Policy;
use fairshare_core::rank::{Book, Ranker, Share};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet, VecDeque};
use std::sync::Arc;

/// The ranker of `config`'s policy over `resources` resources, for its users with its shares
/// (`None`: equal) in its account tree.
///
/// Weighted DRF is refused without shares: with equal weights it would silently be DRF.
fn ranker(config: &ClusterConfig, resources: usize) -> Result<Box<dyn Ranker>, SimError> {
    let policy = &config.policy;
    let users = config.users.len();
    let refuse = |problem: &str| SimError::Policy {
        policy: policy.name.clone(),
        problem: problem.into(),
    };
    if policy.kind == PolicyKind::Stateless(Policy::WeightedDrf) && config.shares.is_none() {
        return Err(refuse(
            "without shares every weight is equal, so weighted DRF would be DRF; give --shares or use drf",
        ));
    }
    let equal = Share::equal(users);
    let shares = config.shares.as_deref().unwrap_or(&equal);
    if shares.len() != users {
        return Err(refuse(&format!(
            "{} shares for {users} users",
            shares.len()
        )));
    }
    if let PolicyKind::Fairshare(settings) = policy.kind {
        settings
            .metric
            .check_resources(&config.resources)
            .map_err(|problem| refuse(&problem))?;
    }
    if let Some(accounts) = config.accounts.as_ref().filter(|a| a.clients() != users) {
        return Err(refuse(&format!(
            "the account tree places {} users, the run has {users}",
            accounts.clients()
        )));
    }
    let ranker = policy.ranker(resources, shares, config.accounts.as_ref());
    ranker
        .ok_or_else(|| refuse("ranks processes, not users; the process engine (simulate) runs it"))
}

/// A partition of the trace, as the run applies it.
#[derive(Debug, Clone)]
pub(super) struct PartitionRule {
    /// The node property its jobs require (`partition:NAME`), when some node of the run
    /// declares a partition; none when no node declares any (jobs then run anywhere).
    pub(super) property: Option<String>,
    /// Whether some node declares its property, so that its jobs are held to its nodes.
    pub(super) declared: bool,
    /// Its `PriorityTier`.
    pub(super) tier: i32,
    /// Its partition factor.
    pub(super) factor: f64,
    /// Whether its jobs hold their nodes whole.
    pub(super) exclusive: bool,
    /// Its nodes' capacity (normalised) and count, which a job's TRES factors are fractions
    /// of (every node's when its property is not enforced).
    pub(super) extent: (Vec<f64>, f64),
}

/// By the trace's partition index, each partition of `config` as it applies on `space`.
fn partition_rules(config: &ClusterConfig, space: &mut Space) -> Vec<PartitionRule> {
    let mut rules: Vec<PartitionRule> = (config.partitions.iter())
        .map(|partition| {
            let property = partition_property(&partition.name);
            let declared = space.declares(&property);
            PartitionRule {
                extent: space.extent(Some(property.as_str()).filter(|_| declared)),
                declared,
                property: Some(property),
                tier: partition.tier,
                factor: partition.factor,
                exclusive: partition.exclusive,
            }
        })
        .collect();
    if !rules.iter().any(|rule| rule.declared) {
        rules.iter_mut().for_each(|rule| rule.property = None);
    }
    rules
}

/// Each user's entitlement: by `config`'s shares, else 1/n each.
fn entitlements(config: &ClusterConfig) -> Vec<f64> {
    let equal = Share::equal(config.users.len());
    let shares = config.shares.as_deref().unwrap_or(&equal);
    shares.iter().map(|s| s.entitlement).collect()
}

impl Engine {
    /// The engine of `config`, before any event.
    pub(super) fn new(config: &ClusterConfig) -> Result<Engine, SimError> {
        let m = config.resources.len();
        let users = config.users.len();
        let reservations = config.scheduler.reservations();
        let mut space = Space::new(
            &config.capacity,
            &config.resources,
            Arc::clone(&config.placement),
            reservations != Reservations::None,
        )?;
        let partitions = partition_rules(config, &mut space);
        let cluster_extent = space.extent(None);
        let planning = config.scheduler.planning();
        // A pool has no nodes to plan: its reservations hold what their jobs ask.
        let whole_nodes = planning.whole_nodes && matches!(config.capacity, Capacity::Machines(_));
        let planner = (whole_nodes && reservations == Reservations::ForThePass)
            .then(|| config.scheduler.planner(config.capacity.nodes().len()))
            .flatten();
        let serving = (config.scheduler).serving(&config.policy, ranker(config, m)?, (users, m));
        let limits = Held::new(&config.limits);
        let factor_scope = (serving.job_factors.as_ref())
            .map(|model| FactorScope::of(model.partitions(), &config.partitions, &space))
            .unwrap_or_default();
        let mut engine = Engine {
            queues: vec![VecDeque::new(); users],
            running: Vec::new(),
            free_slots: Vec::new(),
            finishes: BinaryHeap::new(),
            limit_ends: BinaryHeap::new(),
            space,
            book: Book::new(serving.ranker, users, m),
            meter: match config.policy.kind {
                PolicyKind::Fairshare(settings) => {
                    Some(Meter::new(settings.metric, &config.capacity, users))
                }
                _ => None,
            },
            recorder: Recorder::new(
                &entitlements(config),
                &config.resources,
                config.opens.unwrap_or(config.origin).max(config.origin),
                config.sample_every,
            ),
            now: config.origin,
            seq: 0,
            fault: None,
            reservations,
            cursor: vec![0; users],
            moved: Vec::new(),
            unreserved: 0,
            reserving: Vec::new(),
            smallest: Smallest::default(),
            freed: Vec::new(),
            unknown_properties: 0,
            lowest_tier: partitions.iter().map(|p| p.tier).min().unwrap_or(0),
            partitions,
            qos_factors: config.qos_factors.clone(),
            assoc_factors: config.assoc_factors.clone(),
            cluster_extent,
            wakeups: BinaryHeap::new(),
            limit_changes: (limits.changes().filter(|t| *t > config.origin))
                .map(Reverse)
                .collect(),
            withdrawals: BinaryHeap::new(),
            cancellable: HashSet::new(),
            record_jobs: config.record_jobs,
            jobs: Vec::new(),
            queue_held: vec![0.0; config.queues.len()],
            tiered: config.queues.iter().any(|q| q.priority != 0)
                || config
                    .partitions
                    .iter()
                    .any(|p| p.tier != config.partitions[0].tier),
            queue_limits: config.queues.clone(),
            tier: None,
            overrun: config.overrun,
            observed: false,
            totals: config.capacity.total(),
            settled: Vec::new(),
            timing: config.scheduler.timing(config.origin),
            kind: PassKind::default(),
            whole_nodes,
            planner: planner.map(|planner| planner.0),
            plan_resolution: (planning.resolution_s)
                .filter(|_| reservations == Reservations::ForThePass)
                .map(|s| Resolution {
                    micros: s.max(1).saturating_mul(1_000_000),
                    ends_up: planning.ends_rounded_up,
                }),
            news: false,
            plans_with_limits: planning.with_limits,
            overdue: Vec::new(),
            job_order: (serving.job_order)
                .map(|(priority, offset_s)| JobOrder::new(config, priority, offset_s)),
            factor_scope,
            job_factors: serving.job_factors,
            opens: config.opens,
            pins: BTreeMap::new(),
            pinned: 0,
            pinned_elsewhere: 0,
            opened: None,
            limits,
            held_by_limits: Default::default(),
            outages: Default::default(),
        };
        let planner = &mut engine.planner;
        engine.outages = Outages::of(&config.outages, &mut engine.space, |node, from, to| {
            if let Some(planner) = planner.as_mut() {
                planner.stand(node, from, to);
            }
        })?;
        Ok(engine)
    }
}
