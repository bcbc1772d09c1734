//! The bottleneck paper's experiments (Zeldes & Feitelson, Figs. 2–14), run from the shipped
//! scenarios in `examples/bottleneck/`, against what the paper states — or, where the spec
//! records that the mechanism as specified gives another number, what the spec derives.
//!
//! Tolerances: deterministic scenarios are exact up to the 0.1-s quantum and the 3-s window's
//! quantisation (spec §5, Fig. 3: up to ±1.5 s on completion times); shares are measured over
//! intervals of several seconds, where one quantum more or less moves a share by ≈ 0.1 / length.

use fairshare_sim::process::result::{SimulationResult, MAX_SERVICE_VALUES};
use fairshare_sim::process::simulate;
use fairshare_trace::scenario::Scenario;
use std::path::PathBuf;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/bottleneck")
}

/// Runs the shipped scenario whose file name starts with `prefix`.
fn run(prefix: &str) -> SimulationResult {
    let path = std::fs::read_dir(examples())
        .expect("examples/bottleneck exists")
        .map(|e| e.expect("a directory entry").path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
                && p.extension().is_some_and(|e| e == "toml")
        })
        .unwrap_or_else(|| panic!("no scenario {prefix}*.toml"));
    let scenario = Scenario::read(&path).expect("the shipped scenario parses");
    simulate(&scenario, &path.display().to_string()).expect("the shipped scenario runs")
}

fn finish(r: &SimulationResult, name: &str) -> f64 {
    let p = r
        .processes
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no process {name}"));
    p.finish_time.unwrap_or(f64::INFINITY)
}

/// Fraction of `[t0, t1]` during which `process` held `resource` (first run).
fn share(r: &SimulationResult, process: &str, resource: &str, t0: f64, t1: f64) -> f64 {
    let held: f64 = r
        .timeline
        .iter()
        .filter(|s| &*s.process == process && &*s.resource == resource)
        .map(|s| (s.end.min(t1) - s.start.max(t0)).max(0.0))
        .sum();
    held / (t1 - t0)
}

/// Seconds during `[t0, t1]` in which `resource` was a bottleneck.
fn bottleneck_time(r: &SimulationResult, resource: &str, t0: f64, t1: f64) -> f64 {
    let res = r
        .resources
        .iter()
        .find(|x| x.name == resource)
        .unwrap_or_else(|| panic!("no resource {resource}"));
    res.bottleneck_intervals
        .iter()
        .map(|[s, e]| (e.min(t1) - s.max(t0)).max(0.0))
        .sum()
}

fn within(value: f64, low: f64, high: f64, what: &str) {
    assert!(
        (low..=high).contains(&value),
        "{what}: {value} not in [{low}, {high}]"
    );
}

#[test]
fn fig02_late_arrival_gets_two_quanta_for_one() {
    let r = run("fig02");
    // Paper: blue (67) gets two quanta per red (33) quantum from 5 s, finishes first; ideal
    // completions 12.5 s and 15.0 s.
    within(finish(&r, "blue"), 12.2, 12.8, "blue completes");
    within(finish(&r, "red"), 14.9, 15.1, "red completes");
    within(
        share(&r, "blue", "CPU_CS", 6.0, 12.0),
        0.62,
        0.72,
        "blue's CPU share while both run",
    );
    within(
        share(&r, "red", "CPU_CS", 0.0, 5.0),
        0.99,
        1.0,
        "red alone before blue arrives",
    );
    let cpu = &r.resources[0];
    within(cpu.busy_s, 14.99, 15.01, "CPU busy throughout");
    within(
        cpu.bottleneck_intervals[0][0],
        2.7,
        2.75,
        "CPU becomes a bottleneck at 2.7 s",
    );
}

#[test]
fn fig03_four_entitlements_finish_in_order() {
    let r = run("fig03");
    // Ideal 25, 30, 35, 40 s; order exact, each within ±1.5 s (spec §5).
    let times: Vec<f64> = ["p40", "p30", "p20", "p10"]
        .iter()
        .map(|p| finish(&r, p))
        .collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "order {times:?}");
    for (got, ideal) in times.iter().zip([25.0, 30.0, 35.0, 40.0]) {
        within(*got, ideal - 1.5, ideal + 1.5, "completion");
    }
}

#[test]
fn fig07_green_gets_a_third_of_each_resource() {
    let r = run("fig07");
    // Phase 2 (7–11 s): red 67 % of the CPU, blue 67 % of the disk, green 33 % of each.
    within(
        share(&r, "red", "CPU_CS", 7.0, 11.0),
        0.6,
        0.72,
        "red's CPU",
    );
    within(
        share(&r, "green", "CPU_CS", 7.0, 11.0),
        0.28,
        0.4,
        "green's CPU",
    );
    within(
        share(&r, "blue", "DISK_CS", 7.0, 11.0),
        0.6,
        0.72,
        "blue's disk",
    );
    within(
        share(&r, "green", "DISK_CS", 7.0, 11.0),
        0.28,
        0.4,
        "green's disk",
    );
    within(
        finish(&r, "blue"),
        11.8,
        12.6,
        "blue completes (ideal 12.0 s)",
    );
    within(
        finish(&r, "red"),
        14.8,
        15.6,
        "red completes (ideal 15.0 s)",
    );
}

#[test]
fn fig08_green_cannot_use_more_than_half_of_either_resource() {
    for (prefix, green) in [("fig08a", 12.0), ("fig08b", 11.0)] {
        let r = run(prefix);
        // (a) and (b): phase-2 shares 50/50 on both resources; green twice as fast overall.
        within(
            share(&r, "green", "CPU_CS", 7.0, 11.0),
            0.42,
            0.58,
            "green's CPU",
        );
        within(
            share(&r, "green", "DISK_CS", 7.0, 11.0),
            0.42,
            0.58,
            "green's disk",
        );
        within(
            finish(&r, "green"),
            green - 0.5,
            green + 0.5,
            "green completes",
        );
        within(finish(&r, "blue"), 13.5, 14.5, "blue completes");
        within(finish(&r, "red"), 15.5, 16.5, "red completes");
    }
}

#[test]
fn fig11_converges_to_the_symmetric_solution() {
    let r = run("fig11-ring-det");
    for p in &r.processes {
        // 30 s of service each at progress 0.5: all complete at 60 s.
        within(p.finish_time.unwrap_or(f64::INFINITY), 59.0, 61.0, &p.name);
    }
    for res in &r.resources {
        within(res.busy_s / r.end_s, 0.98, 1.0, &res.name);
    }
}

#[test]
fn fig14_deterministic_both_resources_stay_bottlenecks_and_the_third_gets_ahead() {
    let r = run("fig14-complementary-det");
    let first_end = r
        .processes
        .iter()
        .filter_map(|p| p.finish_time)
        .fold(f64::INFINITY, f64::min);
    for res in ["CPU_CS", "NET_CS"] {
        let t = bottleneck_time(&r, res, 3.0, first_end);
        within(
            t / (first_end - 3.0),
            0.95,
            1.0,
            &format!("{res} a bottleneck until a process ends"),
        );
    }
    // `both` is not starved: it progresses at least as fast as the other two.
    assert!(finish(&r, "both") <= finish(&r, "cpuheavy").max(finish(&r, "netheavy")) + 2.0);
}

#[test]
fn fig04_idle_network_goes_to_blue_and_disk_splits_two_to_one() {
    let r = run("fig04");
    within(
        share(&r, "blue", "NET_CS", 5.0, 40.0),
        0.9,
        1.0,
        "blue's network",
    );
    let (green, red) = (
        share(&r, "green", "DISK_CS", 5.0, 45.0),
        share(&r, "red", "DISK_CS", 5.0, 45.0),
    );
    within(green / red, 1.6, 2.4, "green : red on the disk");
    assert_eq!(
        bottleneck_time(&r, "CPU_CS", 0.0, r.end_s),
        0.0,
        "the CPU is never a bottleneck"
    );
}

/// After each time red comes back to the CPU (from `away`, or from a pause of more than 1 s),
/// how long it holds the CPU before blue gets a quantum, averaged over returns.
fn red_catch_up(r: &SimulationResult, away: Option<&str>) -> f64 {
    let red: Vec<_> = r.timeline.iter().filter(|s| &*s.process == "red").collect();
    let returns: Vec<f64> = red
        .windows(2)
        .filter(|w| &*w[1].resource == "CPU_CS")
        .filter(|w| match away {
            Some(resource) => &*w[0].resource == resource,
            None => w[1].start - w[0].end > 1.0,
        })
        .map(|w| w[1].start)
        .collect();
    let waits: Vec<f64> = returns
        .iter()
        .filter_map(|t| {
            let blue = r
                .timeline
                .iter()
                .filter(|s| &*s.process == "blue" && &*s.resource == "CPU_CS");
            blue.map(|s| s.start)
                .find(|start| start >= t)
                .map(|start| start - t)
        })
        .collect();
    assert!(!waits.is_empty(), "red returns at least once");
    waits.iter().sum::<f64>() / waits.len() as f64
}

#[test]
fn fig05_short_absences_are_made_up_fig06_long_ones_are_not() {
    // Fig. 5: red's 0.5-s disk visits are shorter than the grace period, so its allocation kept
    // growing: on return it holds the CPU alone for a while (spec §2.8c: ≈1.17 s).
    let short = red_catch_up(&run("fig05"), Some("DISK_CS"));
    within(short, 0.7, 1.6, "catch-up after a short absence");
    // Fig. 6: 4-s suspensions exceed the grace period: red simply shares (pre-study ≤ 0.4 s).
    let long = red_catch_up(&run("fig06-suspension.toml"), None);
    within(long, 0.0, 0.6, "red-only service after a long suspension");
    assert!(long < short);
}

#[test]
fn fig09_the_heavy_weight_never_waits_long() {
    let r = run("fig09");
    let purple = r.processes.iter().find(|p| p.name == "purple").unwrap();
    let spread = purple.finish_time_spread.expect("several runs");
    // 10.5 s of service, waiting at most a quantum per request (≤ 0.9 s in total).
    within(spread.max, 10.0, 11.8, "purple's completion, every run");
    for other in r.processes.iter().filter(|p| p.name != "purple") {
        assert!(
            other.finish_time_spread.unwrap().min > spread.max,
            "{} finishes after purple",
            other.name
        );
    }
}

#[test]
fn fig10b_small_weight_gets_more_than_its_share_of_the_others() {
    let r = run("fig10b");
    // Over the interval where all four are active (up to the first completion, mean over runs):
    // purple's service exceeds a third of the others' mean service.
    let first = r
        .processes
        .iter()
        .filter_map(|p| p.finish_time_spread.map(|s| s.min))
        .fold(f64::INFINITY, f64::min);
    let k = (first / 0.1).floor() as usize;
    let at = |i: usize| r.cumulative.mean[i][k];
    let purple = r.processes.iter().position(|p| p.name == "purple").unwrap();
    let others: Vec<f64> = (0..r.processes.len())
        .filter(|i| *i != purple)
        .map(at)
        .collect();
    let others_mean = others.iter().sum::<f64>() / others.len() as f64;
    assert!(
        at(purple) > others_mean / 3.0,
        "purple {} vs others {}",
        at(purple),
        others_mean
    );
}

#[test]
fn fig12_cpu_split_after_the_cpu_bound_process_arrives() {
    let r = run("fig12");
    // Spec §5 (derived, see docs/bottleneck.md): blue ∈ [0.45, 0.62], red ∈ [0.12, 0.22],
    // green ≥ 0.22 of the CPU over 8–24 s; red's disk falls to ≤ 0.45; no bottleneck before
    // 5 s; the CPU becomes one ≈2.1 s after blue arrives.
    within(
        share(&r, "blue", "CPU_CS", 8.0, 24.0),
        0.45,
        0.62,
        "blue's CPU",
    );
    within(
        share(&r, "red", "CPU_CS", 8.0, 24.0),
        0.12,
        0.22,
        "red's CPU",
    );
    within(
        share(&r, "green", "CPU_CS", 8.0, 24.0),
        0.22,
        1.0,
        "green's CPU",
    );
    within(
        share(&r, "red", "DISK_CS", 8.0, 24.0),
        0.0,
        0.45,
        "red's disk",
    );
    for res in &r.resources {
        assert_eq!(
            bottleneck_time(&r, &res.name, 0.0, 5.0),
            0.0,
            "{} before 5 s",
            res.name
        );
    }
    let cpu = r.resources.iter().find(|x| x.name == "CPU_CS").unwrap();
    let first = cpu
        .bottleneck_intervals
        .iter()
        .map(|iv| iv[0])
        .find(|s| *s >= 5.0)
        .unwrap();
    within(
        first,
        6.5,
        8.0,
        "the CPU becomes a bottleneck ≈2.1 s after 5 s",
    );
}

#[test]
fn fig13_the_bottleneck_shifts_from_cpu_to_network() {
    let r = run("fig13");
    within(
        bottleneck_time(&r, "CPU_CS", 4.0, 10.0) / 6.0,
        0.9,
        1.0,
        "CPU a bottleneck in phase 1",
    );
    assert_eq!(
        bottleneck_time(&r, "NET_CS", 0.0, 10.0),
        0.0,
        "network not a bottleneck in phase 1"
    );
    assert!(
        bottleneck_time(&r, "NET_CS", 10.0, r.end_s) > 1.0,
        "network becomes a bottleneck later"
    );
}

#[test]
fn same_seed_same_result_and_other_seeds_differ() {
    let path = examples().join("fig12-new-bottleneck.toml");
    let mut scenario = Scenario::read(&path).unwrap();
    scenario.simulation.runs = 2;
    let strip = |mut r: SimulationResult| {
        (r.wall_s, r.events_per_s) = (0.0, 0.0);
        serde_json::to_string(&r).unwrap()
    };
    let a = strip(simulate(&scenario, "a").unwrap());
    assert_eq!(a, strip(simulate(&scenario, "a").unwrap()));
    scenario.simulation.seed += 1;
    assert_ne!(a, strip(simulate(&scenario, "a").unwrap()));
}

#[test]
fn a_one_second_priority_interval_serves_in_blocks() {
    // Spec §2.7: with priorities frozen for 1 s, Fig. 2 shows 1-s blocks instead of 2:1 quanta.
    let path = examples().join("fig02-late-arrival.toml");
    let mut scenario = Scenario::read(&path).unwrap();
    let longest = |r: &SimulationResult| {
        r.timeline
            .iter()
            .filter(|s| s.start >= 5.0 && s.end <= 12.0)
            .map(|s| s.end - s.start)
            .fold(0.0, f64::max)
    };
    let every_dispatch = simulate(&scenario, "fig02").unwrap();
    scenario.simulation.priority_interval = 1.0;
    let frozen = simulate(&scenario, "fig02").unwrap();
    assert!(
        longest(&every_dispatch) < 0.35,
        "{}",
        longest(&every_dispatch)
    );
    assert!(longest(&frozen) >= 0.9, "{}", longest(&frozen));
    within(
        finish(&frozen, "blue"),
        11.0,
        14.0,
        "blue still finishes first",
    );
}

#[test]
fn per_resource_accounting_cuts_figure_12s_green() {
    // Spec §2.6: RSVT-like per-resource allocation cut green to 0.17–0.20 of the CPU in the
    // pre-study (paper: 0.33); the global default keeps it above 0.22.
    let path = examples().join("fig12-new-bottleneck.toml");
    let mut scenario = Scenario::read(&path).unwrap();
    scenario.simulation.accounting = fairshare_trace::scenario::Accounting::PerResource;
    let r = simulate(&scenario, "fig12").unwrap();
    let green = share(&r, "green", "CPU_CS", 8.0, 24.0);
    assert!(
        green < share(&run("fig12"), "green", "CPU_CS", 8.0, 24.0),
        "{green}"
    );
}

#[test]
fn fig11_randomised_processes_progress_at_largely_the_same_rate() {
    let r = run("fig11-ring-rand");
    let means: Vec<f64> = r
        .processes
        .iter()
        .map(|p| p.finish_time_spread.expect("several runs").mean)
        .collect();
    let (low, high) = means
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), m| (l.min(*m), h.max(*m)));
    assert!(high / low < 1.05, "mean completions {means:?}");
}

#[test]
fn very_long_runs_are_sampled_sparsely_not_exhaustively() {
    let text = "[[process]]\nname = \"late\"\nentitlement = 1\nstart = 9e8\nprogram = \"CPU_CS 1 0 NORM\"\n";
    let scenario = Scenario::from_toml(text, std::path::Path::new("late.toml")).unwrap();
    let r = simulate(&scenario, "late").unwrap();
    let finish = r.processes[0].finish_time.expect("it finishes");
    assert!((finish - (9e8 + 1.0)).abs() < 1e-3, "{finish}");
    let samples = r.cumulative.times_s.len();
    assert!(samples <= MAX_SERVICE_VALUES + 1, "{samples}");
}

#[test]
fn a_start_past_the_latest_instant_is_refused_before_running() {
    let text = "[[process]]\nname = \"late\"\nstart = 1.9e13\nprogram = \"CPU_CS 1 0 NORM\"\n";
    let err = Scenario::from_toml(text, std::path::Path::new("late.toml")).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("start") && message.contains("1e9"),
        "{message}"
    );
}

/// The Gantt segments of `resource`, in order, as (process, start, end).
fn segments(r: &SimulationResult, resource: &str) -> Vec<(String, f64, f64)> {
    r.timeline
        .iter()
        .filter(|s| &*s.resource == resource)
        .map(|s| (s.process.to_string(), s.start, s.end))
        .collect()
}

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml(text, std::path::Path::new("rule.toml")).expect("the scenario parses")
}

#[test]
fn requests_queued_at_the_same_instant_are_served_by_process_index() {
    // Spec §2.5: under FIFO every priority ties, and requests that enter a queue at the same
    // instant are ordered by process index, whatever order the engine handles their events in.
    // P1's CPU grant ends at 1 s (an event handled before P0's end of idleness at 1 s).
    let r = simulate(
        &scenario(
            "[simulation]\npolicy = \"fifo\"\n\
             [[process]]\nname = \"P0\"\nentitlement = 1\nprogram = \"idle 1 0 NORM\\nDISK 1 0 NORM\"\n\
             [[process]]\nname = \"P1\"\nentitlement = 1\nprogram = \"CPU_CS 1 0 NORM\\nDISK 1 0 NORM\"\n",
        ),
        "same instant",
    )
    .unwrap();
    let disk = segments(&r, "DISK");
    assert_eq!(disk.len(), 2, "{disk:?}");
    assert_eq!((disk[0].0.as_str(), disk[0].1), ("P0", 1.0), "{disk:?}");
    assert_eq!((disk[1].0.as_str(), disk[1].1), ("P1", 2.0), "{disk:?}");
}

#[test]
fn between_snapshots_a_process_keeps_the_priority_it_entered_with() {
    // Spec §2.7, with one snapshot (at 0) in the run. H holds the disk until 6 s; A enters its
    // queue at 2.9 s (priority 0 from the snapshot), B at 3.5 s, straight from its start: its
    // priority is taken on entry, 0 as well, and the tie goes to A, the earlier entry. Computed
    // only when the disk frees at 6 s, B's priority would have grown with 2.5 s of allocation
    // and nothing consumed, and B would be served before A.
    let text = |interval: &str| {
        format!(
            "[simulation]\npriority_interval = {interval}\n\
             [[process]]\nname = \"H\"\nentitlement = 1\nprogram = \"DISK 6 0 NORM\"\n\
             [[process]]\nname = \"A\"\nentitlement = 1\nprogram = \"CPU_CS 2.9 0 NORM\\nDISK 1 0 NORM\"\n\
             [[process]]\nname = \"B\"\nentitlement = 1\nstart = 3.5\nprogram = \"DISK 1 0 NORM\"\n"
        )
    };
    let order = |interval: &str| -> Vec<String> {
        let r = simulate(&scenario(&text(interval)), "entry").unwrap();
        segments(&r, "DISK").into_iter().map(|s| s.0).collect()
    };
    assert_eq!(order("100"), ["H", "A", "B"]);
}
