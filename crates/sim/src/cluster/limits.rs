//! Limits on what groups of jobs may hold at once, as a site caps associations and QOS (Slurm's
//! `GrpTRES`, `MaxJobs`, `MaxTRESPerUser`, …): a job that would take its group past a cap waits,
//! passed over without blocking anyone else and without a reservation, until the group's
//! running jobs end or the cap is raised. A limit lets a job go when the job completes or is
//! killed, while its nodes are still being released, as Slurm's accounting policy does
//! (`acct_policy_job_fini`). A site's limits say nothing of policies, so they live apart from
//! them, and a run holds them whatever its policy.

use fairshare_core::model::Time;

/// A cap on what the running jobs of one scope may hold at once.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// What it is, as the site names it (`account physics: GrpTRES=cpu=64`).
    pub name: String,
    /// Whose jobs it counts.
    pub scope: Scope,
    /// Its caps from each moment on, in time order; before the first, none.
    pub caps: Vec<(Time, Cap)>,
}

/// Whose jobs a limit counts: every condition given must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    /// Jobs of these users only (`None`: of any user).
    pub users: Option<Vec<u32>>,
    /// Jobs of this QOS only (the trace's index).
    pub qos: Option<u32>,
    /// Jobs of this partition only (the trace's index).
    pub partition: Option<u32>,
    /// Whether each user's jobs are counted apart (a QOS's `MaxJobsPerUser`), or, given one
    /// group index per user, each group's (a QOS's `MaxJobsPerAccount`); empty and `false`:
    /// all together.
    pub each_user: bool,
    /// Each user's group, by user index, when each group is counted apart.
    pub groups: Vec<u32>,
}

/// What a limit lets its scope's running jobs hold at most.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cap {
    /// Running jobs.
    pub jobs: Option<u64>,
    /// Each resource, in the trace's units, by the run's resource index (`None`: no cap).
    pub held: Vec<Option<f64>>,
}

impl Scope {
    /// Whether the jobs of `user` in `qos` and `partition` count.
    pub fn counts(&self, user: u32, qos: Option<u32>, partition: Option<u32>) -> bool {
        self.users.as_ref().is_none_or(|u| u.contains(&user))
            && self.qos.is_none_or(|q| qos == Some(q))
            && self.partition.is_none_or(|p| partition == Some(p))
    }

    /// Which of the scope's counts a job of `user` goes to.
    fn key(&self, user: u32) -> u32 {
        match (self.each_user, self.groups.get(user as usize)) {
            (true, _) => user,
            (false, Some(group)) => *group,
            (false, None) => 0,
        }
    }
}

impl Limit {
    /// Its cap at `now`, if any.
    fn cap(&self, now: Time) -> Option<&Cap> {
        let from = self.caps.partition_point(|(t, _)| *t <= now);
        from.checked_sub(1).map(|i| &self.caps[i].1)
    }
}

/// What the running jobs of every limit's scopes hold, as a run goes.
#[derive(Debug, Clone, Default)]
pub(super) struct Held {
    limits: Vec<Limit>,
    /// Per limit, per count of its scope (indexed by its key, a user's or a group's index):
    /// the running jobs and what they hold.
    counts: Vec<Vec<(u64, Vec<f64>)>>,
}

impl Held {
    /// Nothing held under `limits`.
    pub(super) fn new(limits: &[Limit]) -> Held {
        Held {
            limits: limits.to_vec(),
            counts: vec![Vec::new(); limits.len()],
        }
    }

    /// The limits a job of `user` in `qos` and `partition` counts against, by index.
    pub(super) fn of(&self, user: u32, qos: Option<u32>, partition: Option<u32>) -> Vec<u16> {
        let counting = self.limits.iter().enumerate();
        let counting = counting.filter(|(_, l)| l.scope.counts(user, qos, partition));
        counting.map(|(i, _)| i as u16).collect()
    }

    /// The moments at which a cap changes after the start, when a pass may start jobs a
    /// lower cap held.
    pub(super) fn changes(&self) -> impl Iterator<Item = Time> + '_ {
        self.limits
            .iter()
            .flat_map(|l| l.caps.iter().skip(1).map(|(t, _)| *t))
    }

    /// The first of `limits` that a job of `user` holding `demand` (trace units) would take
    /// past its cap at `now`, if any.
    pub(super) fn holding_back(
        &self,
        limits: &[u16],
        user: u32,
        demand: &[f64],
        now: Time,
    ) -> Option<usize> {
        limits.iter().map(|&l| l as usize).find(|&l| {
            let limit = &self.limits[l];
            let Some(cap) = limit.cap(now) else {
                return false;
            };
            let count = self.counts[l].get(limit.scope.key(user) as usize);
            let (jobs, held) = count.map_or((0, &[][..]), |(j, h)| (*j, h.as_slice()));
            let too_many = cap.jobs.is_some_and(|most| jobs + 1 > most);
            let too_much = (cap.held.iter().enumerate()).any(|(r, most)| {
                let now = held.get(r).copied().unwrap_or(0.0);
                let more = demand.get(r).copied().unwrap_or(0.0);
                most.is_some_and(|most| more > 0.0 && now + more > most + 1e-9)
            });
            too_many || too_much
        })
    }

    /// A job of `user` holding `demand` started (`sign` 1) or ended (−1) under `limits`.
    pub(super) fn count(&mut self, limits: &[u16], user: u32, demand: &[f64], sign: f64) {
        for &l in limits {
            let key = self.limits[l as usize].scope.key(user) as usize;
            let counts = &mut self.counts[l as usize];
            if counts.len() <= key {
                counts.resize(key + 1, (0, Vec::new()));
            }
            let (jobs, held) = &mut counts[key];
            match sign > 0.0 {
                true => *jobs += 1,
                false => *jobs = jobs.saturating_sub(1),
            }
            held.resize(held.len().max(demand.len()), 0.0);
            for (h, d) in held.iter_mut().zip(demand) {
                *h = (*h + sign * d).max(0.0);
            }
        }
    }

    /// The name of limit `l`.
    pub(super) fn name(&self, l: usize) -> &str {
        &self.limits[l].name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(jobs: Option<u64>, cpus: Option<f64>) -> Cap {
        Cap {
            jobs,
            held: vec![cpus],
        }
    }

    /// A group's processors and a user's jobs are counted apart, a raised cap lets more
    /// through from its moment, and a job that asks for none of a capped resource passes it.
    #[test]
    fn caps_count_their_scopes_jobs_from_their_moments() {
        let group = Limit {
            name: "account a: GrpTRES=cpu=8".into(),
            scope: Scope {
                users: Some(vec![0, 1]),
                ..Scope::default()
            },
            caps: vec![(Time::ZERO, cap(None, Some(8.0)))],
        };
        let per_user = Limit {
            name: "qos q: MaxJobsPerUser=1".into(),
            scope: Scope {
                qos: Some(3),
                each_user: true,
                ..Scope::default()
            },
            caps: vec![
                (Time::ZERO, cap(Some(1), None)),
                (Time::from_secs_f64(100.0), cap(Some(2), None)),
            ],
        };
        let mut held = Held::new(&[group, per_user]);
        assert_eq!(held.of(0, Some(3), None), [0, 1]);
        assert_eq!(held.of(2, None, None), Vec::<u16>::new());
        let (early, late) = (Time::from_secs_f64(50.0), Time::from_secs_f64(100.0));
        assert_eq!(held.holding_back(&[0, 1], 0, &[6.0], early), None);
        held.count(&[0, 1], 0, &[6.0], 1.0);
        assert_eq!(held.holding_back(&[0], 1, &[4.0], early), Some(0), "8 cpus");
        assert_eq!(held.holding_back(&[0], 1, &[2.0], early), None);
        assert_eq!(held.holding_back(&[1], 0, &[1.0], early), Some(1), "1 job");
        assert_eq!(
            held.holding_back(&[1], 1, &[1.0], early),
            None,
            "user 1 apart"
        );
        assert_eq!(held.holding_back(&[1], 0, &[1.0], late), None, "raised");
        assert_eq!(held.holding_back(&[0], 1, &[0.0], early), None);
        held.count(&[0, 1], 0, &[6.0], -1.0);
        assert_eq!(held.holding_back(&[0, 1], 0, &[8.0], early), None);
        assert_eq!(held.changes().collect::<Vec<_>>(), [late]);
    }
}
