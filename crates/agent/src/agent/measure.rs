//! Measuring: the workloads under each parent cgroup, their limits and counters, and the
//! interval's usage from them.

use super::*;

impl Agent {
    /// The workloads under every parent whose owner the rule names.
    pub(super) fn discover(&mut self) -> Vec<ManagedCgroup> {
        let mut found = Vec::new();
        let mut ids = BTreeSet::new();
        let several = self.config.parents.len() > 1;
        for (p, parent) in self.config.parents.clone().iter().enumerate() {
            let children = self.list(parent);
            for (name, inode) in &children {
                let Some(w) = self.managed_cgroup(p, parent, name, *inode) else {
                    continue;
                };
                // Names are unique within a parent: ids can clash only across parents.
                if several && !ids.insert(w.id.clone()) {
                    let cgroup = &w.cgroup;
                    self.say_once(&format!("twice {cgroup}"), &format!("{cgroup}: another parent has a child of the same name; only the first is a workload"));
                    continue;
                }
                found.push(w);
            }
            self.listed.insert(parent.clone(), children);
        }
        for known in &mut self.known {
            known.retain(|_, (seen, _)| *seen == self.cycles);
        }
        found
    }

    /// The managed cgroup of child `name` (directory inode `inode`) of the `p`-th parent: as found
    /// in an earlier cycle if it is the same directory, else named anew from the owner rule
    /// and sized from its limits (`None`, said once, when the rule names no owner or the id is
    /// too long). Every `rewrite_every` cycles each is named and sized anew, so that changed
    /// limits are seen.
    pub(super) fn managed_cgroup(
        &mut self,
        p: usize,
        parent: &str,
        name: &str,
        inode: u64,
    ) -> Option<ManagedCgroup> {
        let anew = self.cycles % self.config.rewrite_every == 1 || self.config.rewrite_every == 1;
        if let Some((seen, w)) = self.known[p]
            .get_mut(name)
            .filter(|(_, w)| w.inode == inode && !anew)
        {
            *seen = self.cycles;
            return Some(w.clone());
        }
        let cgroup = format!("{parent}/{name}");
        let Some(owner) = self.owners.owner_of(name) else {
            self.say_once(
                &format!("owner {cgroup}"),
                &format!("{cgroup}: the owner rule names no owner; left alone"),
            );
            return None;
        };
        let owner = escape(&owner);
        let id = format!("{}:{}", self.node, escape(name));
        if !valid_id(&id) || !valid_id(&owner) {
            self.say_once(&format!("id {cgroup}"), &format!("{cgroup}: its id {id:?} or owner {owner:?} is longer than 128 characters once escaped; left alone"));
            return None;
        }
        let (cpu_size, memory_size) = self.limits(&cgroup);
        let w = ManagedCgroup {
            id,
            cgroup,
            owner,
            cpu_size,
            memory_size,
            inode,
        };
        self.known[p].insert(name.to_string(), (self.cycles, w.clone()));
        Some(w)
    }

    /// The children of a parent, or, when it cannot be listed (out of file descriptors, say),
    /// the children of its last listing: a failed listing never drops a workload.
    pub(super) fn list(&mut self, parent: &str) -> Vec<(String, u64)> {
        match self.layout.children(parent) {
            Ok(children) => children,
            Err(e) => {
                let why = if cgroup::out_of_files(&e) {
                    format!("{e}: the agent has too many files open (raise LimitNOFILE)")
                } else {
                    e.to_string()
                };
                self.say_once(
                    &format!("list {parent}"),
                    &format!("{parent} cannot be listed: {why}; keeping its last listing"),
                );
                self.listed.remove(parent).unwrap_or_default()
            }
        }
    }

    /// A workload's virtual size: its cgroup's limits where set and wanted, else the default.
    pub(super) fn limits(&self, cgroup: &str) -> (f64, f64) {
        let size = self.config.size;
        let limit = |place: &Option<Place>| {
            let place = place.as_ref().filter(|_| size.from_limits)?;
            cgroup::read(place, cgroup)
                .ok()
                .flatten()
                .filter(|v| *v > 0.0)
        };
        (
            limit(&self.layout.cpu_limit).unwrap_or(size.cpu),
            limit(&self.layout.memory_limit).unwrap_or(size.memory),
        )
    }

    /// A workload's counters. A counter that cannot be read leaves the workload unmeasured
    /// this cycle (said once): its previous reading stays, so the next good one covers both
    /// intervals and nothing is lost or counted twice.
    pub(super) fn read(&mut self, w: &ManagedCgroup) -> Read {
        let mut values = [0.0; 3];
        let places = [
            &self.layout.cpu_usage,
            &self.layout.io_usage,
            &self.layout.memory_usage,
        ];
        let mut trouble = None;
        for (slot, (value, place)) in values.iter_mut().zip(places).enumerate() {
            let Some(place) = place else { continue };
            match self.files.read(place, slot, &w.cgroup, w.inode) {
                Ok(v) => *value = v.unwrap_or(0.0),
                Err(_) if !cgroup::exists(&self.layout, &w.cgroup) => return Read::Gone,
                Err(e) => {
                    trouble = Some(format!("{}: {e}", place.path(&w.cgroup).display()));
                    break;
                }
            }
        }
        if let Some(trouble) = trouble {
            let message = format!("{trouble}; the workload is not measured until it can be read");
            self.say_once(&trouble, &message);
            return Read::Unreadable;
        }
        let [cpu_s, io_bytes, memory_bytes] = values;
        Read::Counters(Reading {
            inode: w.inode,
            cpu_s,
            io_bytes,
            memory_bytes,
        })
    }

    /// A usage as the amounts of every configured resource, each at most what the node could
    /// have given in the interval (a report over it would be refused as absurd).
    pub(super) fn amounts(&mut self, id: &str, u: &Usage, interval: f64) -> Vec<f64> {
        let resources = self.config.resources.clone();
        resources
            .iter()
            .map(|r| {
                let (amount, most) = match r.kind {
                    ResourceKind::Cpu => (u.cpu_s, self.supply.cpu * interval),
                    ResourceKind::Memory => (u.memory_bytes, self.supply.memory),
                    ResourceKind::Disk => (u.io_bytes, self.supply.disk * interval),
                    ResourceKind::Network | ResourceKind::Other => (0.0, 0.0),
                };
                if amount > most {
                    self.say_once(
                        &format!("over {}", r.name),
                        &format!("workload {id} used more {} than the node's configured supply gives; counted at the supply (set supply.{} to the node's real value)", r.name, kind_key(r.kind)),
                    );
                }
                amount.min(most)
            })
            .collect()
    }
}
