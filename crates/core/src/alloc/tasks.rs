//! Progressive filling of indivisible tasks: SDRF's Algorithm 1.
//!
//! Repeatedly give the next task to the client with the lowest priority, while it fits. What
//! happens when the chosen client's task does not fit is the fill rule ([`FillRule`]): the
//! paper stops (head-of-line); the skip rule sets that client aside and tries the next one. The pass itself
//! ([`progressive_fill`]) is written against the [`TaskQueue`] and [`Room`] traits; the trace
//! simulator's `Fill` scheduler runs the same loop over its own jobs and nodes (and a property
//! test checks it against first-come-first-served).

use super::{check_vector, check_weight, AllocError};
use crate::choice::Choice;
use crate::error::Invalid;
use crate::model::ResourceSet;
use crate::priority::{ClientView, Policy, PriorityKey};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Slack allowed when testing whether a task fits (docs/mechanisms.md, SDRF §6.3, ε_fit).
pub const FIT_SLACK: f64 = 1e-9;

/// Most tasks one call to [`fill_tasks`] may place: the instance is refused when the tasks that
/// could fit number more (about half a second of placing, one task at a time).
pub const MAX_PLACEMENTS: u64 = 10_000_000;

/// The fill rule: what a pass does when the chosen client's next task does not fit (`--rule`,
/// and `rule` in instance files and documents).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FillRule {
    /// Stop the pass: the system is full (the paper's rule).
    #[default]
    HeadOfLine,
    /// Set that client aside for the rest of the pass and try the next one.
    Skip,
}

impl Choice for FillRule {
    const ALL: &'static [FillRule] = &[FillRule::HeadOfLine, FillRule::Skip];

    fn name(self) -> &'static str {
        match self {
            FillRule::HeadOfLine => "head-of-line",
            FillRule::Skip => "skip",
        }
    }

    fn about(self) -> &'static str {
        match self {
            FillRule::HeadOfLine => "Stop the pass",
            FillRule::Skip => "Skip the user for the rest of the pass",
        }
    }
}

impl std::fmt::Display for FillRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for FillRule {
    type Err = Invalid;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FillRule::named(s)
            .ok_or_else(|| Invalid(format!("expected {}, found {s:?}", FillRule::names())))
    }
}

/// The clients waiting in one pass, in priority order.
pub trait TaskQueue {
    /// The waiting client with the lowest priority, if any.
    fn first(&mut self) -> Option<usize>;
    /// The normalised demand of that client's next task.
    fn head(&self, client: usize) -> &[f64];
    /// Starts the client's next task where `room` placed it (its allocation grows, it is
    /// re-ranked or leaves).
    fn start(&mut self, client: usize, place: usize);
    /// Sets the client aside until the pass ends.
    fn skip(&mut self, client: usize);
}

/// Where tasks run: one pool per resource, or a set of machines.
pub trait Room {
    /// Takes room for a task of normalised demand `demand`; returns where it went (a machine
    /// index, 0 for a pool), or `None` when it does not fit.
    fn place(&mut self, demand: &[f64]) -> Option<usize>;
}

/// One pool per resource, each of capacity 1 (SDRF's model: no machines, no packing).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pool {
    /// Fraction of each resource in use.
    pub used: Vec<f64>,
}

impl Room for Pool {
    fn place(&mut self, demand: &[f64]) -> Option<usize> {
        fits(&self.used, demand).then(|| {
            self.used.iter_mut().zip(demand).for_each(|(u, d)| *u += d);
            0
        })
    }
}

/// Runs one pass of Algorithm 1 into `room`. Returns the number of tasks started.
pub fn progressive_fill(
    queue: &mut (impl TaskQueue + ?Sized),
    room: &mut (impl Room + ?Sized),
    rule: FillRule,
) -> u64 {
    let mut started = 0;
    while let Some(client) = queue.first() {
        if let Some(place) = room.place(queue.head(client)) {
            queue.start(client, place);
            started += 1;
        } else if rule == FillRule::Skip {
            queue.skip(client);
        } else {
            break;
        }
    }
    started
}

/// Whether a task of normalised demand `demand` fits beside `used`.
pub fn fits(used: &[f64], demand: &[f64]) -> bool {
    used.iter()
        .zip(demand)
        .all(|(u, d)| u + d <= 1.0 + FIT_SLACK)
}

/// One client's input to the one-shot task allocator.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskClient {
    /// Demand of one task, in the same units as the capacity.
    pub demand: Vec<f64>,
    /// Tasks queued; `None` means as many as fit.
    pub tasks: Option<u64>,
    /// Relative weight ρ (see [`crate::model::relative_weights`]).
    pub weight: f64,
    /// Commitments, fractions of each capacity (empty means zero).
    pub commitment: Vec<f64>,
}

impl TaskClient {
    /// A client with weight 1, no commitment and as many tasks as fit.
    pub fn new(demand: Vec<f64>) -> Self {
        TaskClient {
            demand,
            tasks: None,
            weight: 1.0,
            commitment: Vec::new(),
        }
    }
}

/// The result of the one-shot task allocator.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskFill {
    /// Tasks placed per client.
    pub tasks: Vec<u64>,
    /// Resources held per client, in capacity units.
    pub allocations: Vec<Vec<f64>>,
    /// Clients whose task is larger than the whole capacity: they can never run.
    pub unfit: Vec<usize>,
}

/// Places tasks on empty `resources` by progressive filling; demands and allocations are in
/// the resources' units, commitments fractions of each capacity.
pub fn fill_tasks(
    policy: &Policy,
    resources: &ResourceSet,
    clients: &[TaskClient],
    rule: FillRule,
) -> Result<TaskFill, AllocError> {
    let capacity = resources.capacities();
    let mut queue = StaticQueue::new(policy, capacity, clients)?;
    let mut pool = Pool {
        used: vec![0.0; capacity.len()],
    };
    progressive_fill(&mut queue, &mut pool, rule);
    let allocations = clients
        .iter()
        .zip(&queue.placed)
        .map(|(c, n)| c.demand.iter().map(|d| d * *n as f64).collect())
        .collect();
    Ok(TaskFill {
        tasks: queue.placed,
        allocations,
        unfit: queue.unfit,
    })
}

/// Clients whose priorities only change when they receive a task (one instant, no decay).
struct StaticQueue<'a> {
    policy: &'a Policy,
    demand: Vec<Vec<f64>>,
    allocation: Vec<Vec<f64>>,
    clients: &'a [TaskClient],
    placed: Vec<u64>,
    unfit: Vec<usize>,
    order: BTreeSet<(PriorityKey, usize)>,
}

impl<'a> StaticQueue<'a> {
    fn new(
        policy: &'a Policy,
        capacity: &[f64],
        clients: &'a [TaskClient],
    ) -> Result<Self, AllocError> {
        let mut queue = StaticQueue {
            policy,
            demand: Vec::with_capacity(clients.len()),
            allocation: vec![vec![0.0; capacity.len()]; clients.len()],
            clients,
            placed: vec![0; clients.len()],
            unfit: Vec::new(),
            order: BTreeSet::new(),
        };
        let mut bound = 0u64;
        let mut largest = (0, 0);
        for (i, c) in clients.iter().enumerate() {
            check_client(i, c, capacity.len())?;
            let demand: Vec<f64> = c.demand.iter().zip(capacity).map(|(d, k)| d / k).collect();
            let most = most_tasks(i, &demand, c.tasks)?;
            bound = bound.saturating_add(most);
            if most > largest.1 {
                largest = (i, most);
            }
            if most == 0 && demand.iter().any(|d| *d > 1.0 + FIT_SLACK) {
                queue.unfit.push(i);
            } else if c.tasks != Some(0) {
                queue.order.insert((PriorityKey(queue.priority(i)), i));
            }
            queue.demand.push(demand);
        }
        if bound > MAX_PLACEMENTS {
            let reason = format!("tasks are so small that more than {MAX_PLACEMENTS} would be placed; give `tasks` or larger demands");
            return Err(AllocError::Unbounded {
                client: largest.0,
                reason,
            });
        }
        Ok(queue)
    }

    fn priority(&self, i: usize) -> f64 {
        let c = &self.clients[i];
        self.policy.priority(&ClientView {
            weight: c.weight,
            allocation: &self.allocation[i],
            commitment: &c.commitment,
        })
    }
}

impl TaskQueue for StaticQueue<'_> {
    fn first(&mut self) -> Option<usize> {
        self.order.first().map(|(_, i)| *i)
    }

    fn head(&self, client: usize) -> &[f64] {
        &self.demand[client]
    }

    fn start(&mut self, client: usize, _place: usize) {
        self.order
            .remove(&(PriorityKey(self.priority(client)), client));
        for (o, d) in self.allocation[client].iter_mut().zip(&self.demand[client]) {
            *o += d;
        }
        self.placed[client] += 1;
        if Some(self.placed[client]) != self.clients[client].tasks {
            self.order
                .insert((PriorityKey(self.priority(client)), client));
        }
    }

    fn skip(&mut self, client: usize) {
        self.order
            .remove(&(PriorityKey(self.priority(client)), client));
    }
}

/// An upper bound on the tasks client `i` can place, or an error when there is none.
fn most_tasks(i: usize, demand: &[f64], tasks: Option<u64>) -> Result<u64, AllocError> {
    let fit = demand
        .iter()
        .filter(|d| **d > 0.0)
        .map(|d| ((1.0 + FIT_SLACK) / d).floor())
        .fold(f64::INFINITY, f64::min);
    match (tasks, fit.is_finite()) {
        (Some(n), _) => Ok(if fit.is_finite() {
            n.min(fit as u64)
        } else {
            n
        }),
        (None, true) => Ok(fit.min(u64::MAX as f64) as u64),
        (None, false) => Err(AllocError::Unbounded {
            client: i,
            reason: "a task that needs nothing would be placed forever; give `tasks`".into(),
        }),
    }
}

fn check_client(i: usize, c: &TaskClient, resources: usize) -> Result<(), AllocError> {
    check_vector(i, "demand", &c.demand, resources)?;
    if !c.commitment.is_empty() {
        check_vector(i, "commitment", &c.commitment, resources)?;
    }
    check_weight(i, c.weight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priority::PriorityForm;

    /// Resources of these capacities.
    fn units(capacities: &[f64]) -> ResourceSet {
        ResourceSet::from_capacities(capacities).unwrap()
    }

    fn client(demand: &[f64], commitment: &[f64]) -> TaskClient {
        TaskClient {
            commitment: commitment.to_vec(),
            ..TaskClient::new(demand.to_vec())
        }
    }

    #[test]
    fn textbook_drf_case() {
        let clients = [client(&[1.0, 4.0], &[]), client(&[3.0, 1.0], &[])];
        for rule in [FillRule::HeadOfLine, FillRule::Skip] {
            let fill = fill_tasks(&Policy::Drf, &units(&[9.0, 18.0]), &clients, rule).unwrap();
            assert_eq!(fill.tasks, vec![3, 2]);
            assert_eq!(fill.allocations, vec![vec![3.0, 12.0], vec![6.0, 2.0]]);
        }
    }

    #[test]
    fn algorithm_1_worked_example() {
        // docs/mechanisms.md, SDRF §6.4 (MaxOfSums): HOL stops with A 3 tasks, B 2; skip gives A one more.
        let clients = [
            client(&[0.2, 0.1], &[0.12, 0.0]),
            client(&[0.1, 0.3], &[0.0, 0.0]),
        ];
        let policy = Policy::Sdrf(PriorityForm::MaxOfSums);
        let hol = fill_tasks(&policy, &units(&[1.0, 1.0]), &clients, FillRule::HeadOfLine).unwrap();
        assert_eq!(hol.tasks, vec![3, 2]);
        let skip = fill_tasks(&policy, &units(&[1.0, 1.0]), &clients, FillRule::Skip).unwrap();
        assert_eq!(skip.tasks, vec![4, 2]);
    }

    #[test]
    fn oversized_tasks_are_reported_not_run() {
        let clients = [client(&[10.0, 1.0], &[]), client(&[1.0, 1.0], &[])];
        let fill = fill_tasks(
            &Policy::Drf,
            &units(&[9.0, 18.0]),
            &clients,
            FillRule::HeadOfLine,
        )
        .unwrap();
        assert_eq!(fill.unfit, vec![0]);
        assert_eq!(fill.tasks, vec![0, 9]);
    }

    #[test]
    fn task_counts_are_honoured() {
        let mut a = client(&[1.0, 1.0], &[]);
        a.tasks = Some(2);
        let fill = fill_tasks(
            &Policy::Drf,
            &units(&[9.0, 9.0]),
            &[a, client(&[1.0, 1.0], &[])],
            FillRule::HeadOfLine,
        )
        .unwrap();
        assert_eq!(fill.tasks, vec![2, 7]);
    }

    #[test]
    fn refuses_endless_instances() {
        let err = fill_tasks(
            &Policy::Drf,
            &units(&[1.0]),
            &[client(&[0.0], &[])],
            FillRule::Skip,
        );
        assert!(matches!(err, Err(AllocError::Unbounded { .. })));
        let err = fill_tasks(
            &Policy::Drf,
            &units(&[1.0]),
            &[client(&[1e-12], &[])],
            FillRule::Skip,
        );
        assert!(matches!(err, Err(AllocError::Unbounded { .. })));
        let empty = ResourceSet::from_capacities(&[0.0])
            .unwrap_err()
            .to_string();
        assert_eq!(
            empty,
            "capacity of resource \"r1\" must be a positive finite number (at least 2.2e-308), found 0"
        );
    }

    #[test]
    fn refuses_more_placements_than_the_limit_before_placing_any() {
        // Found by the fuzzer: one user whose task takes 8 of 566,666,666 of memory and none of
        // the CPU would have 70,833,333 tasks placed one at a time (4 s; 21 s in a fuzz build).
        let fill = |mem: f64| {
            fill_tasks(
                &Policy::Sdrf(crate::priority::PriorityForm::SumOfMaxes),
                &units(&[4.0, 566_666_666.0]),
                &[client(&[0.0, mem], &[])],
                FillRule::HeadOfLine,
            )
        };
        assert!(matches!(
            fill(8.0),
            Err(AllocError::Unbounded { client: 0, .. })
        ));
        assert_eq!(fill(566_666.666).unwrap().tasks, vec![1000]);
    }
}
