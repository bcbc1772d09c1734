//! What `fairshare agent` shows a person: the readiness check (`--check`), one line per thing
//! checked, and a cycle (`--once`, `--dry-run`) as a few lines. They are here, not in the
//! command, so that every table a person reads comes from this crate, from the agent's own
//! [`CheckItem`]s and [`CycleReport`]; the command runs the agent and prints what these
//! functions return (its JSON and its log lines stay with it).

use fairshare_agent::run::CheckItem;
use fairshare_agent::{CycleReport, Source};
use std::fmt::Write as _;

/// The readiness check, one line per item: its status right-aligned (`ok`, `warn`, `fail`),
/// what was checked, padded to the longest, and what was seen.
pub fn check_table(items: &[CheckItem]) -> String {
    let width = items
        .iter()
        .map(|i| i.what.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for CheckItem {
        what,
        status,
        detail,
    } in items
    {
        let _ = writeln!(out, "{status:>4}  {what:<width$}  {detail}");
    }
    out
}

/// One cycle for a person: a summary line (workloads, measured, interval, where the priorities
/// came from), then each user's heaviness, each knob written (or, in a dry run, that would be)
/// and why the daemon was not reached, if it was not.
pub fn cycle_text(report: &CycleReport) -> String {
    let mut s = format!(
        "cycle {}: {} workloads, {} measured over {}, priorities {}\n",
        report.cycle,
        report.workloads.len(),
        report.measured.len(),
        report
            .interval_s
            .map_or("no interval yet".to_string(), |i| format!("{i:.1} s")),
        match report.source {
            Source::Local => "computed here",
            Source::Daemon => "from the daemon",
            Source::Last => "kept from before",
        }
    );
    for (user, h) in &report.users {
        let _ = writeln!(s, "  user {user:<20} heaviness {h:>8.4}");
    }
    for w in &report.writes {
        let _ = writeln!(
            s,
            "  {:<32} {:<12} priority {:>3}  {} = {}",
            w.workload, w.owner, w.priority, w.file, w.value
        );
    }
    if let Some(e) = &report.daemon_error {
        let _ = writeln!(
            s,
            "  daemon: {e} ({} reports waiting)",
            report.pending_reports
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairshare_agent::agent::Supply;
    use fairshare_agent::cgroup::Layout;
    use fairshare_agent::fake::{FakeTree, Shape};
    use fairshare_agent::{Agent, AgentConfig, Write};
    use std::time::{Duration, Instant};

    fn item(status: &'static str, what: &str, detail: &str) -> CheckItem {
        CheckItem {
            what: what.into(),
            status,
            detail: detail.into(),
        }
    }

    /// The check of a hybrid host whose `cpuacct` lost a workload's folder: the items and the
    /// table `fairshare agent --check` printed for them before the table moved here (the
    /// fake tree's folder written as /sys/fs/cgroup).
    #[test]
    fn the_check_aligns_every_line_on_the_longest_check() {
        let items = [
            item("ok", "cgroups", "cgroup v1 controllers, hybrid: a v2 tree at /sys/fs/cgroup/unified with no controllers (used for nothing)"),
            item("ok", "measuring", "cpu from cpuacct.usage (/sys/fs/cgroup/cpuacct); memory from memory.usage_in_bytes (/sys/fs/cgroup/memory); io from blkio.throttle.io_service_bytes (/sys/fs/cgroup/blkio); network: not measured by cgroups (counted as 0)"),
            item("ok", "parent fs", "/sys/fs/cgroup/cpu/fs with 3 children, 3 of them workloads (the owner rule names an owner)"),
            item("fail", "counter cpuacct.usage", "1 of 3 cgroups cannot be used: /sys/fs/cgroup/cpuacct/fs/user-d.2/cpuacct.usage: No such file or directory (os error 2)"),
            item("ok", "counter memory.usage_in_bytes", "readable in all 3 checked"),
            item("ok", "counter blkio.throttle.io_service_bytes", "readable in all 3 checked"),
            item("ok", "knob cpu.shares", "writable in all 3 checked"),
            item("ok", "knob blkio.weight", "writable in all 3 checked"),
            item("ok", "knob memory.soft_limit_in_bytes", "writable in all 3 checked"),
            item("ok", "file limit", "3 workloads need about 146 open files (6 each, counters and knobs, and 128 more); the agent raises its limit to 20000 (its hard limit here; under systemd, LimitNOFILE)"),
            item("ok", "daemon", "none configured: standalone"),
        ];
        assert_eq!(
            check_table(&items),
            "  ok  cgroups                                  cgroup v1 controllers, hybrid: a v2 tree at /sys/fs/cgroup/unified with no controllers (used for nothing)
  ok  measuring                                cpu from cpuacct.usage (/sys/fs/cgroup/cpuacct); memory from memory.usage_in_bytes (/sys/fs/cgroup/memory); io from blkio.throttle.io_service_bytes (/sys/fs/cgroup/blkio); network: not measured by cgroups (counted as 0)
  ok  parent fs                                /sys/fs/cgroup/cpu/fs with 3 children, 3 of them workloads (the owner rule names an owner)
fail  counter cpuacct.usage                    1 of 3 cgroups cannot be used: /sys/fs/cgroup/cpuacct/fs/user-d.2/cpuacct.usage: No such file or directory (os error 2)
  ok  counter memory.usage_in_bytes            readable in all 3 checked
  ok  counter blkio.throttle.io_service_bytes  readable in all 3 checked
  ok  knob cpu.shares                          writable in all 3 checked
  ok  knob blkio.weight                        writable in all 3 checked
  ok  knob memory.soft_limit_in_bytes          writable in all 3 checked
  ok  file limit                               3 workloads need about 146 open files (6 each, counters and knobs, and 128 more); the agent raises its limit to 20000 (its hard limit here; under systemd, LimitNOFILE)
  ok  daemon                                   none configured: standalone
"
        );
        assert_eq!(check_table(&[]), "");
    }

    /// Two cycles of a standalone agent's dry run on a fake v1 tree (users d and e, d busy on
    /// CPU): the first has no interval yet, the second measures and writes.
    fn dry_run() -> [CycleReport; 2] {
        let dir = tempfile::tempdir().unwrap();
        let tree = FakeTree::new(dir.path(), Shape::V1).unwrap();
        for w in ["fs/user-d.1", "fs/user-d.2", "fs/user-e.1"] {
            tree.add(w).unwrap();
        }
        let file = dir.path().join("agent.toml");
        std::fs::write(&file, "parents = [\"fs\"]\n").unwrap();
        let config = AgentConfig::load(&file).unwrap();
        let supply = Supply {
            cpu: 4.0,
            memory: 16e9,
            disk: 500e6,
            network: 1.25e9,
            speed: 1.0,
        };
        let layout = Layout::detect(&tree.root).unwrap();
        let mut agent = Agent::new(config, layout, "n1".into(), supply, None, true).unwrap();
        let t0 = Instant::now();
        let first = agent.cycle(t0);
        tree.set("fs/user-d.1", 8.0, 1 << 20, 2 << 30).unwrap();
        tree.set("fs/user-d.2", 4.0, 0, 1 << 30).unwrap();
        tree.set("fs/user-e.1", 1.0, 0, 1 << 28).unwrap();
        [first, agent.cycle(t0 + Duration::from_secs(10))]
    }

    /// What the daemon's mode shows: priorities from the daemon, then the daemon unreachable
    /// with reports waiting (the report written by hand).
    fn daemon() -> [CycleReport; 2] {
        let write = |workload: &str, owner: &str, priority, file: &str, value| Write {
            workload: workload.into(),
            owner: owner.into(),
            priority,
            file: file.into(),
            value,
        };
        let fetched = CycleReport {
            cycle: 7,
            interval_s: Some(29.96),
            source: Source::Daemon,
            writes: vec![
                write(
                    "n2:slurm-job-1234567",
                    "a-rather-long-owner",
                    -50,
                    "cpu.weight",
                    10000,
                ),
                write(
                    "n2:a-workload-whose-name-is-longer-than-the-column",
                    "b",
                    3,
                    "io.weight",
                    85,
                ),
            ],
            ..CycleReport::default()
        };
        let unreachable = CycleReport {
            cycle: 8,
            interval_s: Some(30.04),
            source: Source::Last,
            pending_reports: 2,
            daemon_error: Some("http://daemon:8080/v1/usage: Connection refused".into()),
            ..CycleReport::default()
        };
        [fetched, unreachable]
    }

    /// The dry run's two cycles, as `fairshare agent --once --dry-run` printed them before the
    /// text moved here (the expected text is that code's output on these reports).
    #[test]
    fn a_dry_run_shows_the_heaviness_and_the_knobs() {
        let [first, second] = dry_run();
        assert_eq!(
            cycle_text(&first),
            "\
cycle 1: 3 workloads, 0 measured over no interval yet, priorities kept from before
  n1:user-d.1                      d            priority   0  cpu.shares = 1024
  n1:user-d.1                      d            priority   0  blkio.weight = 500
  n1:user-d.1                      d            priority   0  memory.soft_limit_in_bytes = 542113792
  n1:user-d.2                      d            priority   0  cpu.shares = 1024
  n1:user-d.2                      d            priority   0  blkio.weight = 500
  n1:user-d.2                      d            priority   0  memory.soft_limit_in_bytes = 542113792
  n1:user-e.1                      e            priority   0  cpu.shares = 1024
  n1:user-e.1                      e            priority   0  blkio.weight = 500
  n1:user-e.1                      e            priority   0  memory.soft_limit_in_bytes = 542113792
"
        );
        assert_eq!(
            cycle_text(&second),
            "\
cycle 2: 3 workloads, 3 measured over 10.0 s, priorities computed here
  user e                    heaviness  -0.2274
  user d                    heaviness   0.2274
  n1:user-d.1                      d            priority  11  cpu.shares = 798
  n1:user-d.1                      d            priority  11  blkio.weight = 390
  n1:user-d.1                      d            priority  11  memory.soft_limit_in_bytes = 425155624
  n1:user-d.2                      d            priority  11  cpu.shares = 798
  n1:user-d.2                      d            priority  11  blkio.weight = 390
  n1:user-d.2                      d            priority  11  memory.soft_limit_in_bytes = 425155624
  n1:user-e.1                      e            priority -28  cpu.shares = 1597
  n1:user-e.1                      e            priority -28  blkio.weight = 780
  n1:user-e.1                      e            priority -28  memory.soft_limit_in_bytes = 839825489
"
        );
    }

    /// Priorities from the daemon (names longer than their columns push the rest right), and
    /// the daemon unreachable with reports waiting; expected text from the command's old code.
    #[test]
    fn the_daemons_mode_says_where_priorities_came_from() {
        let [fetched, unreachable] = daemon();
        assert_eq!(
            cycle_text(&fetched),
            "\
cycle 7: 0 workloads, 0 measured over 30.0 s, priorities from the daemon
  n2:slurm-job-1234567             a-rather-long-owner priority -50  cpu.weight = 10000
  n2:a-workload-whose-name-is-longer-than-the-column b            priority   3  io.weight = 85
"
        );
        assert_eq!(
            cycle_text(&unreachable),
            "\
cycle 8: 0 workloads, 0 measured over 30.0 s, priorities kept from before
  daemon: http://daemon:8080/v1/usage: Connection refused (2 reports waiting)
"
        );
    }
}
