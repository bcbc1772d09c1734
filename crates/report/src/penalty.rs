//! The table of `fairshare penalty`: one job's Processor Equivalent machine by machine, the
//! machines it is priced on marked, and its PE beside Maui's system-wide one. It is here, not
//! in the command, so that every table a person reads comes from this crate, from the lab's
//! [`Explanation`].

use crate::text::{fixed, table};
use fairshare_core::choice::Choice;
use fairshare_core::usage::penalty::PeMode;
use fairshare_lab::penalty::Explanation;

/// The explanation of a job's charge as a terminal table, with the job above it and the
/// charged PE below.
pub fn penalty_table(e: &Explanation) -> String {
    let mut headers: Vec<String> = ["machine", "nodes"].map(String::from).to_vec();
    headers.extend(e.resources.iter().cloned());
    headers.extend(["SPEC", "PE per node", "priced", "penalty if run here"].map(String::from));
    let rows: Vec<Vec<String>> = e
        .machines
        .iter()
        .map(|m| {
            let mut row = vec![m.name.clone(), m.count.to_string()];
            row.extend(m.capacity.iter().map(|c| fixed(*c, 0)));
            row.push(fixed(m.spec, 2));
            row.push(match (&m.pe_per_node, &m.unsuitable) {
                (Some(pe), _) => fixed(*pe, 4),
                (None, Some(why)) => format!("unsuitable ({why})"),
                (None, None) => "–".into(),
            });
            row.push(if m.priced_nodes > 0 {
                format!("* {}", m.priced_nodes)
            } else {
                String::new()
            });
            row.push(m.penalty_if_run_here.map_or("–".into(), |p| fixed(p, 1)));
            row
        })
        .collect();
    let request: Vec<String> = e
        .resources
        .iter()
        .zip(&e.request_per_node)
        .map(|(r, a)| format!("{r} {}", fixed(*a, 1)))
        .collect();
    format!(
        "job: {} node(s) of {}{}, walltime {} s, queue cost {}, PE mode {}\n\n{}\n* the machines the job is priced on (the cheapest that could run it){}\n\nPE (charged)          {}\nMaui PE (system-wide) {}\npenalty = PE × walltime × SPEC of the machine that runs it × queue cost\n",
        e.nodes,
        request.join(", "),
        if e.exclusive { ", exclusive" } else { "" },
        fixed(e.walltime_s, 0),
        fixed(e.queue_cost, 2),
        e.mode.name(),
        table(&headers, &rows),
        match e.mode {
            PeMode::Additive => "; in additive mode they only show that it fits: its PE counts its total against the whole cluster's",
            PeMode::Max => "",
        },
        fixed(e.pe, 4),
        fixed(e.maui_pe, 4),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairshare_lab::penalty::MachineLine;

    /// The spec's worked example (docs/metacentrum.md §8.1), as `fairshare penalty --machines
    /// cluster.machines --cpus 4 --mem 64GiB --walltime 2h --json -` explained it: machine A
    /// (80 processors, 512 GiB) and B (12 processors, 90 GiB). The expected table is what the
    /// command printed before the table moved here.
    fn worked_example() -> Explanation {
        let line = |name: &str, count, capacity: [f64; 2], pe: f64, priced| MachineLine {
            name: name.into(),
            count,
            capacity: capacity.to_vec(),
            spec: 1.0,
            pe_per_node: Some(pe),
            unsuitable: None,
            priced_nodes: priced,
            // What the job is charged if it runs here: its (cheapest) PE × walltime × SPEC.
            penalty_if_run_here: Some(61_440.0),
        };
        Explanation {
            schema_version: 1,
            machines_file: "cluster.machines".into(),
            resources: vec!["cpu".into(), "memory (KB)".into()],
            request_per_node: vec![4.0, 67_108_864.0],
            nodes: 1,
            exclusive: false,
            mode: PeMode::Max,
            walltime_s: 7200.0,
            queue_cost: 1.0,
            machines: vec![
                line("A", 20, [80.0, 536_870_912.0], 10.0, 0),
                line("B", 48, [12.0, 94_371_840.0], 8.533_333_333_333_333, 1),
            ],
            pe: 8.533_333_333_333_333,
            maui_pe: 9.564_835_164_835_165,
        }
    }

    #[test]
    fn the_worked_example_reads_as_before() {
        assert_eq!(
            penalty_table(&worked_example()),
            "job: 1 node(s) of cpu 4.0, memory (KB) 67108864.0, walltime 7200 s, queue cost 1.00, PE mode max

machine  nodes  cpu  memory (KB)  SPEC  PE per node  priced  penalty if run here
───────  ─────  ───  ───────────  ────  ───────────  ──────  ───────────────────
A           20   80    536870912  1.00      10.0000                      61440.0
B           48   12     94371840  1.00       8.5333     * 1              61440.0

* the machines the job is priced on (the cheapest that could run it)

PE (charged)          8.5333
Maui PE (system-wide) 9.5648
penalty = PE × walltime × SPEC of the machine that runs it × queue cost
"
        );
    }

    /// An unsuitable machine shows why; an exclusive job in additive mode says so above and
    /// below (`--cpus 4 --mem 100GiB --mode additive --exclusive --queue-cost 2.5 --walltime
    /// 30m` on the same machines, as the command printed it before the table moved here).
    #[test]
    fn unsuitable_machines_and_additive_mode_are_spelt_out() {
        let mut e = worked_example();
        e.request_per_node[1] = 104_857_600.0;
        e.exclusive = true;
        e.mode = PeMode::Additive;
        e.walltime_s = 1800.0;
        e.queue_cost = 2.5;
        e.pe = 19.0;
        e.maui_pe = 14.945_054_945_054_945;
        let [a, b] = &mut e.machines[..] else {
            unreachable!("two machines")
        };
        (a.pe_per_node, a.priced_nodes, a.penalty_if_run_here) = (Some(19.0), 1, Some(85_500.0));
        (b.pe_per_node, b.priced_nodes, b.penalty_if_run_here) = (None, 0, None);
        b.unsuitable = Some("memory (KB): needs 104857600.0, has 94371840.0".into());
        assert_eq!(
            penalty_table(&e),
            "job: 1 node(s) of cpu 4.0, memory (KB) 104857600.0, exclusive, walltime 1800 s, queue cost 2.50, PE mode additive

machine  nodes  cpu  memory (KB)  SPEC                                                  PE per node  priced  penalty if run here
───────  ─────  ───  ───────────  ────  ───────────────────────────────────────────────────────────  ──────  ───────────────────
A           20   80    536870912  1.00                                                      19.0000     * 1              85500.0
B           48   12     94371840  1.00  unsuitable (memory (KB): needs 104857600.0, has 94371840.0)                            –

* the machines the job is priced on (the cheapest that could run it); in additive mode they only show that it fits: its PE counts its total against the whole cluster's

PE (charged)          19.0000
Maui PE (system-wide) 14.9451
penalty = PE × walltime × SPEC of the machine that runs it × queue cost
"
        );
    }
}
