//! Behaviour of the simulate page and table on small synthetic results.

use fairshare_report::{simulate_html, simulate_table};
use fairshare_sim::process::result::{
    Cumulative, ProcessResult, ResourceResult, ResourceRun, Segment, SimulationResult, Spread,
};

fn process(name: &str, entitlement: f64, finish: Option<f64>) -> ProcessResult {
    ProcessResult {
        name: name.into(),
        entitlement,
        finish_time: finish,
        consumed: [("CPU_CS".to_string(), 6.0), ("DISK".to_string(), 4.0)]
            .into_iter()
            .collect(),
        finish_time_spread: None,
        consumed_spread: None,
        per_run: vec![],
    }
}

fn segment(resource: &str, process: &str, start: f64, end: f64) -> Segment {
    Segment {
        resource: resource.into(),
        process: process.into(),
        start,
        end,
    }
}

/// Two processes alternating on the CPU in 0.1 s quanta while the other uses the disk.
fn sample() -> SimulationResult {
    let names = ["red", "<b>blue</b>"];
    let mut timeline = Vec::new();
    for k in 0..100 {
        let t = 0.1 * k as f64;
        let (cpu, disk) = if k % 2 == 0 { (0, 1) } else { (1, 0) };
        timeline.push(segment("CPU_CS", names[cpu], t, t + 0.1));
        timeline.push(segment("DISK", names[disk], t, t + 0.05));
    }
    let times: Vec<f64> = (0..=100).map(|i| 0.1 * i as f64).collect();
    let service = vec![
        times.iter().map(|t| t * 0.7).collect(),
        times.iter().map(|t| t * 0.5).collect(),
    ];
    SimulationResult {
        scenario: "fig<2>.toml".into(),
        policy: "bottleneck".into(),
        runs: 1,
        seed: 7,
        end_s: 10.0,
        processes: vec![
            process(names[0], 0.7, Some(9.5)),
            process(names[1], 0.3, None),
        ],
        resources: vec![
            ResourceResult {
                name: "CPU_CS".into(),
                busy_s: 10.0,
                bottleneck_intervals: vec![[2.71, 10.0]],
                per_run: vec![],
            },
            ResourceResult {
                name: "DISK".into(),
                busy_s: 5.0,
                bottleneck_intervals: vec![],
                per_run: vec![],
            },
        ],
        timeline,
        cumulative: Cumulative {
            times_s: times,
            service,
            mean: vec![],
            std: vec![],
        },
        events: 400,
    }
}

/// The sample as if it had been run five times.
fn several_runs() -> SimulationResult {
    let mut r = sample();
    r.runs = 5;
    let spread = Spread {
        mean: 9.4,
        std: 0.2,
        min: 9.1,
        max: 9.8,
    };
    for p in &mut r.processes {
        p.finish_time_spread = Some(spread);
        p.consumed_spread = Some(p.consumed.keys().map(|k| (k.clone(), spread)).collect());
    }
    r.cumulative.mean = r.cumulative.service.clone();
    r.cumulative.std = r
        .cumulative
        .service
        .iter()
        .map(|v| v.iter().map(|x| 0.1 * x).collect())
        .collect();
    r
}

fn lanes(page: &str) -> usize {
    page.matches("fill=\"#F4F4F4\"").count()
}

fn assert_clean(page: &str) {
    let without_xmlns = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!without_xmlns.contains("http://") && !without_xmlns.contains("https://"));
    assert!(!page.to_lowercase().contains("<script"));
    assert!(
        !page.contains("NaN") && !page.contains("inf"),
        "NaN or inf in output"
    );
}

#[test]
fn the_page_is_self_contained_and_clean() {
    for r in [sample(), several_runs()] {
        let page = simulate_html(&r);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert_clean(&page);
        assert!(!simulate_table(&r, None).contains("NaN"));
    }
}

#[test]
fn one_gantt_lane_per_resource() {
    let page = simulate_html(&sample());
    assert_eq!(lanes(&page), 2);
    let mut r = sample();
    r.resources.push(ResourceResult {
        name: "NET".into(),
        busy_s: 0.0,
        bottleneck_intervals: vec![],
        per_run: vec![],
    });
    assert_eq!(lanes(&simulate_html(&r)), 3);
}

#[test]
fn bottleneck_strips_appear_only_with_intervals() {
    let grey = |p: &str| p.matches("fill=\"#787878\"").count();
    let with = simulate_html(&sample());
    let mut r = sample();
    r.resources[0].bottleneck_intervals.clear();
    let without = simulate_html(&r);
    assert_eq!(grey(&with), grey(&without) + 1);
}

#[test]
fn touching_bars_of_one_process_are_merged() {
    let mut r = sample();
    r.timeline = (0..50)
        .map(|k| segment("CPU_CS", "red", 0.1 * k as f64, 0.1 * (k + 1) as f64))
        .collect();
    let red = |p: &str| filled(p, RED);
    let one = red(&simulate_html(&r));
    assert!(one > 0, "no red bar");
    r.timeline.truncate(1);
    assert_eq!(one, red(&simulate_html(&r)));
}

#[test]
fn names_are_escaped() {
    let r = sample();
    let page = simulate_html(&r);
    assert!(!page.contains("<b>blue</b>") && page.contains("&lt;b&gt;blue&lt;/b&gt;"));
    assert!(!page.contains("fig<2>") && page.contains("fig&lt;2&gt;.toml"));
    assert!(simulate_table(&r, None).contains("<b>blue</b>"));
}

#[test]
fn output_is_deterministic() {
    for r in [sample(), several_runs()] {
        assert_eq!(simulate_html(&r), simulate_html(&r.clone()));
        assert_eq!(simulate_table(&r, None), simulate_table(&r.clone(), None));
    }
}

#[test]
fn several_runs_show_spreads_and_a_band() {
    let one = sample();
    let five = several_runs();
    let (table1, table5) = (simulate_table(&one, None), simulate_table(&five, None));
    assert!(!table1.contains('±') && table5.contains("9.40 ± 0.20"));
    assert!(table5.contains("9.10–9.80"));
    assert!(!simulate_html(&one).contains("<polygon"));
    assert!(simulate_html(&five).contains("<polygon"));
}

#[test]
fn an_unfinished_process_says_so() {
    let table = simulate_table(&sample(), None);
    let blue = table.lines().find(|l| l.contains("blue")).unwrap_or("");
    assert!(blue.contains("unfinished"), "{table}");
}

#[test]
fn empty_and_zero_length_runs_render() {
    let mut r = sample();
    r.timeline.clear();
    assert!(simulate_html(&r).contains("every lane is blank"));
    r.end_s = 0.0;
    r.cumulative = Cumulative::default();
    for res in &mut r.resources {
        res.bottleneck_intervals.clear();
        res.busy_s = 0.0;
    }
    let page = simulate_html(&r);
    assert_clean(&page);
    assert_eq!(lanes(&page), 2);
    assert!(page.contains("run lasted no time"));
    assert!(!simulate_table(&r, None).contains("NaN"));
    r.resources.clear();
    r.processes.clear();
    assert_clean(&simulate_html(&r));
}

#[test]
fn non_finite_and_unknown_inputs_do_not_leak() {
    let mut r = several_runs();
    r.end_s = f64::NAN;
    r.timeline.push(segment("CPU_CS", "ghost", f64::NAN, 3.0));
    r.timeline.push(segment("GPU", "red", 1.0, f64::INFINITY));
    r.cumulative.std[0][3] = f64::NAN;
    r.processes[0].finish_time = Some(f64::INFINITY);
    r.resources[1]
        .bottleneck_intervals
        .push([f64::NEG_INFINITY, 1.0]);
    assert_clean(&simulate_html(&r));
    assert!(!simulate_table(&r, None).contains("NaN"));
}

#[test]
fn a_long_run_is_cut_and_says_so() {
    let mut r = sample();
    r.timeline = (0..30_000)
        .map(|k| {
            let p = if k % 2 == 0 { "red" } else { "<b>blue</b>" };
            segment("CPU_CS", p, 0.1 * k as f64, 0.1 * (k + 1) as f64)
        })
        .collect();
    r.end_s = 3_000.0;
    let page = simulate_html(&r);
    assert!(page.contains("only its first 2000.0 s of 3000.0 s are drawn"));
    assert!(page.len() < 5_000_000, "{} bytes", page.len());
}

/// The number of shapes filled with `hex`.
fn filled(page: &str, hex: &str) -> usize {
    page.matches(&format!("fill=\"{hex}\"")).count()
}

/// The sample with its two processes renamed `first` and `second`, the second's disk use
/// dropped so that the first has twice its bars.
fn named(first: &str, second: &str) -> SimulationResult {
    let mut r = sample();
    let second_name = r.processes[1].name.clone();
    r.timeline
        .retain(|s| !(*s.process == *second_name && &*s.resource == "DISK"));
    let old: Vec<String> = r.processes.iter().map(|p| p.name.clone()).collect();
    for (p, name) in r.processes.iter_mut().zip([first, second]) {
        p.name = name.into();
    }
    for s in &mut r.timeline {
        s.process = if *s.process == *old[0] { first } else { second }.into();
    }
    r
}

const RED: &str = "#D55E00";
const BLUE: &str = "#0072B2";

#[test]
fn processes_named_after_colours_are_drawn_in_them_whatever_their_order() {
    // By position "red", the first process, would take the palette's first colour, blue.
    let page = simulate_html(&named("red", "blue"));
    let (red, blue) = (filled(&page, RED), filled(&page, BLUE));
    assert!(red >= 100 && red > blue + 40, "red {red}, blue {blue}");
}

#[test]
fn other_names_take_colours_no_named_process_uses() {
    // "blue" claims the palette's first colour, so "worker" (first) takes the next, not blue.
    let page = simulate_html(&named("worker", "blue"));
    let (worker, blue) = (filled(&page, RED), filled(&page, BLUE));
    assert!(
        worker >= 100 && worker > blue + 40,
        "worker {worker}, blue {blue}"
    );
}

#[test]
fn several_runs_summarise_each_resource_over_the_runs() {
    let mut r = several_runs();
    let run = |bottleneck_from_s: Option<f64>| ResourceRun {
        busy_s: 10.0,
        bottleneck_s: if bottleneck_from_s.is_some() {
            4.0
        } else {
            0.0
        },
        bottleneck_from_s,
    };
    r.resources[0].per_run = vec![run(Some(2.0)), run(Some(4.0)), run(None)];
    r.resources[1].per_run = vec![run(None); 3];
    for page in [simulate_html(&r), simulate_table(&r, None)] {
        assert!(page.contains("runs with a bottleneck"), "{page}");
        // Onset over the two runs that had one: 3 ± 1 s; bottleneck time over all three.
        assert!(
            page.contains("2 of 3") && page.contains("3.00 ± 1.00"),
            "{page}"
        );
        assert!(
            page.contains("2.67 ± 1.89") && page.contains("0 of 3"),
            "{page}"
        );
    }
    assert!(!simulate_table(&sample(), None).contains("runs with a bottleneck"));
}

/// The sample with one process per name, served in turn on the CPU in 0.1 s quanta.
fn with_processes(names: &[&str]) -> SimulationResult {
    let mut r = sample();
    let share = 1.0 / names.len() as f64;
    r.processes = names.iter().map(|n| process(n, share, Some(9.0))).collect();
    r.timeline = (0..100)
        .map(|k| {
            let t = 0.1 * k as f64;
            segment("CPU_CS", names[k % names.len()], t, t + 0.1)
        })
        .collect();
    let service: Vec<f64> = r.cumulative.times_s.iter().map(|t| t * share).collect();
    r.cumulative.service = vec![service; names.len()];
    r
}

/// (first line of the label, colour) of every legend entry on the page, chart after chart.
fn legend_entries(page: &str) -> Vec<(String, String)> {
    let entry = |tag: &str| {
        let colour = tag.split("stroke=\"").nth(1)?.get(..7)?;
        let label = tag
            .split("<text")
            .nth(1)?
            .split(">\n")
            .nth(1)?
            .lines()
            .next()?;
        Some((label.to_string(), colour.to_string()))
    };
    let swatches = page
        .split("<polyline")
        .filter(|t| t.contains("stroke-width=\"3\""));
    swatches.filter_map(entry).collect()
}

/// The colours the legends give process `name` (entries read `name (share)`).
fn colours_of(page: &str, name: &str) -> Vec<String> {
    let prefix = format!("{name} (");
    let entries = legend_entries(page).into_iter();
    entries
        .filter(|(l, _)| l.starts_with(&prefix))
        .map(|e| e.1)
        .collect()
}

/// Every colour name and its shade, in assorted cases.
const SHADES: [(&str, &str); 13] = [
    ("red", RED),
    ("Blue", BLUE),
    ("GREEN", "#009E73"),
    ("purple", "#CC79A7"),
    ("orange", "#E69F00"),
    ("cyan", "#56B4E9"),
    ("black", "#000000"),
    ("yellow", "#F0E442"),
    ("pink", "#F095BE"),
    ("Magenta", "#C51B8A"),
    ("brown", "#8C510A"),
    ("grey", "#A0A0A0"),
    ("GRAY", "#A0A0A0"),
];

#[test]
fn every_colour_name_is_drawn_in_its_shade_in_any_case() {
    for (name, shade) in SHADES {
        for (first, second) in [(name, "worker"), ("worker", name)] {
            let page = simulate_html(&named(first, second));
            // Both legends (Gantt chart and cumulative service) give the name its shade.
            assert_eq!(colours_of(&page, name), [shade, shade], "{name}");
            if shade != "#000000" {
                // Text is black too, so only other shades count bars.
                assert!(filled(&page, shade) >= 50, "{name}: no bar in {shade}");
            }
        }
    }
}

#[test]
fn processes_keep_one_colour_each_and_none_shares_a_colour() {
    let names = [
        "pink", "p10", "purple", "Magenta", "p20", "red", "P0", "blue",
    ];
    let page = simulate_html(&with_processes(&names));
    let mut seen: Vec<String> = Vec::new();
    for name in names {
        let colours = colours_of(&page, name);
        // The cumulative service's legend lists every process, the Gantt chart's those it has
        // room for.
        assert!(!colours.is_empty(), "{name} in no legend");
        assert!(
            colours.iter().all(|c| *c == colours[0]),
            "{name}: {colours:?}"
        );
        assert!(!seen.contains(&colours[0]), "{name} shares {}", colours[0]);
        seen.push(colours[0].clone());
    }
    // p10, p20 and P0 take none of the palette colours the colour names use or resemble
    // (pink and magenta resemble purple's reddish purple).
    let named_palette = ["#CC79A7", RED, BLUE];
    for name in ["p10", "p20", "P0"] {
        let colour = &colours_of(&page, name)[0];
        assert!(
            !named_palette.contains(&colour.as_str()),
            "{name}: {colour}"
        );
    }
}

#[test]
fn other_names_take_the_other_shades_once_colour_names_hold_the_palette() {
    let names = [
        "red", "blue", "green", "purple", "orange", "cyan", "black", "yellow", "w1", "w2",
    ];
    let page = simulate_html(&with_processes(&names));
    let first = |name: &str| colours_of(&page, name)[0].clone();
    let shades: Vec<String> = names.iter().map(|n| first(n)).collect();
    for (i, shade) in shades.iter().enumerate() {
        assert!(!shades[..i].contains(shade), "{} shares {shade}", names[i]);
    }
    // The first explicit shades of the colour table: pink's and magenta's.
    assert_eq!([first("w1"), first("w2")], ["#F095BE", "#C51B8A"]);
}

/// The first SVG of the page: the Gantt chart.
fn gantt_svg(page: &str) -> &str {
    let start = page.find("<svg").expect("an SVG");
    let end = page[start..].find("</svg>").expect("a closed SVG") + start;
    &page[start..end]
}

#[test]
fn a_long_lane_name_is_cut_and_kept_whole_in_a_tooltip() {
    let long = "DISK_with_a_rather_long_descriptive_name";
    assert_eq!(long.chars().count(), 40);
    let mut r = sample();
    r.resources[1].name = long.into();
    for s in r.timeline.iter_mut().filter(|s| &*s.resource == "DISK") {
        s.resource = long.into();
    }
    let page = simulate_html(&r);
    let gantt = gantt_svg(&page);
    assert_eq!(lanes(gantt), 2);
    let cut = "DISK_with_a_rather_long…";
    assert_eq!(cut.chars().count(), 24);
    let label = format!("><title>{long}</title>\n{cut}\n</text>");
    assert!(gantt.contains(&label), "{gantt}");
    assert!(!gantt.contains(&format!(">\n{long}\n<")), "written whole");
}

#[test]
fn lane_names_cut_alike_keep_their_own_tooltips() {
    let (top, bottom) = (
        "DISK_with_a_rather_long_top_lane",
        "DISK_with_a_rather_long_bottom_lane",
    );
    let mut r = sample();
    r.resources[0].name = top.into();
    r.resources[1].name = bottom.into();
    let page = simulate_html(&r);
    let gantt = gantt_svg(&page);
    let y_of = |name: &str| -> f64 {
        let at = gantt.find(&format!("<title>{name}</title>")).expect(name);
        let y = gantt[..at]
            .rsplit(" y=\"")
            .next()
            .and_then(|t| t.split('"').next());
        y.and_then(|y| y.parse().ok()).expect("a y")
    };
    assert!(y_of(top) < y_of(bottom), "tooltips swapped");
    assert_eq!(gantt.matches("<title>").count(), 2, "{gantt}");
}

/// Approximate width of a character of chart text, pixels (a little wider than a digit).
const CHAR_PX: f64 = 8.0;

/// The right end of every centred text of `svg` (x tick labels and the x axis title), pixels.
fn centred_text_ends(svg: &str) -> Vec<(String, f64)> {
    let end = |tag: &str| {
        if !tag.contains("text-anchor=\"middle\"") {
            return None;
        }
        let x: f64 = tag.split("x=\"").nth(1)?.split('"').next()?.parse().ok()?;
        let text = tag.split(">\n").nth(1)?.lines().next()?;
        Some((
            text.to_string(),
            x + text.chars().count() as f64 * CHAR_PX / 2.0,
        ))
    };
    svg.split("<text").skip(1).filter_map(end).collect()
}

/// Where the legend column starts (its swatches are 6 pixels in), else the SVG's width.
fn chart_right(svg: &str) -> f64 {
    let width = svg
        .split("width=\"")
        .nth(1)
        .and_then(|w| w.split('"').next());
    let width: f64 = width.and_then(|w| w.parse().ok()).expect("an SVG width");
    let swatch_x = |tag: &str| -> Option<f64> {
        let points = tag.split("points=\"").nth(1)?;
        Some(points.split(',').next()?.parse::<f64>().ok()? - 6.0)
    };
    let swatches = svg
        .split("<polyline")
        .filter(|t| t.contains("stroke-width=\"3\""));
    swatches.filter_map(swatch_x).fold(width, f64::min)
}

#[test]
fn x_tick_labels_stay_inside_their_chart() {
    for end in [1_000.0, 10_000.0, 12_500.0] {
        let mut r = sample();
        r.end_s = end;
        r.timeline.push(segment("CPU_CS", "red", 10.0, end));
        let page = simulate_html(&r);
        let svgs: Vec<&str> = page.split("<svg").skip(1).collect();
        assert_eq!(svgs.len(), 2);
        for svg in svgs {
            let right = chart_right(svg);
            let ends = centred_text_ends(svg);
            assert!(ends.len() > 5, "{ends:?}");
            for (text, x) in ends {
                assert!(x <= right, "run of {end} s: {text} ends at {x} > {right}");
            }
        }
    }
}
