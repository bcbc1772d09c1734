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

use super::placement::{Node, Placement};
use super::profile::Skyline;
use fairshare_core::alloc::tasks::FIT_SLACK;
use fairshare_core::model::{MachineCatalogue, NodeType, Time};
use fairshare_core::usage::metric::UsageMetric;
use std::collections::HashMap;
use std::sync::Arc;

/// The capacity a run is given, in raw units.
#[derive(Debug, Clone, PartialEq)]
pub enum Capacity {
    /// One pool per resource.
    Pool(Vec<f64>),
    /// The machines of a catalogue, each node a place of its own.
    Machines(MachineCatalogue),
}

/// The most machines a run places tasks on (one capacity vector each).
pub const MOST_MACHINES: u64 = 1_000_000;

impl Capacity {
    /// Every node's capacity vector and speed, in catalogue order (the pool is one node of
    /// speed 1).
    pub fn nodes(&self) -> Vec<(Vec<f64>, f64)> {
        match self {
            Capacity::Pool(total) => vec![(total.clone(), 1.0)],
            Capacity::Machines(catalogue) => catalogue
                .expand()
                .map(|t| {
                    (
                        catalogue.types[t].capacity.clone(),
                        catalogue.types[t].speed,
                    )
                })
                .collect(),
        }
    }

    /// The catalogue `metric` prices jobs on, and the metric to price them by there (on a
    /// pool, [`UsageMetric::on_a_pool`]).
    pub fn pricing(&self, metric: UsageMetric) -> (MachineCatalogue, UsageMetric) {
        match self {
            Capacity::Machines(_) => (self.catalogue(), metric),
            Capacity::Pool(_) => (self.catalogue(), metric.on_a_pool()),
        }
    }

    /// The machines as a catalogue: a pool is one node holding all of it.
    pub fn catalogue(&self) -> MachineCatalogue {
        match self {
            Capacity::Machines(catalogue) => catalogue.clone(),
            Capacity::Pool(total) => MachineCatalogue {
                types: vec![NodeType::new("pool", 1, total.clone())],
            },
        }
    }

    /// The total of each resource, summed node by node in catalogue order.
    pub fn total(&self) -> Vec<f64> {
        let nodes = self.nodes();
        let mut total = vec![0.0; nodes.first().map_or(0, |(c, _)| c.len())];
        for (node, _) in &nodes {
            total.iter_mut().zip(node).for_each(|(t, c)| *t += c);
        }
        total
    }

    /// Every node's name (its type's, numbered from 1 within the type; `pool` for a pool) and
    /// amount of the first resource, in catalogue order.
    pub fn named_nodes(&self) -> Vec<(String, f64)> {
        let first = |c: &[f64]| c.first().copied().unwrap_or(0.0);
        match self {
            Capacity::Pool(total) => vec![("pool".into(), first(total))],
            Capacity::Machines(catalogue) => catalogue
                .types
                .iter()
                .flat_map(|t| {
                    (1..=t.count).map(|k| (format!("{}-{k}", t.name), first(&t.capacity)))
                })
                .collect(),
        }
    }

    /// How many machines, or `None` for a pool.
    pub fn machines(&self) -> Option<usize> {
        match self {
            Capacity::Pool(_) => None,
            Capacity::Machines(catalogue) => Some(catalogue.expand().count()),
        }
    }
}

/// What a job asks of the nodes, in normalised units.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Request {
    /// How its demand is divided over nodes.
    pub shape: Shape,
    /// Whether it takes its nodes whole.
    pub exclusive: bool,
    /// Which nodes its properties allow (`None`: all).
    pub eligible: Option<Arc<[bool]>>,
}

/// How a job's demand is divided over nodes.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Shape {
    /// `nodes` distinct nodes, each giving `per_node`.
    Nodes {
        /// How many nodes.
        nodes: u32,
        /// The demand on each.
        per_node: Vec<f64>,
    },
    /// `units` processors on any nodes, each processor with `per_unit`.
    Spread {
        /// How many processors.
        units: u32,
        /// The demand of each.
        per_unit: Vec<f64>,
    },
}

impl Request {
    /// What it needs on one node at the least: one node's share, or one processor's.
    pub(super) fn piece(&self) -> &[f64] {
        match &self.shape {
            Shape::Nodes { per_node, .. } => per_node,
            Shape::Spread { per_unit, .. } => per_unit,
        }
    }
}

/// Where a job runs: each node it holds and what it holds there.
pub(super) type Placed = Vec<(usize, Vec<f64>)>;

/// The total of each resource over `placed`.
pub(super) fn held(placed: &Placed, resources: usize) -> Vec<f64> {
    let mut total = vec![0.0; resources];
    for (_, amount) in placed {
        total.iter_mut().zip(amount).for_each(|(t, a)| *t += a);
    }
    total
}

/// For a set of nodes, the next start at which each could take its part of a job: what
/// [`Space::earliest`] prunes its candidate starts with.
#[derive(Debug, Clone, Default)]
struct Openings {
    /// Each node, the time its room must start before, and its next opening once looked up
    /// (`Some(None)`: none before that time).
    nodes: Vec<(usize, Option<Time>, Option<Option<Time>>)>,
    /// The next openings, gathered to pick the k-th.
    open: Vec<Time>,
}

impl Openings {
    /// Starts over with these nodes, each with the time a start on it must come before
    /// (keeping the buffers: searches run by the million).
    fn reset(&mut self, nodes: impl Iterator<Item = (usize, Option<Time>)>) -> &mut Openings {
        self.nodes.clear();
        self.nodes
            .extend(nodes.map(|(n, before)| (n, before, None)));
        self
    }

    /// The earliest time from `t` at which `k` of the nodes could each take their part of
    /// `request` for `length` at once; `None` if fewer than `k` ever can before their times.
    /// Times must be asked in increasing order: a node's next opening is looked up again only
    /// once `t` has passed it, since use is constant between a node's own changes and a later
    /// start's window holds all that an earlier one's did from `t` on.
    fn opening(
        &mut self,
        space: &Space,
        request: &Request,
        t: Time,
        length: u64,
        k: usize,
    ) -> Option<Time> {
        self.open.clear();
        for (node, before, next) in &mut self.nodes {
            if next.is_none_or(|n| n.is_some_and(|n| n < t)) {
                let capacity = &space.nodes[*node].capacity;
                let fits = |used: &[f64]| part_fits(request, capacity, used);
                *next = Some(space.profile[*node].first_room(t, *before, length, fits));
            }
            self.open.extend(next.flatten());
        }
        match k.checked_sub(1) {
            None => Some(t),
            Some(k) => (k < self.open.len()).then(|| *self.open.select_nth_unstable(k).1),
        }
    }
}

/// Free room during a run, normalised by the total capacity: the nodes (one for a pool) and
/// what is in use over all of them, and each node's expected use over time when backfilling
/// needs it.
#[derive(Debug, Clone)]
pub(super) struct Space {
    total: Vec<f64>,
    used: Vec<f64>,
    nodes: Vec<Node>,
    /// A copy of the nodes that placements are tried on.
    scratch: Vec<Node>,
    placement: Arc<dyn Placement>,
    /// Each node's expected use over time (empty when the scheduler makes no reservations).
    profile: Vec<Skyline>,
    /// Each node's properties.
    properties: Vec<Arc<[String]>>,
    /// The buffers [`Space::earliest`] reuses: the eligible nodes, and openings on any of
    /// them and on the freed ones.
    searches: (Vec<usize>, Openings, Openings),
    /// Which nodes each set of properties allows, as met.
    eligibility: HashMap<Vec<String>, Option<Arc<[bool]>>>,
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
        let nodes: Vec<Node> = nodes
            .into_iter()
            .map(|(m, speed)| Node {
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

    /// Whether `request` fits in an empty cluster.
    pub(super) fn could_ever_fit(&mut self, request: &Request) -> bool {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.iter_mut().for_each(|n| n.used.fill(0.0));
        let placed = fit(self.placement.as_ref(), request, &mut scratch);
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
        if let (Shape::Nodes { nodes: 1, per_node }, false, None) =
            (&request.shape, request.exclusive, &request.eligible)
        {
            let node = self.placement.select_node(per_node, &self.nodes)?;
            return (node < self.nodes.len()).then(|| vec![(node, per_node.clone())]);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch
            .iter_mut()
            .zip(&self.nodes)
            .for_each(|(s, n)| s.used.clone_from(&n.used));
        let placed = fit(self.placement.as_ref(), request, &mut scratch);
        self.scratch = scratch;
        placed
    }

    /// Where `request` fits from `from` for `length` by the availability profile (every node's
    /// most expected use over that window), without taking it.
    pub(super) fn fit_during(
        &mut self,
        request: &Request,
        from: Time,
        length: u64,
    ) -> Option<Placed> {
        let to = from.plus_micros(length.max(1));
        let mut scratch = std::mem::take(&mut self.scratch);
        for (i, (s, line)) in scratch.iter_mut().zip(&self.profile).enumerate() {
            if request.eligible.as_ref().is_none_or(|e| e[i]) {
                // Once the node has no room for one part of the job, how much more it
                // would hold changes nothing: the placement passes it by.
                let full = |peak: &[f64]| !part_fits(request, &s.capacity, peak);
                line.peak_into(from, to, &mut s.used, full);
            }
        }
        let placed = fit(self.placement.as_ref(), request, &mut scratch);
        self.scratch = scratch;
        placed
    }

    /// The earliest time from `now`, and before `before` when given, at which `request` fits
    /// for `length` by the availability profile, and where; `None` if there is none. With
    /// `through`, only starts at which the job could use one of these nodes (each free up to
    /// its time) are tried: after room is freed there, no other start can have become possible.
    ///
    /// Candidate starts are `now` and the times at which some eligible node's use changes.
    /// Each node keeps the next start at which it could take its part of the job
    /// ([`Skyline::first_room`], moved on only when the candidates pass it), so a start is
    /// tried in full only when enough nodes could take part then.
    pub(super) fn earliest(
        &mut self,
        request: &Request,
        now: Time,
        length: u64,
        before: Option<Time>,
        through: Option<&[(usize, Time)]>,
    ) -> Option<(Time, Placed)> {
        let mut searches = std::mem::take(&mut self.searches);
        let found = self.earliest_with(&mut searches, request, now, length, before, through);
        self.searches = searches;
        found
    }

    /// [`Space::earliest`] with its buffers.
    fn earliest_with(
        &mut self,
        (nodes, any, freed): &mut (Vec<usize>, Openings, Openings),
        request: &Request,
        now: Time,
        length: u64,
        before: Option<Time>,
        through: Option<&[(usize, Time)]>,
    ) -> Option<(Time, Placed)> {
        let eligible = |i: &usize| request.eligible.as_ref().is_none_or(|e| e[*i]);
        let freed_until = through.map(|f| f.iter().map(|(_, until)| *until).max());
        let before = match freed_until {
            Some(None) => return None,
            Some(Some(until)) => Some(before.map_or(until, |b| b.min(until))),
            None => before,
        };
        nodes.clear();
        nodes.extend((0..self.profile.len()).filter(eligible));
        let any = any.reset(nodes.iter().map(|&n| (n, before)));
        let mut freed = through.map(|f| {
            let usable = f.iter().filter(|(n, _)| eligible(n));
            freed.reset(usable.map(|&(n, until)| (n, Some(before.map_or(until, |b| b.min(until))))))
        });
        let needed = match &request.shape {
            Shape::Nodes { nodes, .. } => *nodes as usize,
            Shape::Spread { .. } => 1,
        };
        let mut t = now;
        loop {
            // No start before a freed node opens can use it, and none before `needed` nodes
            // are open at once can hold the job: jump to where both hold.
            loop {
                let from = t;
                if let Some(freed) = &mut freed {
                    t = t.max(freed.opening(self, request, t, length, 1)?);
                }
                t = t.max(any.opening(self, request, t, length, needed)?);
                if t == from {
                    break;
                }
            }
            if before.is_some_and(|b| t >= b) {
                return None;
            }
            if let Some(placed) = self.fit_during(request, t, length) {
                return Some((t, placed));
            }
            let changes = nodes
                .iter()
                .filter_map(|&n| self.profile[n].next_change_after(t));
            t = changes.min()?;
        }
    }

    /// Whether [`Space::earliest`] could find a start before `before` for a job that holds
    /// the reservation `own` from `before` for `length` (still in the profile), given room
    /// freed `through` these nodes: `false` only when it surely finds none, because no freed
    /// node the job may use has room for its part before its time — on its own nodes with its
    /// own use taken off every step that overlaps its reservation, which can only add room.
    /// Compression asks this first and leaves the many reservations that cannot move where
    /// they are, rather than taking each out of the profile and putting it back.
    pub(super) fn may_move(
        &self,
        request: &Request,
        now: Time,
        length: u64,
        before: Time,
        through: &[(usize, Time)],
        own: &Placed,
    ) -> bool {
        let eligible = |i: usize| request.eligible.as_ref().is_none_or(|e| e[i]);
        let Some(until) = through.iter().map(|(_, until)| *until).max() else {
            return false;
        };
        let reserved = (before, before.plus_micros(length.max(1)));
        let before = before.min(until);
        through
            .iter()
            .filter(|(n, _)| eligible(*n))
            .any(|&(n, until)| {
                let capacity = &self.nodes[n].capacity;
                let mine = own.iter().find(|(o, _)| *o == n).map(|(_, amount)| amount);
                let fits = |(from, to): (Time, Time), used: &[f64]| match mine {
                    Some(mine) if from < reserved.1 && to > reserved.0 => {
                        part_fits_without(request, capacity, used, mine)
                    }
                    _ => part_fits(request, capacity, used),
                };
                let room =
                    self.profile[n].first_room_by(now, Some(before.min(until)), length, fits);
                room.is_some()
            })
    }

    /// The earliest start before `before` at which `request` fits, found the obvious way:
    /// trying `now` and every later time at which some node's use changes, in full. The
    /// reference [`Space::earliest`] is checked against in debug builds.
    #[cfg(debug_assertions)]
    pub(super) fn earliest_by_trying_every_start(
        &mut self,
        request: &Request,
        now: Time,
        length: u64,
        before: Time,
    ) -> Option<(Time, Placed)> {
        let mut times: Vec<Time> = self
            .profile
            .iter()
            .flat_map(|p| p.changes_after(now))
            .collect();
        times.push(now);
        times.sort_unstable();
        times.dedup();
        times
            .into_iter()
            .take_while(|t| *t < before)
            .find_map(|t| Some((t, self.fit_during(request, t, length)?)))
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
        for (node, amount) in placed {
            self.profile[*node].add(from, to, amount, sign);
        }
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

/// Places `request` on `nodes` (whose `used` say what is taken; changed as the job is placed)
/// by asking `placement` for one node at a time.
fn fit(placement: &dyn Placement, request: &Request, nodes: &mut [Node]) -> Option<Placed> {
    for (i, node) in nodes.iter_mut().enumerate() {
        let allowed = request.eligible.as_ref().is_none_or(|e| e[i]);
        node.closed = !allowed || (request.exclusive && !node.is_empty());
    }
    let (mut left, each, spread) = match &request.shape {
        Shape::Nodes { nodes, per_node } => (*nodes, per_node, false),
        Shape::Spread { units, per_unit } => (*units, per_unit, true),
    };
    let mut placed = Vec::new();
    while left > 0 {
        let node = placement.select_node(each, nodes)?;
        let chosen = nodes.get_mut(node)?;
        if !chosen.has_room(each) {
            return None;
        }
        let count = if spread {
            units_that_fit(chosen, each).min(left)
        } else {
            1
        };
        let amount: Vec<f64> = if request.exclusive {
            chosen.capacity.clone()
        } else {
            each.iter().map(|d| d * f64::from(count)).collect()
        };
        take(&mut chosen.used, &amount);
        chosen.closed = true;
        placed.push((node, amount));
        left -= count;
    }
    Some(placed)
}

/// Whether a node of `capacity` using `used` has room for its part of `request` (one node's
/// share, or one processor): the planning view, in which no node is closed.
fn part_fits(request: &Request, capacity: &[f64], used: &[f64]) -> bool {
    part_fits_beside(request, capacity, used.iter().copied())
}

/// [`part_fits`] with `mine` taken off `used`.
fn part_fits_without(request: &Request, capacity: &[f64], used: &[f64], mine: &[f64]) -> bool {
    part_fits_beside(request, capacity, used.iter().zip(mine).map(|(u, m)| u - m))
}

/// [`part_fits`] for a node using `used`, given resource by resource.
fn part_fits_beside(
    request: &Request,
    capacity: &[f64],
    used: impl Iterator<Item = f64> + Clone,
) -> bool {
    let room = used
        .clone()
        .zip(request.piece())
        .zip(capacity)
        .all(|((u, d), c)| u + d <= c + FIT_SLACK);
    room && (!request.exclusive || used.into_iter().all(|u| u <= FIT_SLACK))
}

/// How many units of `each` fit on `node` beside what it holds (at least one, as the
/// placement chose it).
fn units_that_fit(node: &Node, each: &[f64]) -> u32 {
    let free = node.capacity.iter().zip(&node.used).zip(each);
    let fits = free
        .filter(|(_, d)| **d > 0.0)
        .map(|((c, u), d)| ((c - u + FIT_SLACK) / d).floor())
        .fold(f64::from(u32::MAX), f64::min);
    (fits.max(1.0)) as u32
}

/// Takes `demand` off `used`, never below zero.
fn release(used: &mut [f64], demand: &[f64]) {
    used.iter_mut()
        .zip(demand)
        .for_each(|(u, d)| *u = (*u - d).max(0.0));
}

/// Adds `demand` to `used`.
fn take(used: &mut [f64], demand: &[f64]) {
    used.iter_mut().zip(demand).for_each(|(u, d)| *u += d);
}

#[cfg(test)]
mod tests {
    use super::super::placement::{BestFit, FirstFit};
    use super::*;
    use fairshare_core::model::NodeType;

    /// One machine per capacity vector, the i-th with property `p{i}`.
    fn machines(nodes: Vec<Vec<f64>>) -> Capacity {
        let types = nodes
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let mut node = NodeType::new(format!("m{i}"), 1, c);
                node.properties = vec![format!("p{i}")];
                node
            })
            .collect();
        Capacity::Machines(MachineCatalogue::new(types))
    }

    fn names() -> Vec<String> {
        vec!["cpu".into(), "mem".into()]
    }

    fn space(nodes: Vec<Vec<f64>>, placement: Arc<dyn Placement>) -> Space {
        Space::new(&machines(nodes), &names(), placement, true).unwrap()
    }

    /// The request of `cpus` processors with `mem` in raw units.
    fn request(space: &mut Space, raw: [f64; 2], nodes: Option<u32>, exclusive: bool) -> Request {
        let demand = space.normalise(&raw).unwrap();
        space.request(raw[0], demand, nodes, exclusive, &[]).0
    }

    #[test]
    fn one_node_tasks_place_first_fit_and_release() {
        let mut space = space(vec![vec![4.0, 4.0], vec![4.0, 4.0]], Arc::new(FirstFit));
        let task = request(&mut space, [2.5, 1.0], Some(1), false);
        let first = space.fit_now(&task).unwrap();
        assert_eq!(first[0].0, 0);
        space.take(&first);
        let second = space.fit_now(&task).unwrap();
        assert_eq!(second[0].0, 1);
        space.take(&second);
        assert_eq!(
            space.fit_now(&task),
            None,
            "room is left, but on no one node"
        );
        space.release(&first);
        assert_eq!(space.fit_now(&task).unwrap()[0].0, 0);
        let too_big = request(&mut space, [5.0, 1.0], Some(1), false);
        assert!(!space.could_ever_fit(&too_big));
    }

    #[test]
    fn a_parallel_job_spreads_its_processors_over_nodes_of_two_sizes() {
        // 8 + 4 processors; a 10-processor job takes all 8 of the first and 2 of the second.
        let mut space = space(vec![vec![8.0, 8.0], vec![4.0, 4.0]], Arc::new(FirstFit));
        let job = request(&mut space, [10.0, 10.0], None, false);
        let placed = space.fit_now(&job).unwrap();
        let nodes: Vec<usize> = placed.iter().map(|(n, _)| *n).collect();
        assert_eq!(nodes, vec![0, 1]);
        assert!((placed[0].1[0] - 8.0 / 12.0).abs() < 1e-12);
        assert!((placed[1].1[0] - 2.0 / 12.0).abs() < 1e-12);
        // Asked as 2 nodes × 5, it cannot use the 4-processor node: never fits.
        let shaped = request(&mut space, [10.0, 2.0], Some(2), false);
        assert!(!space.could_ever_fit(&shaped));
        // 2 nodes × 3 fits on both.
        let small = request(&mut space, [6.0, 2.0], Some(2), false);
        assert_eq!(space.fit_now(&small).map(|p| p.len()), Some(2));
    }

    #[test]
    fn an_exclusive_job_takes_empty_nodes_whole() {
        let mut space = space(vec![vec![4.0, 4.0], vec![4.0, 4.0]], Arc::new(FirstFit));
        let small = request(&mut space, [1.0, 1.0], Some(1), false);
        let placed = space.fit_now(&small).unwrap();
        space.take(&placed);
        let exclusive = request(&mut space, [1.0, 1.0], Some(1), true);
        let whole = space.fit_now(&exclusive).unwrap();
        assert_eq!(whole[0].0, 1, "the busy node is not empty");
        assert_eq!(
            whole[0].1,
            vec![0.5, 0.5],
            "the whole node: half the cluster"
        );
        space.take(&whole);
        assert_eq!(space.fit_now(&exclusive), None);
        assert_eq!(
            space.fit_now(&small).unwrap()[0].0,
            0,
            "nobody shares node 1"
        );
    }

    #[test]
    fn properties_restrict_the_nodes_and_unknown_ones_are_not_enforced() {
        let mut space = space(vec![vec![4.0, 4.0], vec![4.0, 4.0]], Arc::new(FirstFit));
        let demand = space.normalise(&[1.0, 1.0]).unwrap();
        let (on_p1, unknown) = space.request(1.0, demand.clone(), Some(1), false, &["p1".into()]);
        assert!(!unknown);
        assert_eq!(space.fit_now(&on_p1).unwrap()[0].0, 1);
        let (anywhere, unknown) = space.request(1.0, demand, Some(1), false, &["x86_64".into()]);
        assert!(unknown);
        assert_eq!(space.fit_now(&anywhere).unwrap()[0].0, 0);
    }

    #[test]
    fn best_fit_packs_the_busiest_node() {
        let mut space = space(vec![vec![8.0, 8.0], vec![8.0, 8.0]], Arc::new(BestFit));
        let big = request(&mut space, [6.0, 6.0], Some(1), false);
        let placed = space.fit_now(&big).unwrap();
        space.take(&placed);
        let small = request(&mut space, [1.0, 1.0], Some(1), false);
        assert_eq!(space.fit_now(&small).unwrap()[0].0, placed[0].0);
    }

    #[test]
    fn the_earliest_start_follows_the_profile() {
        let mut space = space(vec![vec![4.0, 4.0]], Arc::new(FirstFit));
        let t = Time::from_micros;
        let half = request(&mut space, [2.0, 2.0], Some(1), false);
        let busy = space.fit_now(&half).unwrap();
        space.take(&busy);
        space.expect(&busy, t(0), t(100), 1.0);
        space.expect(&busy, t(0), t(50), 1.0);
        let whole = request(&mut space, [4.0, 4.0], Some(1), false);
        assert_eq!(
            space.earliest(&whole, t(0), 10, None, None).map(|f| f.0),
            Some(t(100))
        );
        assert_eq!(
            space.earliest(&half, t(0), 10, None, None).map(|f| f.0),
            Some(t(50))
        );
    }

    #[test]
    fn pool_checks_capacity() {
        let pool =
            |c: Vec<f64>| Space::new(&Capacity::Pool(c), &names(), Arc::new(FirstFit), false);
        let expected = "capacity: mem has a total capacity of 0; expected a positive finite amount";
        assert_eq!(pool(vec![1.0, 0.0]).err().unwrap().to_string(), expected);
        let huge = machines(vec![vec![1.0, f64::MAX], vec![1.0, f64::MAX]]);
        assert!(Space::new(&huge, &names(), Arc::new(FirstFit), false).is_err());
        assert!(pool(vec![1.0]).is_err());
        let many = NodeType::new("m", u32::MAX, vec![1.0, 1.0]);
        let catalogue = Capacity::Machines(MachineCatalogue::new(vec![many]));
        let refused = Space::new(&catalogue, &names(), Arc::new(FirstFit), false).err();
        assert!(refused.unwrap().to_string().contains("at most 1000000"));
        assert!(Space::new(&machines(vec![]), &names(), Arc::new(FirstFit), false).is_err());
    }
}
