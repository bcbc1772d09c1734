//! Where jobs run: one pool per resource (the SDRF evaluation's model, one node) or the nodes
//! of a machine catalogue. Amounts are normalised by the total capacity, so shares mean the
//! same thing in both.
//!
//! A job asks for a [`Request`]: a number of distinct nodes each giving the same amount, or a
//! number of processors anywhere (an SWF log that records only a processor count), perhaps
//! whole nodes, perhaps only nodes with given properties. The space turns a request into a
//! [`Placed`] list of nodes and amounts by asking the run's [`Placement`] for one node at a
//! time, against the nodes' use now or, for backfilling, their most expected use over a window
//! of the availability profile.

use super::placement::{JobPlacement, NodeLoad, Placement};
use super::profile::Skyline;
use fairshare_core::alloc::tasks::FIT_SLACK;
use fairshare_core::model::{MachineCatalogue, NodeType, Time};
use fairshare_core::usage::metric::UsageMetric;
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::sync::Arc;

mod bounds;
mod capacity;
mod fit;
mod openings;
mod request;
mod search;
mod will_run;

use bounds::Bounds;
pub use capacity::{Capacity, MOST_MACHINES};
use fit::{fit, part_fits, part_fits_without, release, take};
use openings::Openings;
pub(in crate::cluster) use request::{held, Placed, Request, Shape};
use search::Searches;
pub(in crate::cluster) use will_run::{Ending, Nodes};

/// The availability profile before the plans of a pass, to go back to when they are dropped.
#[derive(Debug, Clone, Default)]
struct Plans {
    /// Whether a plan was made in this pass.
    open: bool,
    /// The profile before the first plan (a buffer kept between passes).
    before: Vec<Skyline>,
    /// What was expected since, each with its sign, to enter again.
    since: Vec<(Placed, Time, Time, f64)>,
}

/// Free room during a run, normalised by the total capacity: the nodes (one for a pool) and
/// what is in use over all of them, and each node's expected use over time when backfilling
/// needs it.
#[derive(Debug, Clone)]
pub(super) struct Space {
    total: Vec<f64>,
    used: Vec<f64>,
    nodes: Vec<NodeLoad>,
    /// A copy of the nodes that placements are tried on.
    scratch: Vec<NodeLoad>,
    placement: Arc<dyn Placement>,
    /// Each node's expected use over time (empty when the scheduler makes no reservations).
    profile: Vec<Skyline>,
    /// Each node's properties.
    properties: Vec<Arc<[String]>>,
    /// The buffers [`Space::earliest`] reuses: the eligible nodes, and openings on any of
    /// them and on the freed ones.
    searches: Searches,
    /// Which nodes each set of properties allows, as met.
    eligibility: HashMap<Vec<String>, Option<Arc<[bool]>>>,
    /// The nodes no job may be placed on for the rest of the pass (empty: none).
    fenced: Vec<bool>,
    /// Before when requests already searched cannot start.
    bounds: Bounds,
    /// Plans that last one pass: the profile before the pass's first, and what started since.
    plans: Plans,
    /// Every node's use as the will-run test takes running jobs away, one node after another
    /// (a buffer kept between tests).
    future: Vec<f64>,
    /// Whether requests of each shape fit in the empty cluster, as met: the nodes never change,
    /// and a large site's jobs come in few shapes.
    ever_fits: FxHashMap<Vec<u64>, bool>,
    /// The nodes a search by the profile passes by (a buffer kept between searches).
    passed_by: Vec<bool>,
    /// Each node's index by its host name, for jobs started where the log started them.
    hosts: HashMap<String, usize>,
    pool: bool,
}

impl Space {
    /// The nodes of `capacity` over the resources `names`, placed on by `placement`, with an
    /// availability profile when `profiled`.
    pub(super) fn new(
        capacity: &Capacity,
        names: &[String],
        placement: Arc<dyn Placement>,
        profiled: bool,
    ) -> Result<Space, super::SimError> {
        let resources = names.len();
        let bad = |what: String| Err(super::SimError::Capacity(what));
        if let Capacity::Machines(catalogue) = capacity {
            if catalogue.nodes() > MOST_MACHINES {
                return bad(format!(
                    "{} machines; at most {MOST_MACHINES} can be simulated",
                    catalogue.nodes()
                ));
            }
        }
        let nodes = capacity.nodes();
        if nodes.is_empty() {
            return bad("no machines".into());
        }
        let mut total = vec![0.0; resources];
        for (m, speed) in &nodes {
            if m.len() != resources || m.iter().any(|c| !(c.is_finite() && *c >= 0.0)) {
                return bad(format!(
                    "expected {resources} finite non-negative amounts, found {m:?}"
                ));
            }
            if !(speed.is_finite() && *speed > 0.0) {
                return bad(format!("a node's speed must be positive, found {speed}"));
            }
            total.iter_mut().zip(m).for_each(|(t, c)| *t += c);
        }
        if let Some(r) = total.iter().position(|t| !(t.is_finite() && *t > 0.0)) {
            return bad(format!(
                "{} has a total capacity of {}; expected a positive finite amount",
                names[r], total[r]
            ));
        }
        let nodes: Vec<NodeLoad> = nodes
            .into_iter()
            .map(|(m, speed)| NodeLoad {
                capacity: m.iter().zip(&total).map(|(c, t)| c / t).collect(),
                used: vec![0.0; resources],
                speed,
                closed: false,
            })
            .collect();
        let properties = match capacity {
            Capacity::Pool(_) => vec![Arc::from(Vec::new())],
            Capacity::Machines(catalogue) => {
                let types: Vec<Arc<[String]>> = catalogue
                    .types
                    .iter()
                    .map(|t| Arc::from(t.properties.clone()))
                    .collect();
                catalogue.expand().map(|t| Arc::clone(&types[t])).collect()
            }
        };
        let profile = match profiled {
            true => vec![Skyline::empty(resources); nodes.len()],
            false => Vec::new(),
        };
        Ok(Space {
            used: vec![0.0; resources],
            total,
            scratch: nodes.clone(),
            nodes,
            placement,
            profile,
            properties,
            searches: Default::default(),
            eligibility: HashMap::new(),
            fenced: Vec::new(),
            bounds: Bounds::default(),
            plans: Plans::default(),
            future: Vec::new(),
            ever_fits: FxHashMap::default(),
            passed_by: Vec::new(),
            hosts: (capacity.named_nodes().into_iter().enumerate())
                .map(|(i, (name, _))| (name, i))
                .collect(),
            pool: matches!(capacity, Capacity::Pool(_)),
        })
    }

    /// Raw amounts as fractions of the total capacity.
    pub(super) fn normalise(&self, demand: &[f64]) -> Result<Vec<f64>, String> {
        if demand.len() != self.total.len() || demand.iter().any(|d| !(d.is_finite() && *d >= 0.0))
        {
            return Err(format!(
                "expected {} finite non-negative amounts, found {demand:?}",
                self.total.len()
            ));
        }
        Ok(demand.iter().zip(&self.total).map(|(d, t)| d / t).collect())
    }

    /// The request of a task of normalised `demand` spanning `nodes` nodes (`None`: any nodes
    /// with free processors, resource 0 counting them), perhaps `exclusive`, requiring
    /// `properties`; also whether some property is one no node declares (and so is not
    /// enforced). On a pool every task is one piece on the one node.
    pub(super) fn request(
        &mut self,
        raw_cpus: f64,
        demand: Vec<f64>,
        nodes: Option<u32>,
        exclusive: bool,
        properties: &[String],
    ) -> (Request, bool) {
        if self.pool {
            let shape = Shape::Nodes {
                nodes: 1,
                per_node: demand,
            };
            return (
                Request {
                    shape,
                    exclusive: false,
                    eligible: None,
                },
                false,
            );
        }
        let units = raw_cpus.round();
        let shape = match nodes {
            Some(n) if n > 0 => Shape::Nodes {
                nodes: n,
                per_node: demand.iter().map(|d| d / f64::from(n)).collect(),
            },
            None if units >= 1.0 && units == raw_cpus && units <= f64::from(u32::MAX) => {
                Shape::Spread {
                    units: units as u32,
                    per_unit: demand.iter().map(|d| d / units).collect(),
                }
            }
            _ => Shape::Nodes {
                nodes: 1,
                per_node: demand,
            },
        };
        let unknown = properties
            .iter()
            .any(|p| !self.properties.iter().any(|node| node.contains(p)));
        let eligible = self.eligible(properties);
        let request = Request {
            shape,
            exclusive,
            eligible,
        };
        (request, unknown)
    }

    /// Whether some node declares `property`.
    pub(super) fn declares(&self, property: &str) -> bool {
        self.properties
            .iter()
            .any(|node| node.iter().any(|p| p == property))
    }

    /// Which nodes declare every one of `properties` that some node declares (`None`: all).
    fn eligible(&mut self, properties: &[String]) -> Option<Arc<[bool]>> {
        if properties.is_empty() {
            return None;
        }
        if let Some(known) = self.eligibility.get(properties) {
            return known.clone();
        }
        let known: Vec<&String> = properties
            .iter()
            .filter(|p| self.properties.iter().any(|node| node.contains(p)))
            .collect();
        let eligible = (!known.is_empty()).then(|| {
            let allowed = self.properties.iter();
            allowed
                .map(|node| known.iter().all(|p| node.contains(p)))
                .collect::<Arc<[bool]>>()
        });
        self.eligibility
            .insert(properties.to_vec(), eligible.clone());
        eligible
    }

    /// The capacity (normalised) and the number of the nodes that declare `property` (`None`:
    /// every node).
    pub(super) fn extent(&mut self, property: Option<&str>) -> (Vec<f64>, f64) {
        let eligible = property.and_then(|p| self.eligible(&[p.to_owned()]));
        let mut totals = vec![0.0; self.total.len()];
        let mut count = 0.0;
        let nodes = self.nodes.iter().enumerate();
        for (_, node) in nodes.filter(|(i, _)| eligible.as_ref().is_none_or(|e| e[*i])) {
            totals
                .iter_mut()
                .zip(&node.capacity)
                .for_each(|(t, c)| *t += c);
            count += 1.0;
        }
        (totals, count)
    }

    /// The capacity (normalised) of the nodes that declare any of `properties`.
    pub(super) fn extent_of_any(&self, properties: &[String]) -> Vec<f64> {
        let mut totals = vec![0.0; self.total.len()];
        for (node, declared) in self.nodes.iter().zip(&self.properties) {
            if properties.iter().any(|p| declared.contains(p)) {
                totals
                    .iter_mut()
                    .zip(&node.capacity)
                    .for_each(|(t, c)| *t += c);
            }
        }
        totals
    }

    /// Keeps every node that declares `property` from taking any job until
    /// [`Space::unfence`]; a property no node declares fences nothing.
    pub(super) fn fence(&mut self, property: &str) {
        let Some(nodes) = self.eligible(&[property.to_owned()]) else {
            return;
        };
        self.fenced.resize(nodes.len(), false);
        self.fenced
            .iter_mut()
            .zip(nodes.iter())
            .for_each(|(f, n)| *f |= n);
    }

    /// Keeps every node `closed` counts an outage on from taking any job until
    /// [`Space::unfence`].
    pub(super) fn fence_closed(&mut self, closed: &[u32]) {
        self.fenced.resize(self.nodes.len(), false);
        (self.fenced.iter_mut().zip(closed)).for_each(|(f, c)| *f |= *c > 0);
    }

    /// Whether starts are tried against an availability profile (the scheduler plans).
    pub(super) fn profiled(&self) -> bool {
        !self.profile.is_empty()
    }

    /// Whether a fence keeps a job off one of `placed`'s nodes.
    pub(super) fn fences_any(&self, placed: &Placed) -> bool {
        (placed.iter()).any(|(node, _)| self.fenced.get(*node).copied().unwrap_or(false))
    }

    /// How many nodes there are.
    pub(super) fn nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The node named `host`, if the run has one.
    pub(super) fn host(&self, host: &str) -> Option<usize> {
        self.hosts.get(host).copied()
    }

    /// All of `node`, as a placement.
    pub(super) fn whole(&self, node: usize) -> Placed {
        vec![(node, self.nodes[node].capacity.clone())]
    }

    /// Opens every fenced node again.
    pub(super) fn unfence(&mut self) {
        self.fenced.clear();
        self.bounds.forget();
    }

    /// Whether `request` fits in an empty cluster.
    pub(super) fn could_ever_fit(&mut self, request: &Request) -> bool {
        let key = request.key();
        if let Some(&fits) = self.ever_fits.get(&key) {
            return fits;
        }
        let fits = self.fits_when_empty(request);
        self.ever_fits.insert(key, fits);
        fits
    }

    /// [`Space::could_ever_fit`], tried on the nodes.
    fn fits_when_empty(&mut self, request: &Request) -> bool {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.iter_mut().for_each(|n| n.used.fill(0.0));
        let placed = fit(self.placement.as_ref(), request, &mut scratch, &[]);
        self.scratch = scratch;
        placed.is_some()
    }

    /// Fraction of each resource in use.
    pub(super) fn used(&self) -> &[f64] {
        &self.used
    }

    /// Whether every node lacks room now for `least` of some resource (so that no job needing
    /// at least that much of each can start).
    pub(super) fn too_full_for(&self, least: &[f64]) -> bool {
        self.nodes.iter().all(|n| {
            let free = n.capacity.iter().zip(&n.used).zip(least);
            free.clone().any(|((c, u), l)| c - u + FIT_SLACK < *l)
        })
    }

    /// Where `request` fits beside what runs now, without taking it. A one-node request on
    /// every node asks the placement directly, as the SDRF paper's simulator does.
    pub(super) fn fit_now(&mut self, request: &Request) -> Option<Placed> {
        if let (Shape::Nodes { nodes: 1, per_node }, false, None, true) = (
            &request.shape,
            request.exclusive,
            &request.eligible,
            self.fenced.is_empty(),
        ) {
            let node = self.placement.select_node(per_node, &self.nodes)?;
            return (node < self.nodes.len()).then(|| vec![(node, per_node.clone())]);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch
            .iter_mut()
            .zip(&self.nodes)
            .for_each(|(s, n)| s.used.clone_from(&n.used));
        let placed = fit(self.placement.as_ref(), request, &mut scratch, &self.fenced);
        self.scratch = scratch;
        placed
    }

    /// Where `request` sits on the nodes named `hosts`, when every one of them is known and
    /// they have room for it now: where a log says the job ran. A job of whole nodes (or an
    /// exclusive one) takes an even share of each (each whole); one of processors anywhere
    /// takes as many of them on each host in turn as fit there, as Slurm spreads them.
    pub(super) fn on_hosts(&self, hosts: &[String], request: &Request) -> Option<Placed> {
        let nodes: Option<Vec<usize>> = hosts.iter().map(|h| self.hosts.get(h).copied()).collect();
        let mut nodes = nodes?;
        nodes.dedup();
        if nodes.is_empty() || nodes.len() != hosts.len() {
            return None;
        }
        let mut placed = Vec::with_capacity(nodes.len());
        match (&request.shape, request.exclusive) {
            (Shape::Spread { units, per_unit }, false) => {
                let mut left = *units;
                for &index in &nodes {
                    let fits = self.nodes[index].parts_it_holds(per_unit, true).min(left);
                    if fits > 0 {
                        placed.push((
                            index,
                            per_unit.iter().map(|d| d * f64::from(fits)).collect(),
                        ));
                        left -= fits;
                    }
                }
                (left == 0).then_some(placed)
            }
            (shape, exclusive) => {
                let (count, each) = match shape {
                    Shape::Nodes { nodes, per_node } => (*nodes, per_node),
                    Shape::Spread { units, per_unit } => (*units, per_unit),
                };
                let share = f64::from(count) / nodes.len() as f64;
                for &index in &nodes {
                    let node = &self.nodes[index];
                    let amount: Vec<f64> = match exclusive {
                        true => node.capacity.clone(),
                        false => each.iter().map(|d| d * share).collect(),
                    };
                    if !(node.has_room(&amount) && (!exclusive || node.is_empty())) {
                        return None;
                    }
                    placed.push((index, amount));
                }
                Some(placed)
            }
        }
    }

    /// Takes `placed` from the nodes now.
    pub(super) fn take(&mut self, placed: &Placed) {
        for (node, amount) in placed {
            take(&mut self.nodes[*node].used, amount);
            take(&mut self.used, amount);
        }
    }

    /// Frees what `placed` held.
    pub(super) fn release(&mut self, placed: &Placed) {
        for (node, amount) in placed {
            release(&mut self.nodes[*node].used, amount);
            release(&mut self.used, amount);
        }
    }

    /// Adds `placed` to the availability profile over `[from, to)` (`sign` −1 takes it away).
    pub(super) fn expect(&mut self, placed: &Placed, from: Time, to: Time, sign: f64) {
        if self.profile.is_empty() {
            return;
        }
        if sign < 0.0 {
            self.bounds.forget();
        }
        if self.plans.open {
            self.plans.since.push((placed.clone(), from, to, sign));
        }
        self.add(placed, from, to, sign);
    }

    /// Adds `placed` to the profile as a plan that [`Space::drop_plans`] takes away again
    /// with every other at once, at the end of the pass.
    pub(super) fn plan(&mut self, placed: &Placed, from: Time, to: Time) {
        if self.profile.is_empty() {
            return;
        }
        if !self.plans.open {
            self.plans.open = true;
            // Each skyline copied into the buffers the last pass left ([`Skyline::clone_from`]).
            self.plans.before.clone_from(&self.profile);
        }
        self.add(placed, from, to, 1.0);
    }

    /// Takes one plan away before the others.
    pub(super) fn unplan(&mut self, placed: &Placed, from: Time, to: Time) {
        if self.profile.is_empty() {
            return;
        }
        self.bounds.forget();
        self.add(placed, from, to, -1.0);
    }

    /// Takes every plan away: the profile is again what it was before the first, with what
    /// was expected since of jobs that started.
    pub(super) fn drop_plans(&mut self) {
        if !std::mem::take(&mut self.plans.open) {
            return;
        }
        self.bounds.forget();
        std::mem::swap(&mut self.profile, &mut self.plans.before);
        for (placed, from, to, sign) in std::mem::take(&mut self.plans.since) {
            self.add(&placed, from, to, sign);
        }
    }

    /// Adds `placed` to every node's profile over `[from, to)`, times `sign`.
    fn add(&mut self, placed: &Placed, from: Time, to: Time, sign: f64) {
        for (node, amount) in placed {
            self.profile[*node].add(from, to, amount, sign);
        }
    }

    /// `placed` widened to the rest of each of its nodes over `[from, to)`: all that the
    /// availability profile leaves free there, at least what `placed` holds.
    pub(super) fn rest_of_nodes(&self, placed: &Placed, from: Time, to: Time) -> Placed {
        let rest = |(node, amount): &(usize, Vec<f64>)| {
            let peak = self.profile[*node].peak(from, to);
            let capacity = &self.nodes[*node].capacity;
            let free = capacity.iter().zip(&peak).zip(amount);
            (*node, free.map(|((c, p), a)| (c - p).max(*a)).collect())
        };
        placed.iter().map(rest).collect()
    }

    /// Forgets the availability profile before `t`.
    pub(super) fn forget_before(&mut self, t: Time) {
        self.profile.iter_mut().for_each(|l| l.forget_before(t));
    }

    /// The slowest speed among `placed`'s nodes.
    pub(super) fn speed(&self, placed: &Placed) -> f64 {
        placed
            .iter()
            .map(|(n, _)| self.nodes[*n].speed)
            .fold(f64::INFINITY, f64::min)
    }
}

#[cfg(test)]
mod tests;
