//! From cumulative counters to usage per interval. The kernel counts CPU time and bytes moved
//! since a cgroup was made; the agent reports what each workload used since the previous
//! cycle. A cgroup removed and made again under the same name restarts its counters: that is
//! told by its inode (a new cgroup is a new directory) or by a counter that went backwards, and
//! the new counters then count from zero instead of giving a negative or huge difference.

/// One reading of a workload's counters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Reading {
    /// The cgroup directory's inode, which a recreated cgroup changes.
    pub inode: u64,
    /// CPU-seconds since the cgroup was made.
    pub cpu_s: f64,
    /// Bytes read and written since the cgroup was made.
    pub io_bytes: f64,
    /// Memory in use now, in bytes.
    pub memory_bytes: f64,
}

/// What a workload used over one interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Usage {
    /// CPU-seconds.
    pub cpu_s: f64,
    /// Bytes read and written.
    pub io_bytes: f64,
    /// Memory in use at the interval's end, in bytes.
    pub memory_bytes: f64,
    /// Whether the counters restarted during the interval (the cgroup was recreated).
    pub reset: bool,
}

/// The usage between two readings of the same workload name.
pub fn usage(before: &Reading, now: &Reading) -> Usage {
    let reset =
        before.inode != now.inode || now.cpu_s < before.cpu_s || now.io_bytes < before.io_bytes;
    if reset {
        // The counters started at zero sometime in the interval.
        return Usage {
            cpu_s: now.cpu_s,
            io_bytes: now.io_bytes,
            memory_bytes: now.memory_bytes,
            reset,
        };
    }
    Usage {
        cpu_s: now.cpu_s - before.cpu_s,
        io_bytes: now.io_bytes - before.io_bytes,
        memory_bytes: now.memory_bytes,
        reset,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reading(inode: u64, cpu_s: f64, io_bytes: f64) -> Reading {
        Reading {
            inode,
            cpu_s,
            io_bytes,
            memory_bytes: 7.0,
        }
    }

    #[test]
    fn a_recreated_cgroup_counts_from_zero() {
        let u = usage(&reading(1, 100.0, 5e6), &reading(2, 3.0, 1e6));
        assert!(u.reset);
        assert_eq!((u.cpu_s, u.io_bytes), (3.0, 1e6));
        let backwards = usage(&reading(1, 100.0, 5e6), &reading(1, 120.0, 1e6));
        assert!(backwards.reset, "same inode, a counter went back");
    }

    proptest! {
        /// Usage is never negative, and over a run without resets the intervals add up to
        /// the counters' total advance.
        #[test]
        fn intervals_add_up(steps in prop::collection::vec((0u32..1_000_000, 0u32..1_000_000), 1..50)) {
            let mut now = reading(1, 0.0, 0.0);
            let (mut cpu, mut io) = (0.0, 0.0);
            for (dc, di) in steps {
                let next = reading(1, now.cpu_s + f64::from(dc) / 1e3, now.io_bytes + f64::from(di));
                let u = usage(&now, &next);
                prop_assert!(!u.reset && u.cpu_s >= 0.0 && u.io_bytes >= 0.0);
                cpu += u.cpu_s;
                io += u.io_bytes;
                now = next;
            }
            prop_assert!((cpu - now.cpu_s).abs() < 1e-6 * now.cpu_s.max(1.0));
            prop_assert_eq!(io, now.io_bytes);
        }

        /// Whatever two readings are, usage is finite and not negative.
        #[test]
        fn never_negative(a in (0u64..3, 0.0..1e12f64, 0.0..1e15f64), b in (0u64..3, 0.0..1e12f64, 0.0..1e15f64)) {
            let u = usage(&reading(a.0, a.1, a.2), &reading(b.0, b.1, b.2));
            prop_assert!(u.cpu_s >= 0.0 && u.io_bytes >= 0.0);
            prop_assert!(u.cpu_s.is_finite() && u.io_bytes.is_finite());
        }
    }
}
