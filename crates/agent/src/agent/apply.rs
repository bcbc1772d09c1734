//! Applying: each workload's knobs written where they changed, within the step a knob may move
//! in one cycle, and remembered.

use super::*;

impl Agent {
    /// Writes every present workload's knobs from its priority (0, neutral, if it has none
    /// yet), each value clamped to the knob's range. A value within `knob_step` of the one
    /// written is not a change: nothing is written except every `rewrite_every` cycles,
    /// when the value held is written again.
    pub(super) fn apply(&mut self, present: &[ManagedCgroup], report: &mut CycleReport) {
        let rewrite =
            self.cycles % self.config.rewrite_every == 1 || self.config.rewrite_every == 1;
        let knobs = self.layout.knobs.clone();
        for w in present {
            let priority = self.priorities.get(&w.id).copied().unwrap_or(0);
            for (k, knob) in knobs.iter().enumerate() {
                let new = knob.value(priority, w.memory_size as u64);
                let before = self.written.get(w.id.as_str()).and_then(|v| *v.get(k)?);
                let value = match before {
                    Some(old) if self.within_step(knob, w, old, new) => {
                        if old != new {
                            report.held += 1;
                        }
                        old
                    }
                    _ => new,
                };
                if !rewrite && !self.dry_run && before == Some(value) {
                    continue;
                }
                let write = Write {
                    workload: w.id.clone(),
                    owner: w.owner.clone(),
                    priority,
                    file: knob.file.clone(),
                    value,
                };
                if self.dry_run {
                    report.writes.push(write);
                    continue;
                }
                match self.files.write(knob, k, &w.cgroup, w.inode, value) {
                    Ok(()) => {
                        self.remember(&w.id, k, value);
                        report.writes.push(write);
                    }
                    Err(e) if cgroup::out_of_files(&e) => {
                        report.refused += 1;
                        self.say_once(
                            "write: out of files",
                            &format!("{} of {} could not be opened: {e}: the agent has too many files open (raise LimitNOFILE)", knob.file, w.cgroup),
                        );
                    }
                    Err(_) if !cgroup::exists(&self.layout, &w.cgroup) => {
                        report.vanished += 1;
                        break;
                    }
                    Err(e) => {
                        report.refused += 1;
                        let io = if e.kind() == ErrorKind::NotFound {
                            "no such file".to_string()
                        } else {
                            e.to_string()
                        };
                        self.say_once(
                            &format!("refused {}", knob.file),
                            &format!("the kernel refused {value} for {} of {}: {io}; further refusals of {} are not reported", knob.file, w.cgroup, knob.file),
                        );
                    }
                }
            }
        }
        let present: FxHashSet<&str> = present.iter().map(|w| w.id.as_str()).collect();
        self.written.retain(|id, _| present.contains(id.as_str()));
    }

    /// Remembers `value` as written to the `k`-th knob of workload `id`.
    pub(super) fn remember(&mut self, id: &str, k: usize, value: u64) {
        // Looked up before inserting: a key made for each write would be an allocation.
        let values = match self.written.get_mut(id) {
            Some(values) => values,
            None => self.written.entry(id.to_string()).or_default(),
        };
        if let Some(slot) = values.get_mut(k) {
            *slot = Some(value);
        }
    }

    /// Whether `new` lies within `knob_step` of the knob's full scale from `old`.
    pub(super) fn within_step(&self, knob: &Knob, w: &ManagedCgroup, old: u64, new: u64) -> bool {
        let scale = knob.full_scale(w.memory_size as u64) as f64;
        (old.abs_diff(new) as f64) <= self.config.knob_step * scale
    }
}
