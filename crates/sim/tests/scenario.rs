//! Scenario files: the TOML format, its errors, and the paper's scenarios as shipped.

use fairshare_core::config::ConfigError;
use fairshare_sim::scenario::{
    Accounting, Dist, GapForm, ProcessPolicy, Scenario, ScenarioError, Simulation,
};
use std::path::{Path, PathBuf};

const ORIGIN: &str = "dir/s.toml";

fn load(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::from_toml(text, Path::new(ORIGIN))
}

fn message(text: &str) -> String {
    load(text)
        .expect_err("the scenario should be rejected")
        .to_string()
}

/// A one-process scenario after `head`.
fn with_head(head: &str) -> String {
    format!("{head}\n[[process]]\nname = \"p\"\nentitlement = 1\nprogram = \"CPU 1 0 NORM\"\n")
}

#[test]
fn a_minimal_scenario_takes_every_default() {
    let scenario = load(&with_head("")).unwrap();
    assert_eq!(scenario.simulation, Simulation::default());
    let simulation = Simulation::default();
    assert_eq!(
        (simulation.seed, simulation.runs, simulation.duration),
        (1, 1, None)
    );
    assert_eq!(
        (simulation.window, simulation.bottleneck_threshold),
        (3.0, 0.9)
    );
    assert_eq!(
        (
            simulation.grace,
            simulation.quantum,
            simulation.priority_interval
        ),
        (1.0, 0.1, 0.0)
    );
    assert_eq!(simulation.policy, ProcessPolicy::Bottleneck);
    assert_eq!(simulation.priority_form, GapForm::Normalised);
    assert_eq!(simulation.accounting, Accounting::Global);
    assert_eq!(scenario.resources, ["CPU"]);
    let process = &scenario.processes[0];
    assert_eq!(
        (process.name.as_str(), process.entitlement, process.start),
        ("p", 1.0, 0.0)
    );
    assert_eq!(process.program.len(), 1);
}

#[test]
fn every_simulation_key_is_read() {
    let head = "[simulation]\nseed = 7\nruns = 3\nduration = 60\nwindow = 10.0\nbottleneck_threshold = 1\n\
                grace = 0\nquantum = 0.05\npriority_interval = 1.0\npolicy = \"per-resource\"\n\
                priority_form = \"absolute\"\naccounting = \"per-resource\"\n";
    let simulation = load(&with_head(head)).unwrap().simulation;
    let expected = Simulation {
        seed: 7,
        runs: 3,
        duration: Some(60.0),
        window: 10.0,
        bottleneck_threshold: 1.0,
        grace: 0.0,
        quantum: 0.05,
        priority_interval: 1.0,
        policy: ProcessPolicy::PerResource,
        priority_form: GapForm::Absolute,
        accounting: Accounting::PerResource,
    };
    assert_eq!(simulation, expected);
    for (name, policy) in [("drf", ProcessPolicy::Drf), ("fifo", ProcessPolicy::Fifo)] {
        let head = format!("[simulation]\npolicy = \"{name}\"");
        assert_eq!(load(&with_head(&head)).unwrap().simulation.policy, policy);
    }
}

#[test]
fn out_of_range_settings_are_named_by_line_and_column() {
    let cases = [
        (
            "window = 0",
            "window: expected a number from 0.001 to 1e9 (seconds), found 0",
        ),
        (
            "window = -1",
            "window: expected a number from 0.001 to 1e9 (seconds), found -1",
        ),
        (
            "duration = 0.0",
            "duration: expected a number > 0 and ≤ 1e9 (seconds), found 0",
        ),
        (
            "duration = 2e9",
            "duration: expected a number > 0 and ≤ 1e9 (seconds), found 2000000000",
        ),
        (
            "quantum = nan",
            "quantum: expected a number from 0.001 to 1e9 (seconds), found NaN",
        ),
        (
            "quantum = 1e-300",
            "quantum: expected a number from 0.001 to 1e9 (seconds), found 1e-300",
        ),
        (
            "bottleneck_threshold = 0",
            "bottleneck_threshold: expected a number > 0 and ≤ 1, found 0",
        ),
        (
            "bottleneck_threshold = 1.5",
            "bottleneck_threshold: expected a number > 0 and ≤ 1, found 1.5",
        ),
        (
            "grace = -0.5",
            "grace: expected a number from 0 to 1e9 (seconds), found -0.5",
        ),
        (
            "priority_interval = -1",
            "priority_interval: expected 0, or a number from 0.001 to 1e9 (seconds), found -1",
        ),
        (
            "priority_interval = 1e-6",
            "priority_interval: expected 0, or a number from 0.001 to 1e9 (seconds), found 1e-6",
        ),
        (
            "runs = 0",
            "runs: expected a whole number from 1 to 1000, found 0",
        ),
        (
            "runs = 1000000",
            "runs: expected a whole number from 1 to 1000, found 1000000",
        ),
    ];
    for (line, expected) in cases {
        let column = line.find('=').unwrap() + 3;
        let text = with_head(&format!("[simulation]\n{line}"));
        assert_eq!(
            message(&text),
            format!("{ORIGIN}:2:{column}: {expected}"),
            "{line}"
        );
    }
    let text = with_head("[simulation]\npolicy = \"lottery\"");
    assert!(message(&text).starts_with(&format!("{ORIGIN}:2:10: unknown variant `lottery`")));
}

#[test]
fn unknown_keys_are_errors_everywhere() {
    let text = with_head("[simulation]\nwindo = 3");
    assert!(message(&text).starts_with(&format!(
        "{ORIGIN}:2:1: unknown field `windo`, expected one of"
    )));
    let text = with_head("[settings]");
    assert!(
        message(&text).starts_with(&format!("{ORIGIN}:1:")),
        "{}",
        message(&text)
    );
    assert!(message(&text).contains("unknown field `settings`"));
    let text = "[[resource]]\nname = \"CPU\"\ncapacity = 2\n";
    assert!(message(&with_head(text)).contains("unknown field `capacity`"));
    let text =
        "[[process]]\nname = \"p\"\nentitlement = 1\nweight = 2\nprogram = \"CPU 1 0 NORM\"\n";
    assert!(message(text).contains("unknown field `weight`"));
}

#[test]
fn toml_syntax_errors_give_line_and_column() {
    let text = "[simulation]\nseed = 1\nruns = [\n";
    assert!(
        message(text).starts_with(&format!("{ORIGIN}:4:1: ")),
        "{}",
        message(text)
    );
}

#[test]
fn process_values_are_checked() {
    let process =
        |keys: &str| format!("[[process]]\nname = \"p\"\n{keys}\nprogram = \"CPU 1 0 NORM\"\n");
    assert_eq!(
        message(&process("entitlement = 0")),
        format!("{ORIGIN}:3:15: expected a number > 0, found 0")
    );
    assert_eq!(
        message(&process("entitlement = -2")),
        format!("{ORIGIN}:3:15: expected a number > 0, found -2")
    );
    assert_eq!(
        message(&process("entitlement = 1\nstart = -1")),
        format!("{ORIGIN}:4:9: start: expected a number from 0 to 1e9 (seconds), found -1")
    );
    assert_eq!(
        message(&process("entitlement = 1\nstart = 1.9e13")),
        format!("{ORIGIN}:4:9: start: expected a number from 0 to 1e9 (seconds), found 1.9e13")
    );
    assert_eq!(
        message(&process("")),
        format!("{ORIGIN}:2: process \"p\": expected `entitlement` (a number > 0)")
    );
    assert_eq!(
        message("[[process]]\nname = \"\"\nentitlement = 1\nprogram = \"\"\n"),
        format!("{ORIGIN}:2:8: expected a process name, found a blank one")
    );
    let scenario = load(&process("entitlement = 2.5\nstart = 4")).unwrap();
    assert_eq!(
        (
            scenario.processes[0].entitlement,
            scenario.processes[0].start
        ),
        (2.5, 4.0)
    );
}

#[test]
fn programs_that_would_not_finish_are_refused_naming_the_process() {
    let process = |name: &str, keys: &str, program: &str| {
        format!("[[process]]\nname = \"{name}\"\nentitlement = 1\n{keys}\nprogram = \"\"\"\n{program}\"\"\"\n")
    };
    // 4·10⁹ one-second requests: 4·10⁹ s at the mean, past the latest instant of a run.
    let long = process("long", "", "loop 4000000000\nCPU 1 0 NORM");
    let text = format!("{}{long}", process("short", "", "CPU 1 0 NORM"));
    assert_eq!(
        message(&text),
        format!("{ORIGIN}:8: process \"long\": starting at 0 s, its program takes 4.000e9 s at the mean request lengths, past the latest instant a run may reach (1e9 s); set [simulation] duration, or shorten the program")
    );
    // A late start counts too.
    let late = process("late", "start = 9e8", "loop 2\nCPU 1e8 0 NORM");
    assert!(message(&late).contains("process \"late\": starting at 900000000 s"));
    // Short requests, but far too many of them: 3·10⁶ requests, 10⁶ quanta more.
    let busy = process(
        "busy",
        "",
        "loop 1000000\nCPU_CS 0.1 0 NORM\nDISK 0.001 0 NORM\nidle 0.001 0 NORM",
    );
    assert_eq!(
        message(&busy),
        format!("{ORIGIN}:2: the programs cause about 4.000e6 engine events per run at the mean request lengths (process \"busy\" alone 4.000e6), more than the 2000000 a run may handle; set [simulation] duration, or lower the loop counts")
    );
    // With a duration, the run stops in time: the engine's own limits apply while it runs.
    assert!(load(&format!("[simulation]\nduration = 60\n{busy}")).is_ok());
    assert!(load(&format!("[simulation]\nduration = 60\n{long}")).is_ok());
}

#[test]
fn settings_changed_after_loading_are_checked_by_the_same_rules() {
    let mut scenario = load(&with_head("")).unwrap();
    assert!(scenario.check().is_ok());
    scenario.simulation.quantum = 1e-300;
    assert_eq!(
        scenario.check().unwrap_err().to_string(),
        "quantum: expected a number from 0.001 to 1e9 (seconds), found 1e-300"
    );
    scenario.simulation.quantum = 0.1;
    scenario.simulation.runs = fairshare_sim::scenario::MAX_RUNS + 1;
    assert!(scenario
        .check()
        .unwrap_err()
        .to_string()
        .starts_with("runs: "));
    scenario.simulation.runs = 1;
    scenario.processes[0].start = 1.9e13;
    assert!(scenario
        .check()
        .unwrap_err()
        .to_string()
        .starts_with("start: "));
}

#[test]
fn a_process_needs_exactly_one_program_and_a_unique_name() {
    let text = "[[process]]\nname = \"p\"\nentitlement = 1\n";
    assert_eq!(
        message(text),
        format!("{ORIGIN}:2: process \"p\": expected `program` or `program_file`")
    );
    let text =
        "[[process]]\nname = \"p\"\nentitlement = 1\nprogram = \"\"\nprogram_file = \"p.prog\"\n";
    assert_eq!(
        message(text),
        format!("{ORIGIN}:2: process \"p\": expected `program` or `program_file`, not both")
    );
    let text = format!(
        "{}\n[[process]]\nname = \"p\"\nentitlement = 2\nprogram = \"\"\n",
        with_head("")
    );
    assert_eq!(
        message(&text),
        format!("{ORIGIN}:8: process \"p\": the name is already taken by an earlier process")
    );
    assert_eq!(
        message("[simulation]\nruns = 2\n"),
        format!("{ORIGIN}: expected at least one [[process]]")
    );
}

#[test]
fn program_errors_are_reported_at_their_line_in_the_scenario_file() {
    let text = "[[process]]\nname = \"red\"\nentitlement = 33\nprogram = \"\"\"\nloop 1\nCPU_CS 2 0 NORM\nloop 40\nDISK 0.1 -0.05 NORM\n\"\"\"\n";
    assert_eq!(
        message(text),
        format!("{ORIGIN}:8: process \"red\": program line 4: width: expected a number from 0 to 1e9 (seconds), found \"-0.05\"")
    );
    // A literal string starting on the key's line: program line 1 is that line.
    let text = "[[process]]\nname = \"red\"\nentitlement = 1\nprogram = '''loop 1\nCPU_CS 2 0 NORMAL\nCPU_CS 2 0\n'''\n";
    assert_eq!(
        message(text),
        format!("{ORIGIN}:6: process \"red\": program line 3: expected `RESOURCE MEAN WIDTH DIST`, found 3 field(s)")
    );
    // Escaped newlines: the line within the program is still given.
    let text =
        "[[process]]\nname = \"red\"\nentitlement = 1\nprogram = \"loop 1\\nCPU_CS 2 0 BAD\"\n";
    assert_eq!(
        message(text),
        format!(
            "{ORIGIN}: process \"red\": program line 2: distribution: expected NORM, UNIF or EXP \
             (or NORMAL, UNIFORM, EXPONENTIAL), found \"BAD\""
        )
    );
}

#[test]
fn resources_default_to_the_order_of_first_use() {
    let text = "[[process]]\nname = \"a\"\nentitlement = 1\nprogram = \"\"\"\nidle 1 0 NORM\nNET 1 0 NORM\nCPU 1 0 NORM\n\"\"\"\n\
                [[process]]\nname = \"b\"\nentitlement = 1\nprogram = \"\"\"\nloop 0\nDISK 1 0 NORM\nloop 1\nCPU 1 0 NORM\nGPU 1 0 EXP\n\"\"\"\n";
    let scenario = load(text).unwrap();
    assert_eq!(scenario.resources, ["NET", "CPU", "DISK", "GPU"]);
    assert_eq!(
        scenario.processes[0]
            .program
            .requests()
            .next()
            .unwrap()
            .resource,
        None
    );
    assert_eq!(
        scenario.processes[1]
            .program
            .requests()
            .nth(1)
            .unwrap()
            .dist,
        Dist::Exponential
    );
}

#[test]
fn declared_resources_keep_their_order_and_must_cover_every_use() {
    let head = "[[resource]]\nname = \"DISK\"\n[[resource]]\nname = \"CPU\"\n[[resource]]\nname = \"NET\"\n";
    assert_eq!(
        load(&with_head(head)).unwrap().resources,
        ["DISK", "CPU", "NET"]
    );
    let text = "[[resource]]\nname = \"DISK\"\n[[process]]\nname = \"red\"\nentitlement = 1\nprogram = \"\"\"\nDISK 1 0 NORM\nidle 1 0 NORM\nCPU 1 0 NORM\n\"\"\"\n";
    assert_eq!(
        message(text),
        format!(
            "{ORIGIN}:9: process \"red\" uses resource \"CPU\", which no [[resource]] declares"
        )
    );
    let head = "[[resource]]\nname = \"CPU\"\n[[resource]]\nname = \"CPU\"\n";
    assert_eq!(
        message(&with_head(head)),
        format!("{ORIGIN}:4: resource \"CPU\" is declared twice")
    );
    for name in ["idle", "IDLE", "a b", ""] {
        let head = format!("[[resource]]\nname = \"{name}\"\n");
        assert!(
            message(&with_head(&head))
                .starts_with(&format!("{ORIGIN}:2:8: expected a resource name")),
            "{name}"
        );
    }
}

#[test]
fn program_files_give_priority_and_program() {
    let dir = tempfile::TempDir::new().unwrap();
    let prog = "# Priority:\n34\n# Requests:\nloop 1\nCPU_CS 2 0 NORM\nloop 40\nDISK_CS 0.1 0.05 NORM\nCPU_CS 0.1 0.05 NORM\n";
    std::fs::create_dir(dir.path().join("programs")).unwrap();
    std::fs::write(dir.path().join("programs/green.prog"), prog).unwrap();
    let path = dir.path().join("s.toml");
    let write = |text: &str| std::fs::write(&path, text).unwrap();

    write("[[process]]\nname = \"green\"\nprogram_file = \"programs/green.prog\"\n");
    let scenario = Scenario::read(&path).unwrap();
    assert_eq!(scenario.processes[0].entitlement, 34.0);
    assert_eq!(scenario.processes[0].program.len(), 81);
    assert_eq!(scenario.resources, ["CPU_CS", "DISK_CS"]);

    // An entitlement in the TOML overrides the file's priority.
    write(
        "[[process]]\nname = \"green\"\nentitlement = 20\nprogram_file = \"programs/green.prog\"\n",
    );
    assert_eq!(
        Scenario::read(&path).unwrap().processes[0].entitlement,
        20.0
    );

    // Errors in the program file name that file and its line.
    std::fs::write(
        dir.path().join("bad.prog"),
        "# Priority:\n1\n# Requests:\nloop x\n",
    )
    .unwrap();
    write("[[process]]\nname = \"green\"\nprogram_file = \"bad.prog\"\n");
    let bad = dir.path().join("bad.prog");
    assert_eq!(
        Scenario::read(&path).unwrap_err().to_string(),
        format!(
            "{}:4: process \"green\": loop count: expected a whole number ≥ 0, found \"x\"",
            bad.display()
        )
    );

    // Undeclared resources in a program file point into it.
    write("[[resource]]\nname = \"CPU_CS\"\n[[process]]\nname = \"green\"\nprogram_file = \"programs/green.prog\"\n");
    let green = dir.path().join("programs/green.prog");
    assert_eq!(
        Scenario::read(&path).unwrap_err().to_string(),
        format!(
            "{}:7: process \"green\" uses resource \"DISK_CS\", which no [[resource]] declares",
            green.display()
        )
    );

    // A missing program file is named, with the scenario line that names it.
    write("[[process]]\nname = \"green\"\n\nprogram_file = \"none.prog\"\n");
    let error = Scenario::read(&path).unwrap_err();
    assert!(
        matches!(error, ScenarioError::ProgramFileIo { .. }),
        "{error}"
    );
    let expected = format!(
        "{}:4: process \"green\": cannot read program_file {}: ",
        path.display(),
        dir.path().join("none.prog").display()
    );
    assert!(error.to_string().starts_with(&expected), "{error}");
}

#[test]
fn an_unreadable_scenario_is_an_io_error() {
    let error = Scenario::read(Path::new("no/such/scenario.toml")).unwrap_err();
    assert!(
        matches!(error, ScenarioError::Config(ConfigError::Io { .. })),
        "{error}"
    );
    assert!(error.to_string().starts_with("no/such/scenario.toml: "));
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/bottleneck")
}

/// A process of a shipped scenario: name, entitlement, expanded request count.
type Expected = (&'static str, f64, usize);

/// Each shipped scenario: its runs and its processes.
const EXAMPLES: &[(&str, u32, &[Expected])] = &[
    (
        "fig01-program-file",
        20,
        &[("red", 33.0, 1), ("blue", 33.0, 1), ("green", 34.0, 81)],
    ),
    (
        "fig02-late-arrival",
        1,
        &[("red", 33.0, 1), ("blue", 67.0, 2)],
    ),
    (
        "fig03-four-entitlements",
        1,
        &[
            ("p10", 10.0, 1),
            ("p20", 20.0, 1),
            ("p30", 30.0, 1),
            ("p40", 40.0, 1),
        ],
    ),
    (
        "fig04-different-resources",
        20,
        &[("blue", 70.0, 10), ("green", 20.0, 10), ("red", 10.0, 10)],
    ),
    (
        "fig05-grace-period",
        20,
        &[("red", 70.0, 12), ("blue", 30.0, 1)],
    ),
    (
        "fig06-suspension",
        20,
        &[("red", 70.0, 8), ("blue", 30.0, 1)],
    ),
    (
        "fig06-suspension-exp",
        20,
        &[("red", 70.0, 8), ("blue", 30.0, 1)],
    ),
    (
        "fig07-three-processes-two-resources",
        1,
        &[("red", 40.0, 1), ("blue", 40.0, 1), ("green", 20.0, 81)],
    ),
    (
        "fig08a-equal-priorities",
        1,
        &[("red", 1.0, 1), ("blue", 1.0, 1), ("green", 1.0, 81)],
    ),
    (
        "fig08b-green-double",
        1,
        &[("red", 25.0, 1), ("blue", 25.0, 1), ("green", 50.0, 81)],
    ),
    (
        "fig08c-green-double-randomised",
        20,
        &[("red", 25.0, 1), ("blue", 25.0, 1), ("green", 50.0, 81)],
    ),
    (
        "fig09-different-priorities",
        20,
        &[
            ("purple", 97.0, 9),
            ("blue", 1.0, 9),
            ("green", 1.0, 9),
            ("red", 1.0, 9),
        ],
    ),
    (
        "fig10a-purple-40",
        20,
        &[
            ("purple", 40.0, 9),
            ("blue", 20.0, 9),
            ("green", 20.0, 9),
            ("red", 20.0, 9),
        ],
    ),
    (
        "fig10b-purple-10",
        20,
        &[
            ("purple", 10.0, 9),
            ("blue", 30.0, 9),
            ("green", 30.0, 9),
            ("red", 30.0, 9),
        ],
    ),
    (
        "fig11-ring-deterministic",
        1,
        &[
            ("pair0a", 1.0, 300),
            ("pair0b", 1.0, 300),
            ("pair1a", 1.0, 300),
            ("pair1b", 1.0, 300),
            ("pair2a", 1.0, 300),
            ("pair2b", 1.0, 300),
            ("pair3a", 1.0, 300),
            ("pair3b", 1.0, 300),
        ],
    ),
    (
        "fig11-ring-randomised",
        20,
        &[
            ("pair0a", 1.0, 300),
            ("pair0b", 1.0, 300),
            ("pair1a", 1.0, 300),
            ("pair1b", 1.0, 300),
            ("pair2a", 1.0, 300),
            ("pair2b", 1.0, 300),
            ("pair3a", 1.0, 300),
            ("pair3b", 1.0, 300),
        ],
    ),
    (
        "fig12-new-bottleneck",
        20,
        &[("red", 33.0, 24), ("green", 67.0, 24), ("blue", 100.0, 2)],
    ),
    (
        "fig13-bottleneck-shift",
        20,
        &[
            ("P1", 50.0, 120),
            ("P2", 25.0, 80),
            ("P3", 12.5, 80),
            ("P4", 12.5, 80),
        ],
    ),
    (
        "fig14-complementary-deterministic",
        1,
        &[
            ("cpuheavy", 1.0, 400),
            ("netheavy", 1.0, 400),
            ("both", 1.0, 400),
        ],
    ),
    (
        "fig14-complementary-randomised",
        20,
        &[
            ("cpuheavy", 1.0, 400),
            ("netheavy", 1.0, 400),
            ("both", 1.0, 400),
        ],
    ),
];

#[test]
fn every_shipped_scenario_parses_with_its_expected_programs() {
    let mut shipped: Vec<String> = std::fs::read_dir(examples())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    shipped.sort();
    let mut listed: Vec<String> = EXAMPLES
        .iter()
        .map(|(name, _, _)| name.to_string())
        .collect();
    listed.sort();
    assert_eq!(shipped, listed, "every shipped scenario is checked here");

    for &(name, runs, processes) in EXAMPLES {
        let scenario = Scenario::read(&examples().join(format!("{name}.toml")))
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(scenario.simulation.runs, runs, "{name}");
        assert_eq!(
            scenario.simulation.seed,
            if runs == 1 { 1 } else { 0 },
            "{name}"
        );
        let found: Vec<_> = scenario
            .processes
            .iter()
            .map(|p| (p.name.as_str(), p.entitlement, p.program.len()))
            .collect();
        assert_eq!(found, processes, "{name}");
        let deterministic = scenario
            .processes
            .iter()
            .flat_map(|p| p.program.requests())
            .all(|r| r.width == 0.0);
        assert_eq!(
            deterministic,
            runs == 1,
            "{name}: runs = 1 exactly when every width is 0"
        );
        assert_eq!(scenario.simulation.window, 3.0, "{name}");
    }
}

#[test]
fn shipped_scenarios_use_the_papers_resources_in_lane_order() {
    let resources = |name: &str| Scenario::read(&examples().join(name)).unwrap().resources;
    assert_eq!(resources("fig02-late-arrival.toml"), ["CPU_CS"]);
    assert_eq!(
        resources("fig04-different-resources.toml"),
        ["CPU_CS", "NET_CS", "DISK_CS"]
    );
    assert_eq!(
        resources("fig11-ring-deterministic.toml"),
        ["R0_CS", "R1_CS", "R2_CS", "R3_CS"]
    );
    assert_eq!(
        resources("fig13-bottleneck-shift.toml"),
        ["CPU_CS", "DISK_CS", "NET_CS"]
    );
    let (priority, program) = fairshare_sim::scenario::parse_program_file(
        &std::fs::read_to_string(examples().join("fig01-program.prog")).unwrap(),
    )
    .unwrap();
    assert_eq!((priority, program.len()), (34.0, 81));
}

#[test]
fn every_process_policy_is_the_registrys_under_the_same_name() {
    use fairshare_core::policy::{Engine, PolicySpec};
    for policy in ProcessPolicy::ALL {
        let spec = PolicySpec::parse_for(policy.name(), Engine::Simulate).unwrap();
        assert_eq!(ProcessPolicy::of(&spec), Some(policy));
        let toml = format!("\"{}\"", policy.name());
        let read: ProcessPolicy = toml::from_str(&format!("p = {toml}"))
            .map(|t: std::collections::HashMap<String, ProcessPolicy>| t["p"])
            .unwrap();
        assert_eq!(
            read, policy,
            "a scenario file spells it as the registry does"
        );
    }
}
