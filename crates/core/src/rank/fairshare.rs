//! The production fairshare factors as a ranker, so that the batch engine replays them like
//! any other policy: MetaCentrum's `shares / usage`, PBS Pro's and Slurm classic's `2^(−U/S)`,
//! Slurm's Fair Tree, and a Kueue-style order with an entry penalty (`spec/metacentrum.md`
//! §5–§7; the factors themselves are [`crate::priority::fairshare`]'s).
//!
//! Usage is charged by jobs, as batch systems charge it: the engine meters each job with the
//! policy's [`UsageMetric`](crate::usage::metric::UsageMetric) and reports its starts and finishes;
//! the ranker charges the job as it runs (Slurm) or all at once when it finishes (the Alea
//! simulator), decays it, and recomputes every user's factor up the account tree at every
//! decision or every so many seconds (Slurm's `PriorityCalcPeriod`, Alea's hourly refresh).
//! Each user's usage is kept in the [`Ledger`], in closed form, so time passing costs nothing
//! until priorities are recomputed.

use super::{check_holdings, forward, Head, RankError, Ranker, Share};
use crate::choice::Choice;
use crate::model::{RawShares, Time};
use crate::priority::fairshare::{standings, validate, Association, FairshareFunction, TreeError};
use crate::priority::PriorityKey;
use crate::usage::decay::Decay;
use crate::usage::ledger::{Ledger, LedgerError};
use crate::usage::metric::{cpu, UsageMetric};
use std::cell::RefCell;
use std::collections::BTreeSet;

/// When a job's usage is charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Charging {
    /// Second by second as it runs (Slurm; reference T's per-cycle accrual).
    #[default]
    Running,
    /// All at once when it finishes (the Alea simulator).
    AtFinish,
}

impl Choice for Charging {
    const ALL: &'static [Charging] = &[Charging::Running, Charging::AtFinish];

    fn name(self) -> &'static str {
        match self {
            Charging::Running => "running",
            Charging::AtFinish => "finish",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Charging::Running => "usage accrues while a job runs (Slurm)",
            Charging::AtFinish => "a job is charged when it finishes (the Alea simulator)",
        }
    }
}

/// What a fairshare policy computes, from what, and when.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FairshareSettings {
    /// The factor that orders users.
    pub function: FairshareFunction,
    /// What a job is charged per second it runs.
    pub metric: UsageMetric,
    /// How usage fades.
    pub decay: Decay,
    /// When a job's usage counts.
    pub charging: Charging,
    /// Seconds between recomputations of the factors (0: at every decision).
    pub refresh_s: f64,
    /// Where the recomputations fall: this many seconds after each multiple of `refresh_s` on
    /// the run's clock (Slurm's decay thread runs `PriorityCalcPeriod` apart from whenever
    /// `slurmctld` started).
    pub refresh_offset_s: f64,
    /// Seconds of its usage a job is charged at once when it starts, on top of its usage
    /// (Kueue's entry penalty, which keeps one queue from taking every admission before its
    /// usage shows; 0: none).
    pub entry_penalty_s: f64,
}

impl Default for FairshareSettings {
    /// Slurm's defaults: Fair Tree, CPU time, a 7-day half-life, usage accrued as jobs run,
    /// factors recomputed every 5 minutes (`PriorityCalcPeriod`), no entry penalty.
    fn default() -> FairshareSettings {
        FairshareSettings {
            function: FairshareFunction::FAIR_TREE,
            metric: UsageMetric::new(&cpu::CPU),
            decay: Decay::Continuous {
                half_life_s: 7.0 * 86_400.0,
            },
            charging: Charging::Running,
            refresh_s: 300.0,
            refresh_offset_s: 0.0,
            entry_penalty_s: 0.0,
        }
    }
}

/// A share tree with a ranker's clients placed in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Accounts {
    tree: Vec<Association>,
    leaf: Vec<usize>,
}

impl Accounts {
    /// `tree` (the root first, parents before children; usage is ignored) with client `c` at
    /// association `leaf[c]`, which becomes a user.
    pub fn new(mut tree: Vec<Association>, leaf: Vec<usize>) -> Result<Accounts, TreeError> {
        tree.iter_mut().for_each(|a| a.usage = 0.0);
        if let Some(bad) = leaf.iter().position(|&l| l >= tree.len() || l == 0) {
            return Err(TreeError::Leaf(leaf[bad]));
        }
        for &l in &leaf {
            tree[l].user = true;
        }
        validate(&tree)?;
        Ok(Accounts { tree, leaf })
    }

    /// Every client a user under the root, with its weight as its shares.
    pub fn flat(shares: &[Share]) -> Accounts {
        let root = Association {
            parent: None,
            shares: RawShares::Count(1.0),
            usage: 0.0,
            user: false,
        };
        let users = shares.iter().map(|s| Association {
            parent: Some(0),
            shares: RawShares::Count(s.weight),
            usage: 0.0,
            user: true,
        });
        Accounts {
            tree: std::iter::once(root).chain(users).collect(),
            leaf: (1..=shares.len()).collect(),
        }
    }

    /// How many clients are placed in the tree.
    pub fn clients(&self) -> usize {
        self.leaf.len()
    }
}

/// Users ordered by a production fairshare factor over their decayed, job-charged usage.
#[derive(Debug, Clone)]
pub struct FairshareRanker {
    settings: FairshareSettings,
    accounts: Accounts,
    clock: Time,
    /// The clock in seconds.
    now: f64,
    /// Per client: its usage, and the usage per second its running jobs accrue.
    ledger: Ledger,
    running: Vec<u32>,
    heads: Vec<Option<Head>>,
    aside: Vec<bool>,
    keys: RefCell<Keys>,
}

/// Every client's sort key (lower first) as last computed.
#[derive(Debug, Clone, Default)]
struct Keys {
    /// When they were computed; `None`: they must be (again).
    at: Option<f64>,
    key: Vec<f64>,
    /// Every client's factor under the policy's function (larger first).
    factor: Vec<f64>,
    /// The waiting clients not set aside, first to last under these keys: built when first
    /// asked for, then kept up to date as heads change, so that choosing the first client
    /// after each start costs O(log n), not a scan of every client.
    order: Option<BTreeSet<Rank>>,
}

impl FairshareRanker {
    /// The clients of `accounts` under `settings`, with no usage.
    pub fn new(settings: FairshareSettings, accounts: Accounts) -> FairshareRanker {
        let n = accounts.clients();
        FairshareRanker {
            settings,
            accounts,
            clock: Time::ZERO,
            now: 0.0,
            ledger: Ledger::new(settings.decay, n, 1),
            running: vec![0; n],
            heads: vec![None; n],
            aside: vec![false; n],
            keys: RefCell::new(Keys::default()),
        }
    }

    /// A client's decayed usage now; `None` for a client the ranker does not have.
    pub fn usage(&self, client: u32) -> Option<f64> {
        ((client as usize) < self.ledger.clients()).then(|| self.usage_of(client as usize))
    }

    /// [`FairshareRanker::usage`] of a client known to be there.
    fn usage_of(&self, c: usize) -> f64 {
        self.ledger.usage_at(c, self.now).sum()
    }

    /// The rate a client's running jobs accrue.
    fn rate(&self, c: usize) -> f64 {
        self.ledger.rate(c)[0]
    }

    /// From now on a client's running jobs accrue `rate`.
    fn set_rate(&mut self, c: usize, rate: f64) -> Result<(), RankError> {
        let now = self.now;
        self.ledger
            .set_rate(c, now, &[rate])
            .map_err(|e| ledger_error(c, e))
    }

    /// Adds `amount` to a client's usage now (refused when the sum is no longer a finite
    /// number); the factors must be recomputed.
    fn add(&mut self, c: usize, amount: f64) -> Result<(), RankError> {
        if amount > 0.0 {
            let now = self.now;
            (self.ledger.charge(c, now, &[amount])).map_err(|e| ledger_error(c, e))?;
            self.stale();
        }
        Ok(())
    }

    /// Marks the factors for recomputation at the next decision, unless they are refreshed
    /// periodically.
    fn stale(&self) {
        if self.settings.refresh_s <= 0.0 {
            self.recompute();
        }
    }

    /// Marks the factors for recomputation at the next decision, whatever the refresh.
    fn recompute(&self) {
        self.keys.borrow_mut().at = None;
    }

    /// The keys, recomputed first when they are stale or a refresh period has begun.
    fn keys(&self) -> std::cell::Ref<'_, Keys> {
        let due = match self.keys.borrow().at {
            None => true,
            Some(at) => {
                let (period, offset) = (self.settings.refresh_s, self.settings.refresh_offset_s);
                let refresh = |t: f64| ((t - offset) / period).floor();
                period > 0.0 && refresh(self.now) > refresh(at)
            }
        };
        if due {
            self.refresh_keys();
        }
        self.keys.borrow()
    }

    /// Recomputes the keys now.
    fn refresh_keys(&self) {
        let (key, factor) = self.compute_keys();
        *self.keys.borrow_mut() = Keys {
            at: Some(self.now),
            key,
            factor,
            order: None,
        };
    }

    /// The last periodic refresh at or before `seconds` that the keys, once computed,
    /// predate, if it falls at or after the clock (keys never computed, or to be recomputed, are
    /// computed at the next decision, with what is known then).
    fn last_refresh_by(&self, seconds: f64) -> Option<f64> {
        let (period, offset) = (self.settings.refresh_s, self.settings.refresh_offset_s);
        if period <= 0.0 {
            return None;
        }
        let refresh = ((seconds - offset) / period).floor() * period + offset;
        let predated = self.keys.borrow().at.is_some_and(|at| at < refresh);
        (refresh >= self.now && refresh <= seconds && predated).then_some(refresh)
    }

    /// Every client's key from the factors of the whole tree now (its Fair Tree rank, or its
    /// factor negated: larger factors first), and its factor.
    fn compute_keys(&self) -> (Vec<f64>, Vec<f64>) {
        let mut tree = self.accounts.tree.clone();
        for (c, &leaf) in self.accounts.leaf.iter().enumerate() {
            tree[leaf].usage += self.usage_of(c);
        }
        // The tree was checked when the accounts were built and every charge is checked to
        // keep usage finite, so the standings cannot be refused; should they be, every client
        // ties and arrival order decides.
        let Ok(standings) = standings(&tree, self.settings.function) else {
            debug_assert!(false, "standings refused a checked tree");
            let n = self.ledger.clients();
            return (vec![0.0; n], vec![0.0; n]);
        };
        let leaves = self.accounts.leaf.iter().map(|&leaf| &standings[leaf]);
        let key = leaves.clone().map(|s| match s.rank {
            Some(rank) if self.settings.function.is_fair_tree() => rank as f64,
            _ => -s.factor,
        });
        (key.collect(), leaves.map(|s| s.factor).collect())
    }

    /// The waiting clients that are not set aside, first to last: by key, then by their head
    /// task's arrival.
    fn ranked(&self) -> Vec<u32> {
        self.ordered().iter().map(|(.., c)| *c).collect()
    }

    /// The waiting clients that are not set aside in order, under keys recomputed first if due.
    fn ordered(&self) -> std::cell::Ref<'_, BTreeSet<Rank>> {
        let built = self.keys().order.is_some();
        if !built {
            let order: BTreeSet<Rank> = self.waiting(&self.keys.borrow().key).collect();
            self.keys.borrow_mut().order = Some(order);
        }
        std::cell::Ref::map(self.keys.borrow(), |k| {
            k.order.as_ref().expect("the order was just built")
        })
    }

    /// Keeps the order, if built, as `client`'s head goes from `old` to `new`.
    fn reorder(&self, client: u32, old: Option<Head>, new: Option<Head>) {
        let mut keys = self.keys.borrow_mut();
        let Some(&key) = keys.key.get(client as usize) else {
            return;
        };
        let Some(order) = keys.order.as_mut() else {
            return;
        };
        let rank = |h: Head| (PriorityKey(key), h.arrival, h.seq, client);
        if let Some(old) = old {
            order.remove(&rank(old));
        }
        if let Some(new) = new {
            order.insert(rank(new));
        }
    }

    /// Each waiting client that is not set aside, with what orders it under `key`.
    fn waiting<'a>(&'a self, key: &'a [f64]) -> impl Iterator<Item = Rank> + 'a {
        (self.heads.iter().enumerate())
            .filter(|(c, _)| !self.aside[*c])
            .filter_map(|(c, head)| {
                let head = head.as_ref()?;
                Some((PriorityKey(key[c]), head.arrival, head.seq, c as u32))
            })
    }

    /// Checks a job's rate and the client.
    fn check_job(&self, client: u32, rate: f64) -> Result<usize, RankError> {
        check_holdings(client, &[rate], self.heads.len(), None)?;
        Ok(client as usize)
    }

    /// Whether usage changes with time alone (it decays).
    fn decays(&self) -> bool {
        self.settings.decay.factor(0.0, f64::MAX) < 1.0
    }
}

/// What orders a waiting client: its key, its head task's arrival and sequence number.
type Rank = (PriorityKey, Time, u64, u32);

impl Ranker for FairshareRanker {
    fn boxed_clone(&self) -> Box<dyn Ranker> {
        Box::new(self.clone())
    }

    fn advance(&mut self, now: Time) -> Result<(), RankError> {
        if forward(self.clock, now)? > self.clock {
            let seconds = now.as_micros() as f64 / 1e6;
            if let Some(refresh) = self.last_refresh_by(seconds) {
                // Nothing changed between the last event and this one: the factors of the
                // refresh are those of the usage at its instant, as Slurm's decay thread
                // computes them, whenever the next decision comes.
                self.now = refresh;
                self.refresh_keys();
            }
            self.clock = now;
            self.now = seconds;
            if (0..self.ledger.clients()).any(|c| self.rate(c) > 0.0) || self.decays() {
                self.stale();
            }
        }
        Ok(())
    }

    fn update(
        &mut self,
        client: u32,
        holdings: &[f64],
        head: Option<Head>,
    ) -> Result<(), RankError> {
        check_holdings(client, holdings, self.heads.len(), None)?;
        let old = std::mem::replace(&mut self.heads[client as usize], head);
        if !self.aside[client as usize] {
            self.reorder(client, old, head);
        }
        Ok(())
    }

    fn job_started(&mut self, client: u32, rate: f64) -> Result<(), RankError> {
        let c = self.check_job(client, rate)?;
        if self.settings.charging == Charging::Running {
            self.set_rate(c, self.rate(c) + rate)?;
            self.running[c] += 1;
        }
        let penalty = rate * self.settings.entry_penalty_s;
        self.add(c, penalty)?;
        if penalty > 0.0 {
            // The penalty exists to count before the next refresh: a client just admitted
            // must not take the next start too.
            self.recompute();
        }
        Ok(())
    }

    fn job_finished(&mut self, client: u32, rate: f64, ran_s: f64) -> Result<(), RankError> {
        let c = self.check_job(client, rate)?;
        match self.settings.charging {
            Charging::Running => {
                self.running[c] = self.running[c].saturating_sub(1);
                let left = if self.running[c] == 0 {
                    0.0
                } else {
                    (self.rate(c) - rate).max(0.0)
                };
                self.set_rate(c, left)
            }
            Charging::AtFinish => self.add(c, rate * ran_s.max(0.0)),
        }
    }

    fn first(&self) -> Option<u32> {
        self.ordered().first().map(|(.., c)| *c)
    }

    fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        Box::new(self.ranked().into_iter())
    }

    fn priority(&self, client: u32) -> Option<f64> {
        self.heads.get(client as usize)?.as_ref()?;
        Some(self.keys().key[client as usize])
    }

    fn factors(&self) -> Option<Vec<f64>> {
        Some(self.keys().factor.clone())
    }

    fn set_aside(&mut self, client: u32) {
        if let Some(aside) = self.aside.get_mut(client as usize) {
            if !*aside {
                *aside = true;
                self.reorder(client, self.heads[client as usize], None);
            }
        }
    }

    fn restore(&mut self) {
        if self.aside.iter().any(|a| *a) {
            self.aside.iter_mut().for_each(|a| *a = false);
            self.keys.borrow_mut().order = None;
        }
    }
}

/// A ledger's refusal as the ranker's: the client and what was wrong.
fn ledger_error(c: usize, error: LedgerError) -> RankError {
    RankError::Input {
        client: c as u32,
        problem: error.to_string(),
    }
}
