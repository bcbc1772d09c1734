//! The two experiments of Poullie et al. (spec/heaviness.md §10) on the runtime engine: the
//! spec's tolerance-free statements, and its reference numbers within the stated rounding.

use fairshare_core::heaviness::Overcommit;
use fairshare_sim::runtime::{run, RuntimePolicy, RuntimeRun, RuntimeScenario};
use std::path::Path;

/// The scenario `examples/runtime/{name}.toml`.
fn scenario(name: &str) -> RuntimeScenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/runtime")
        .join(format!("{name}.toml"));
    RuntimeScenario::read(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The series of workload or user `name` in a run.
fn workload<'a>(run: &'a RuntimeRun, name: &str) -> &'a fairshare_sim::runtime::WorkloadSeries {
    run.workloads.iter().find(|w| w.name == name).unwrap()
}

fn user<'a>(run: &'a RuntimeRun, name: &str) -> &'a fairshare_sim::runtime::UserSeries {
    run.users.iter().find(|u| u.name == name).unwrap()
}

/// The CPU knob workload `name` ran under in interval `k` (from 1).
fn cpu_knob(run: &RuntimeRun, name: &str, k: u32) -> u64 {
    workload(run, name).knobs[k as usize - 1].unwrap().cpu
}

/// The mean over the steady state (last quarter) of resource `r` for user `name`.
fn steady_user(run: &RuntimeRun, name: &str, r: usize) -> f64 {
    let (from, to) = run.steady();
    RuntimeRun::mean(&user(run, name).share[r], from, to)
}

fn steady_workload(run: &RuntimeRun, name: &str, r: usize) -> f64 {
    let (from, to) = run.steady();
    RuntimeRun::mean(&workload(run, name).share[r], from, to)
}

fn close(found: f64, expected: f64, tolerance: f64) -> bool {
    (found - expected).abs() <= tolerance
}

#[test]
fn e1_light_user_gains_and_the_gap_closes() {
    let s = scenario("e1");
    let baseline = run(&s, RuntimePolicy::Off).unwrap();
    let service = run(&s, RuntimePolicy::Heaviness).unwrap();
    let cpu = service.resource("cpu").unwrap();
    // Baseline: a third each, d two thirds.
    assert!(close(
        steady_workload(&baseline, "v_e1", cpu),
        1.0 / 3.0,
        1e-9
    ));
    assert!(close(steady_user(&baseline, "d", cpu), 2.0 / 3.0, 1e-9));
    // Ticks 1–18: only v_d1 busy; it still gets the whole node (work conservation).
    for k in 2..=18 {
        assert_eq!(
            workload(&service, "v_d1").share[cpu][k - 1],
            1.0,
            "interval {k}"
        );
    }
    // After tick 20 v_e1's CPU weight exceeds each of d's VMs'.
    for k in 21..=service.ticks {
        let e = cpu_knob(&service, "v_e1", k);
        assert!(
            e > cpu_knob(&service, "v_d1", k) && e > cpu_knob(&service, "v_d2", k),
            "interval {k}"
        );
    }
    // Steady state: the user gap is below the baseline's (a third) and below 0.05.
    let gap = |run: &RuntimeRun| (steady_user(run, "d", cpu) - steady_user(run, "e", cpu)).abs();
    assert!(
        gap(&service) < gap(&baseline) && gap(&service) < 0.05,
        "gap {}",
        gap(&service)
    );
    // Converged within 10 ticks of all three running.
    for k in 29..=service.ticks as usize {
        let u = |n: &str| user(&service, n).share[cpu][k - 1];
        assert!((u("d") - u("e")).abs() < 0.05, "interval {k}");
    }
}

#[test]
fn e1_reference_numbers() {
    let s = scenario("e1");
    let service = run(&s, RuntimePolicy::Heaviness).unwrap();
    let cpu = service.resource("cpu").unwrap();
    // At the end of tick 18: shares (20, 37, 100), h_u (0.389, −0.472).
    let knobs: Vec<u64> = ["v_d1", "v_d2", "v_e1"]
        .iter()
        .map(|w| cpu_knob(&service, w, 19))
        .collect();
    assert_eq!(knobs, [20, 37, 100]);
    let h = |n: &str, k: usize| user(&service, n).heaviness[k - 1].unwrap();
    assert!(close(h("d", 18), 0.389, 5e-4) && close(h("e", 18), -0.472, 5e-4));
    // Steady state: shares (41, 41, 81); CPU (0.252, 0.252, 0.497); users 0.503 / 0.497;
    // h_u (0.223, −0.307).
    let last = service.ticks;
    let knobs: Vec<u64> = ["v_d1", "v_d2", "v_e1"]
        .iter()
        .map(|w| cpu_knob(&service, w, last))
        .collect();
    assert_eq!(knobs, [41, 41, 81]);
    for (w, expected) in [("v_d1", 0.252), ("v_d2", 0.252), ("v_e1", 0.497)] {
        assert!(
            close(steady_workload(&service, w, cpu), expected, 5e-4),
            "{w}"
        );
    }
    assert!(close(steady_user(&service, "d", cpu), 0.503, 5e-4));
    assert!(close(steady_user(&service, "e", cpu), 0.497, 5e-4));
    let end = service.ticks as usize;
    assert!(close(h("d", end), 0.223, 5e-4) && close(h("e", end), -0.307, 5e-4));
}

#[test]
fn e1_directions_hold_with_nova_overcommit() {
    let mut s = scenario("e1");
    s.heaviness.overcommit = Overcommit::default();
    let service = run(&s, RuntimePolicy::Heaviness).unwrap();
    let cpu = service.resource("cpu").unwrap();
    let last = service.ticks;
    let e = cpu_knob(&service, "v_e1", last);
    assert!(e > cpu_knob(&service, "v_d1", last) && e > cpu_knob(&service, "v_d2", last));
    // The spec: e ≈ 0.51–0.52 of the CPU.
    let share_e = steady_user(&service, "e", cpu);
    assert!((0.505..0.525).contains(&share_e), "e gets {share_e}");
}

#[test]
fn e2_d_is_favoured_on_n_a_and_f_loses_nothing_on_n_b() {
    let s = scenario("e2");
    let baseline = run(&s, RuntimePolicy::Off).unwrap();
    let service = run(&s, RuntimePolicy::Heaviness).unwrap();
    let cpu = service.resource("cpu").unwrap();
    let disk = service.resource("disk_write").unwrap();
    // Baseline: halves on n_a; on n_b v_b_e 0.95 of the CPU, v_b_f all the disk.
    assert!(close(steady_workload(&baseline, "v_a_d", cpu), 0.5, 1e-9));
    assert!(close(steady_workload(&baseline, "v_b_e", cpu), 0.95, 1e-9));
    assert!(close(steady_workload(&baseline, "v_b_f", disk), 1.0, 1e-9));
    // n_a: d's VM gets more CPU and more disk than e's.
    assert!(steady_workload(&service, "v_a_d", cpu) > steady_workload(&service, "v_a_e", cpu));
    assert!(steady_workload(&service, "v_a_d", disk) > steady_workload(&service, "v_a_e", disk));
    // n_b: f's disk weight exceeds e's, and neither loses against the baseline.
    let last = service.ticks as usize;
    let io = |w: &str| workload(&service, w).knobs[last - 1].unwrap().io;
    assert!(io("v_b_f") > io("v_b_e"));
    for (w, r) in [("v_b_f", disk), ("v_b_e", cpu)] {
        assert!(
            steady_workload(&service, w, r) >= steady_workload(&baseline, w, r),
            "{w}"
        );
    }
    // e heaviest; d and f negative.
    let h = |n: &str| user(&service, n).heaviness[last - 1].unwrap();
    assert!(h("e") > h("d") && h("e") > h("f") && h("d") < 0.0 && h("f") < 0.0);
}

#[test]
fn e2_reference_numbers() {
    let s = scenario("e2");
    let service = run(&s, RuntimePolicy::Heaviness).unwrap();
    let cpu = service.resource("cpu").unwrap();
    let disk = service.resource("disk_write").unwrap();
    for (w, r, expected) in [
        ("v_a_d", cpu, 0.649),
        ("v_a_e", cpu, 0.351),
        ("v_a_d", disk, 0.624),
        ("v_a_e", disk, 0.376),
    ] {
        assert!(
            close(steady_workload(&service, w, r), expected, 5e-4),
            "{w} {r}"
        );
    }
    let last = service.ticks as usize;
    let knobs = |w: &str| workload(&service, w).knobs[last - 1].unwrap();
    assert_eq!((knobs("v_a_d").cpu, knobs("v_a_e").cpu), (72, 39));
    assert_eq!((knobs("v_a_d").io, knobs("v_a_e").io), (748, 451));
    assert_eq!((knobs("v_b_f").io, knobs("v_b_e").io), (865, 424));
    let h = |n: &str| user(&service, n).heaviness[last - 1].unwrap();
    for (u, expected) in [("d", -0.244), ("e", 0.294), ("f", -0.300)] {
        assert!(close(h(u), expected, 5e-4), "{u}: {}", h(u));
    }
}
