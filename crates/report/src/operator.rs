//! The tables of the operator's commands against a running daemon: `fairshare top` (the live
//! ranking), `fairshare explain USER` (why a user is as heavy as they are) and `fairshare
//! nodes`, rendered from the daemon's own answers (the service's API model). They are here,
//! not in the commands, so that every table a person reads comes from this crate; the
//! commands fetch the answer and print what these functions return.
//!
//! Nothing here reads a clock: ages are measured against the `now_ms` the caller gives. Where
//! no agent reported the CPU weight it wrote, the weight shown is the one a node agent computes
//! from the workload's priority, which the caller gives as [`CpuKnob`]s (the agent's rule,
//! not the daemon's profile), so that this crate does not depend on the agent.

use crate::text::{fixed, significant, table};
use fairshare_wire::model::{Explanation, NodeStatus, Priorities, WorkloadPriority};
use std::collections::BTreeMap;

/// A node agent's CPU weight knob on one cgroup version: its file and the value it writes for
/// a priority.
#[derive(Debug, Clone)]
pub struct CpuKnob {
    /// The cgroup version, as shown: `v1` or `v2`.
    pub version: &'static str,
    /// The knob's file: `cpu.shares` (v1) or `cpu.weight` (v2).
    pub file: String,
    /// The value an agent writes for a priority (−50 the highest … 50).
    pub value: fn(i32) -> u64,
}

/// The ranking as `top` shows it at `now_ms` (milliseconds since the Unix epoch): a header
/// line, then at most `limit` users, lightest first; `knobs` are the agent's CPU knobs, v1
/// then v2.
pub fn top_table(p: &Priorities, limit: usize, now_ms: i64, knobs: &[CpuKnob; 2]) -> String {
    let age = if p.cycle == 0 {
        "no cycle yet".to_string()
    } else {
        format!(
            "{} s ago",
            fixed((now_ms - p.computed_at_ms) as f64 / 1000.0, 1)
        )
    };
    let measured = p.workloads.iter().filter(|w| w.measured).count();
    let header = format!(
        "fairshare top — cycle {} ({age}), {} active users, {} workloads ({measured} measured); CPU weights as node agents reported writing them, else computed\n\n",
        p.cycle,
        p.users.len(),
        p.workloads.len(),
    );
    let headers: Vec<String> = [
        "user",
        "rank",
        "heaviness",
        "workloads",
        "mean priority",
        "mean CPU weight",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = p
        .users
        .iter()
        .take(limit)
        .map(|u| {
            let mine: Vec<_> = p.workloads.iter().filter(|w| w.owner == u.user).collect();
            vec![
                u.user.to_string(),
                u.rank.to_string(),
                fixed(u.heaviness, 4),
                mine.len().to_string(),
                fixed(mean(mine.iter().map(|w| f64::from(w.knobs.priority))), 1),
                cpu_weight(&mine, knobs),
            ]
        })
        .collect();
    let more = p.users.len().saturating_sub(limit);
    let tail = if more > 0 {
        format!("… and {more} more (--limit)\n")
    } else {
        String::new()
    };
    format!("{header}{}{tail}", table(&headers, &rows))
}

/// A user's explanation as `explain` shows it: usage and endowment per resource, the terms of
/// the heaviness, and the user's workloads; `knobs` are the agent's CPU knobs, v1 then v2.
pub fn explain_table(e: &Explanation, knobs: &[CpuKnob; 2]) -> String {
    let resources: Vec<&String> = e.usage.keys().collect();
    let headers: Vec<String> = std::iter::once("per resource".to_string())
        .chain(resources.iter().map(|r| r.to_string()))
        .collect();
    let row = |name: &str, m: &BTreeMap<String, f64>| {
        std::iter::once(name.to_string())
            .chain(resources.iter().map(|r| significant(m[*r])))
            .collect::<Vec<_>>()
    };
    let per_resource = table(
        &headers,
        &[row("usage", &e.usage), row("endowment", &e.endowment)],
    );
    let units =
        "(per second, memory as a level, in the units nodes report; CPU at reference speed)";
    let terms = [
        (
            "static part",
            e.static_part,
            "Σ s(ε(v)): the size of the user's workloads",
        ),
        (
            "+ dynamic",
            e.dynamic,
            "Σ d(v): their load against their endowments",
        ),
        (
            "− entitlement",
            e.entitlement,
            "s(ε_u): the user's share of the cloud",
        ),
        (
            "= heaviness",
            e.heaviness,
            "h_u; below 0 lighter than the share, above 0 heavier",
        ),
        (
            "quota credit",
            e.unused_quota,
            "unused quota s(ε_u) − Σ s(ε(v)), included above",
        ),
    ];
    let lines: String = terms
        .iter()
        .map(|(name, v, why)| format!("  {name:<14} {:>9}   {why}\n", fixed(*v, 4)))
        .collect();
    let wl_headers: Vec<String> = [
        "workload",
        "node",
        "heaviness",
        "priority",
        "CPU weight",
        "measured",
    ]
    .map(String::from)
    .to_vec();
    let wl_rows: Vec<Vec<String>> = e
        .workloads
        .iter()
        .map(|w| {
            vec![
                w.workload.to_string(),
                w.node.to_string(),
                fixed(w.heaviness, 4),
                w.knobs.priority.to_string(),
                cpu_weight(&[w], knobs),
                if w.measured { "yes" } else { "not yet" }.into(),
            ]
        })
        .collect();
    let status = if e.active {
        format!("rank {} (1 = lightest, served first)", e.rank)
    } else {
        "inactive (no workload), takes no part".into()
    };
    format!(
        "user {} — cycle {}, {status}\n\n{per_resource}{units}\n\n{lines}\n{}",
        e.user,
        e.cycle,
        table(&wl_headers, &wl_rows)
    )
}

/// The nodes as `nodes` shows them at `now_ms` (milliseconds since the Unix epoch): speed,
/// workloads, the last report and its age, the supply.
pub fn nodes_table(nodes: &[NodeStatus], now_ms: i64) -> String {
    let headers: Vec<String> = [
        "node",
        "speed",
        "workloads",
        "last seq",
        "last report",
        "supply",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = nodes
        .iter()
        .map(|n| {
            let supply: Vec<String> = n.supply.iter().map(|(r, v)| format!("{r}={v}")).collect();
            vec![
                n.node.clone(),
                fixed(n.speed, 2),
                n.workloads.to_string(),
                n.last_seq.map_or("–".into(), |s| s.to_string()),
                n.last_report_ms.map_or("never".into(), |t| {
                    format!("{} s ago", fixed((now_ms - t) as f64 / 1000.0, 1))
                }),
                supply.join(" "),
            ]
        })
        .collect();
    table(&headers, &rows)
}

/// The mean of some numbers (0 for none).
fn mean(values: impl ExactSizeIterator<Item = f64>) -> f64 {
    let n = values.len().max(1);
    values.sum::<f64>() / n as f64
}

/// Where a workload's CPU weight is shown from.
enum Cpu<'a> {
    /// What its node's agent reported in force: the file, its cgroup version, the value.
    Written(&'a str, &'static str, u64),
    /// Its agent reported knob values, none of them a CPU weight.
    NotWritten,
    /// Nothing reported: the priority an agent computes its values from.
    Computed(i32),
}

/// Where this workload's CPU weight is shown from.
fn cpu_of<'a>(w: &'a WorkloadPriority, knobs: &[CpuKnob; 2]) -> Cpu<'a> {
    let Some(written) = &w.written else {
        return Cpu::Computed(w.knobs.priority);
    };
    knobs
        .iter()
        .find_map(|knob| {
            let (file, &value) = written.get_key_value(&knob.file)?;
            Some(Cpu::Written(file, knob.version, value))
        })
        .unwrap_or(Cpu::NotWritten)
}

/// The mean CPU weight of some workloads: per file written, as reported (`cpu.shares 1597 (v1,
/// written)`), and for those with nothing reported, as an agent would compute it on either
/// version, labelled so.
fn cpu_weight(workloads: &[&WorkloadPriority], knobs: &[CpuKnob; 2]) -> String {
    let mut written: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
    let (mut not_written, mut priorities) = (0, Vec::new());
    for w in workloads {
        match cpu_of(w, knobs) {
            Cpu::Written(file, version, v) => {
                written.entry((file, version)).or_default().push(v as f64)
            }
            Cpu::NotWritten => not_written += 1,
            Cpu::Computed(p) => priorities.push(p),
        }
    }
    let mut parts: Vec<String> = written
        .iter()
        .map(|((file, version), values)| {
            let value = fixed(mean(values.iter().copied()), 0);
            format!("{file} {value} ({version}, written)")
        })
        .collect();
    if not_written > 0 {
        parts.push("none written".into());
    }
    if !priorities.is_empty() {
        let on = |knob: &CpuKnob| {
            let value = fixed(mean(priorities.iter().map(|&p| (knob.value)(p) as f64)), 0);
            format!("{} {value} ({})", knob.file, knob.version)
        };
        parts.push(format!("{} / {}, computed", on(&knobs[0]), on(&knobs[1])));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A node agent's CPU knobs, v1 then v2: a weight is the kernel default (1024, 100) times
    /// (50 − priority)/50, within the kernel's range, as `fairshare_agent::cgroup::cpu_knob`
    /// computes it (the command passes the agent's own; its tests check the wiring).
    fn knobs() -> [CpuKnob; 2] {
        fn weight(default: u64, (lo, hi): (u64, u64), priority: i32) -> u64 {
            let p = u64::from((50 - priority.clamp(-50, 50)).unsigned_abs());
            (default * p / 50).clamp(lo, hi)
        }
        [
            CpuKnob {
                version: "v1",
                file: "cpu.shares".into(),
                value: |p| weight(1024, (2, 262_144), p),
            },
            CpuKnob {
                version: "v2",
                file: "cpu.weight".into(),
                value: |p| weight(100, (1, 10_000), p),
            },
        ]
    }
    /// A workload of `owner` on `node` with `priority`, and what its agent reported written.
    fn workload(
        id: &str,
        owner: &str,
        node: &str,
        priority: i32,
        measured: bool,
        written: Value,
    ) -> Value {
        json!({
            "workload": id, "owner": owner, "node": node,
            "heaviness": 0.125 * f64::from(priority) / 10.0, "priority_input": 0.0,
            "measured": measured,
            "knobs": {"priority": priority, "cpu": 5000, "io": 5000, "memory": null, "network": null},
            "written": written,
        })
    }

    /// The workloads of the examples: every way a CPU weight is shown.
    fn workloads() -> Vec<Value> {
        vec![
            workload("c1", "carol", "n1", -20, true, json!(null)),
            workload("c2", "carol", "n2", -35, false, json!(null)),
            workload(
                "a1",
                "alice",
                "n1",
                3,
                true,
                json!({"cpu.weight": 97, "io.weight": 90}),
            ),
            workload(
                "a2",
                "alice",
                "n2",
                5,
                true,
                json!({"cpu.shares": 1600, "blkio.weight": 500}),
            ),
            workload("a3", "alice", "n2", 5, true, json!({"cpu.shares": 1500})),
            workload("b1", "bob", "n1", 25, true, json!({"io.weight": 50})),
            workload("b2", "bob", "n1", 50, false, json!(null)),
        ]
    }

    /// The ranking of cycle `cycle`, computed at 1,000,000 ms.
    fn priorities(cycle: u64) -> Priorities {
        serde_json::from_value(json!({
            "cycle": cycle, "computed_at_ms": 1_000_000, "profile": "cgroup-v2",
            "resources": ["cpu", "mem"],
            "users": [
                {"user": "carol", "heaviness": -0.25, "rank": 1},
                {"user": "alice", "heaviness": 0.0125, "rank": 2},
                {"user": "bob", "heaviness": 0.5, "rank": 3},
            ],
            "workloads": workloads(),
        }))
        .unwrap()
    }

    /// Alice's explanation in cycle 42.
    fn alice() -> Explanation {
        let mine: Vec<Value> = workloads()
            .into_iter()
            .filter(|w| w["owner"] == "alice")
            .collect();
        serde_json::from_value(json!({
            "user": "alice", "cycle": 42, "active": true,
            "usage": {"cpu": 1.5, "mem": 1073741824.0},
            "endowment": {"cpu": 4.0, "mem": 8589934592.0},
            "entitlement": 0.5, "static_part": 0.25, "dynamic": 0.2625, "unused_quota": 0.25,
            "heaviness": 0.0125, "rank": 2, "workloads": mine,
        }))
        .unwrap()
    }

    /// Frank, registered but without workloads.
    fn frank() -> Explanation {
        Explanation::uncounted(
            "frank",
            42,
            ["cpu".to_string(), "mem".to_string()].into_iter(),
        )
    }

    /// Two nodes, one that reported 1.5 s before 1,000,000 ms, one never.
    fn nodes() -> Vec<NodeStatus> {
        serde_json::from_value(json!([
            {"node": "n1", "supply": {"cpu": 8.0, "mem": 34359738368.0}, "speed": 1.0,
             "workloads": 5, "last_seq": 17, "last_report_ms": 998_500},
            {"node": "n2-gpu", "supply": {"cpu": 16.0, "gpu": 2.0, "mem": 68719476736.0}, "speed": 1.25,
             "workloads": 0, "last_seq": null, "last_report_ms": null},
        ]))
        .unwrap()
    }

    // The expected texts below are what `fairshare top`, `explain` and `nodes` printed for
    // these values before the tables moved here.

    #[test]
    fn top_ranks_users_lightest_first_with_their_cpu_weights() {
        assert_eq!(
            top_table(&priorities(42), 25, 1_002_345, &knobs()),
            "fairshare top — cycle 42 (2.3 s ago), 3 active users, 7 workloads (5 measured); CPU weights as node agents reported writing them, else computed

user   rank  heaviness  workloads  mean priority                                                mean CPU weight
─────  ────  ─────────  ─────────  ─────────────  ─────────────────────────────────────────────────────────────
carol     1    -0.2500          2          -27.5           cpu.shares 1586 (v1) / cpu.weight 155 (v2), computed
alice     2     0.0125          3            4.3     cpu.shares 1550 (v1, written); cpu.weight 97 (v2, written)
bob       3     0.5000          2           37.5  none written; cpu.shares 2 (v1) / cpu.weight 1 (v2), computed
"
        );
        assert_eq!(
            top_table(&priorities(0), 25, 1_002_345, &knobs()),
            "fairshare top — cycle 0 (no cycle yet), 3 active users, 7 workloads (5 measured); CPU weights as node agents reported writing them, else computed

user   rank  heaviness  workloads  mean priority                                                mean CPU weight
─────  ────  ─────────  ─────────  ─────────────  ─────────────────────────────────────────────────────────────
carol     1    -0.2500          2          -27.5           cpu.shares 1586 (v1) / cpu.weight 155 (v2), computed
alice     2     0.0125          3            4.3     cpu.shares 1550 (v1, written); cpu.weight 97 (v2, written)
bob       3     0.5000          2           37.5  none written; cpu.shares 2 (v1) / cpu.weight 1 (v2), computed
"
        );
    }

    #[test]
    fn top_says_how_many_users_the_limit_leaves_out() {
        assert_eq!(
            top_table(&priorities(42), 2, 1_002_345, &knobs()),
            "fairshare top — cycle 42 (2.3 s ago), 3 active users, 7 workloads (5 measured); CPU weights as node agents reported writing them, else computed

user   rank  heaviness  workloads  mean priority                                             mean CPU weight
─────  ────  ─────────  ─────────  ─────────────  ──────────────────────────────────────────────────────────
carol     1    -0.2500          2          -27.5        cpu.shares 1586 (v1) / cpu.weight 155 (v2), computed
alice     2     0.0125          3            4.3  cpu.shares 1550 (v1, written); cpu.weight 97 (v2, written)
… and 1 more (--limit)
"
        );
    }

    #[test]
    fn written_values_are_shown_as_written_and_the_rest_as_computed() {
        let p = priorities(42);
        let all: Vec<&WorkloadPriority> = p.workloads.iter().collect();
        assert_eq!(
            cpu_weight(&all, &knobs()),
            "cpu.shares 1550 (v1, written); cpu.weight 97 (v2, written); none written; cpu.shares 1058 (v1) / cpu.weight 104 (v2), computed"
        );
        // Nothing reported: carol's priority −20 is computed as cpu.shares 1024·70/50 = 1433,
        // cpu.weight 140, not the daemon's profile value (5000 here).
        assert_eq!(
            cpu_weight(&all[..1], &knobs()),
            "cpu.shares 1433 (v1) / cpu.weight 140 (v2), computed"
        );
    }

    #[test]
    fn explain_shows_the_terms_of_the_heaviness_and_the_workloads() {
        assert_eq!(
            explain_table(&alice(), &knobs()),
            "user alice — cycle 42, rank 2 (1 = lightest, served first)

per resource   cpu         mem
────────────  ────  ──────────
usage         1.50  1073741824
endowment     4.00  8589934592
(per second, memory as a level, in the units nodes report; CPU at reference speed)

  static part       0.2500   Σ s(ε(v)): the size of the user's workloads
  + dynamic         0.2625   Σ d(v): their load against their endowments
  − entitlement     0.5000   s(ε_u): the user's share of the cloud
  = heaviness       0.0125   h_u; below 0 lighter than the share, above 0 heavier
  quota credit      0.2500   unused quota s(ε_u) − Σ s(ε(v)), included above

workload  node  heaviness  priority                     CPU weight  measured
────────  ────  ─────────  ────────  ─────────────────────────────  ────────
a1          n1     0.0375         3    cpu.weight 97 (v2, written)       yes
a2          n2     0.0625         5  cpu.shares 1600 (v1, written)       yes
a3          n2     0.0625         5  cpu.shares 1500 (v1, written)       yes
"
        );
        assert_eq!(
            explain_table(&frank(), &knobs()),
            "user frank — cycle 42, inactive (no workload), takes no part

per resource   cpu   mem
────────────  ────  ────
usage         0.00  0.00
endowment     0.00  0.00
(per second, memory as a level, in the units nodes report; CPU at reference speed)

  static part       0.0000   Σ s(ε(v)): the size of the user's workloads
  + dynamic         0.0000   Σ d(v): their load against their endowments
  − entitlement     0.0000   s(ε_u): the user's share of the cloud
  = heaviness       0.0000   h_u; below 0 lighter than the share, above 0 heavier
  quota credit      0.0000   unused quota s(ε_u) − Σ s(ε(v)), included above

workload  node  heaviness  priority  CPU weight  measured
────────  ────  ─────────  ────────  ──────────  ────────
"
        );
    }

    #[test]
    fn nodes_show_the_age_of_their_last_report() {
        assert_eq!(
            nodes_table(&nodes(), 1_000_000),
            "node    speed  workloads  last seq  last report                        supply
──────  ─────  ─────────  ────────  ───────────  ────────────────────────────
n1       1.00          5        17    1.5 s ago         cpu=8 mem=34359738368
n2-gpu   1.25          0         –        never  cpu=16 gpu=2 mem=68719476736
"
        );
    }
}
