//! Behaviour of the pages and tables on small synthetic summaries.

use fairshare_core::model::Time;
use fairshare_lab::summary::{
    MachineView, NodeLane, ReadStats, ReplaySummary, Setting, SweepCell, SweepSummary,
};
use fairshare_report::{
    replay_html, replay_table, sweep_html, sweep_table, REPLAY_SECTIONS, REPLAY_TEXT_TABLES,
};
use fairshare_sim::cluster::{
    AccountResult, JobRecord, PolicyResult, ShareSeries, Timeline, UserResult,
};

fn user(id: &str, submitted: u64, completed: u64, wait: f64) -> UserResult {
    UserResult {
        tasks_never_fit: 0,
        tasks_cancelled: 0,
        id: id.into(),
        tasks_submitted: submitted,
        tasks_started: completed,
        tasks_completed: completed,
        mean_wait_s: wait,
        median_wait_s: wait / 2.0,
        p95_wait_s: wait * 3.0,
        mean_dominant_share: 0.2,
        mean_slowdown: 1.0,
        median_slowdown: 1.0,
        p95_slowdown: 1.5,
        mean_response_s: wait + 60.0,
        mean_held: Vec::new(),
        waiting_s: 3_600.0,
        below_share_s: 600.0,
        service_while_waiting: Some(0.8),
        charged: None,
    }
}

fn policy(name: &str, wait: f64, users: Vec<UserResult>, livetree: Option<u64>) -> PolicyResult {
    let times: Vec<f64> = (0..50).map(|i| 600.0 * i as f64).collect();
    let wave = |phase: f64| {
        times
            .iter()
            .map(|t| 0.5 + 0.4 * ((t / 3000.0) + phase).sin())
            .collect::<Vec<_>>()
    };
    let shares = users.iter().enumerate().map(|(i, u)| ShareSeries {
        id: u.id.clone(),
        values: wave(i as f64).iter().map(|v| v / 4.0).collect(),
    });
    let submitted = users.iter().map(|u| u.tasks_submitted).sum();
    let completed = users.iter().map(|u| u.tasks_completed).sum();
    PolicyResult {
        policy: name.into(),
        tasks_submitted: submitted,
        tasks_started: completed,
        tasks_completed: completed,
        tasks_unfinished: submitted - completed,
        tasks_never_fit: 0,
        tasks_cancelled: 0,
        tasks_beyond_horizon: 0,
        tasks_killed_at_walltime: 0,
        mean_wait_s: wait,
        p95_wait_s: 3.0 * wait,
        wait_quantiles_s: (0..21).map(|q| wait * f64::from(q) / 10.0).collect(),
        slowdown_quantiles: (0..21).map(|q| 1.0 + f64::from(q)).collect(),
        user_mean_wait_s: wait * 1.1,
        mean_slowdown: 2.0,
        mean_response_s: 0.0,
        makespan_s: 0.0,
        utilization: [("cpu".to_string(), 0.8), ("memory".to_string(), 0.6)]
            .into_iter()
            .collect(),
        jain_dominant_share: 0.9,
        jain_slowdown: 0.8,
        jain_service: 0.7,
        time_below_share: 0.25,
        livetree_events: livetree,
        livetree_events_per_1000_tasks: None,
        livetree: None,
        simulated_s: 30_000.0,
        events: 1000,
        users: users.clone(),
        timeline: Timeline {
            utilization: vec![wave(wait / 50.0), wave(1.0 + wait / 50.0)],
            times_s: times.clone(),
            dominant_share: shares.collect(),
            received_by_user: Vec::new(),
        },
        tasks_with_unknown_properties: 0,
        tasks_priced_system_wide: 0,
        tasks_pinned: 0,
        tasks_pinned_elsewhere: 0,
        opened: None,
        held_by_limits: Default::default(),
        accounts: Vec::new(),
        jobs: Vec::new(),
    }
}

fn users() -> Vec<UserResult> {
    vec![
        user("alice", 120, 100, 30.0),
        user("<b>bob</b>", 40, 10, 90.0),
        user("carol", 5, 5, 0.0),
        user("dave", 0, 0, 0.0),
    ]
}

fn setting() -> Setting {
    Setting {
        trace: vec!["part-00000-of-00500.csv.gz".into()],
        format: "google-2011".into(),
        resources: vec!["cpu".into(), "memory".into()],
        units: vec!["normalised cores".into(), "normalised bytes".into()],
        mean_demand: vec![12.5, 8.25],
        capacity: vec![6.25, 4.125],
        capacity_fraction: Some(0.5),
        machines: None,
        users: 4,
        span_s: 30_000.0,
        horizon_s: Some(30_000.0),
        rule: "skip-blocked".into(),
        scheduler: "fill".into(),
        placement: "first".into(),
        overrun: "kill".into(),
        turn_seed: None,
        loop_turns_shown: None,
        controller_starts_shown: None,
        backfill_cycles_shown: None,
        capacity_source: "--capacity-fraction 0.5 of the mean demand R".into(),
        capacity_doubt: None,
        shares: String::new(),
        queues: String::new(),
        recorded: Default::default(),
        machine_view: None,
    }
}

fn input() -> ReadStats {
    ReadStats {
        records_read: 1000,
        tasks_found: 180,
        tasks_skipped: [("zero demand".into(), 10), ("no finish".into(), 5)].into(),
        ..ReadStats::default()
    }
}

fn sample_replay() -> ReplaySummary {
    ReplaySummary {
        input: input(),
        setting: setting(),
        policies: vec![
            policy("drf", 60.0, users(), None),
            policy("sdrf:delta=0.999999", 40.0, users(), Some(1234)),
            policy("fifo", 80.0, users(), None),
        ],
    }
}

fn sample_sweep() -> SweepSummary {
    let mut cells = Vec::new();
    for fraction in [0.5, 0.75, 1.0] {
        cells.push(SweepCell {
            fraction,
            epsilon: None,
            result: policy("drf", 100.0 * (1.5 - fraction), users(), None),
        });
        for k in 1..=7 {
            let gain =
                0.3 * (1.0 - fraction + 0.2) * (1.0 - ((k as f64 - 6.0) / 4.0).powi(2)) - 0.02;
            let wait = 100.0 * (1.5 - fraction) * (1.0 - gain);
            let mut sdrf = users();
            sdrf[1].tasks_completed = 20;
            let events = (10f64.powi(7 - k) * (2.0 - fraction)) as u64;
            let result = policy(
                &format!("sdrf:delta=0.{}", "9".repeat(k as usize)),
                wait,
                sdrf,
                Some(events),
            );
            cells.push(SweepCell {
                fraction,
                epsilon: Some(10f64.powi(-k)),
                result,
            });
        }
    }
    SweepSummary {
        input: input(),
        // A sweep's setting gives the capacity at fraction 1, the mean demand.
        setting: Setting {
            capacity: setting().mean_demand,
            capacity_fraction: None,
            ..setting()
        },
        shard_ids: vec![0, 1],
        shards: 2,
        cells,
    }
}

/// Checks what every page must be: self-contained, escaped, NaN-free, with `figures` plots.
fn check_page(html: &str, figures: usize) {
    let outside = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(
        !outside.contains("http://") && !outside.contains("https://"),
        "a network reference"
    );
    assert!(!html.contains("<script"), "a script");
    assert_eq!(html.matches("<svg").count(), figures, "figure count");
    assert!(!html.contains("<b>"), "an unescaped id");
    for bad in ["NaN", "inf\"", "=\"inf", "-inf", "Infinity"] {
        assert!(!html.contains(bad), "{bad} in the page");
    }
}

#[test]
fn replay_page_has_one_plot_per_figure() {
    let s = sample_replay();
    // Wait and slowdown distributions + 2 resources + 3 dominant-share charts + waits +
    // reduction vs DRF.
    check_page(&replay_html(&s), 2 + 2 + 3 + 2);
    assert!(replay_html(&s).contains("&lt;b&gt;bob&lt;/b&gt;"));
}

/// A trace that records its schedule gets one more dominant-share chart, "as recorded", with
/// the users' colours of the policies' charts.
#[test]
fn the_recorded_schedule_gets_its_own_share_chart() {
    let mut s = sample_replay();
    let first = &s.policies[0].timeline;
    s.setting.recorded.started = 3;
    s.setting.recorded.shares = fairshare_lab::RecordedShares {
        times_s: first.times_s.clone(),
        dominant_share: first.dominant_share.clone(),
    };
    let html = replay_html(&s);
    check_page(&html, 2 + 2 + 4 + 2);
    let section = &html[html.find("<h2>Dominant share over time</h2>").unwrap()..];
    assert!(
        section.contains("as recorded"),
        "the recorded panel is titled"
    );
}

/// An account of the sample replay, delivered `delivered` at every sample after the first.
fn account(name: &str, parent: Option<&str>, entitlement: f64, delivered: f64) -> AccountResult {
    AccountResult {
        name: name.into(),
        parent: parent.map(Into::into),
        entitlement,
        users: 1,
        tasks_submitted: 10,
        mean_wait_s: 5.0,
        mean_slowdown: 1.5,
        mean_response_s: 65.0,
        delivered,
        delivered_over_time: (0..50).map(|i| (i > 0).then_some(delivered)).collect(),
    }
}

#[test]
fn accounts_over_time_and_the_machines_get_one_chart_per_policy() {
    let mut s = sample_replay();
    s.setting.machine_view = Some(MachineView {
        origin: Time::ZERO,
        from_s: 0.0,
        to_s: 3_600.0,
        nodes: vec![
            NodeLane {
                name: "zewura-1".into(),
                processors: 80.0,
            },
            NodeLane {
                name: "zegox-1".into(),
                processors: 12.0,
            },
        ],
        users: vec!["alice".into(), "<b>bob</b>".into()],
    });
    s.setting.capacity = vec![92.0, 1.0];
    for p in &mut s.policies {
        p.accounts = vec![
            account("root", None, 1.0, 1.0),
            account("physics", Some("root"), 0.6, 0.7),
            account("<i>chem</i>", Some("root"), 0.4, 0.3),
        ];
        p.jobs = vec![JobRecord {
            id: 1,
            user: 1,
            submit: Time::ZERO,
            start: Time::from_secs_f64(60.0),
            end: Time::from_secs_f64(1_800.0),
            placed: vec![(0, vec![40.0 / 92.0]), (1, vec![12.0 / 92.0])],
            first_reserved: None,
        }];
    }
    let html = replay_html(&s);
    check_page(&html, 2 + 2 + 3 + 2 + 3 + 3);
    sections_are_the_registered_ones(&s, &html);
    assert!(html.contains("Accounts against their entitlement over time"));
    assert!(html.contains("The machines, 1.00 h from 0.00 s on"));
    assert!(html.contains("&lt;i&gt;chem&lt;/i&gt;") && !html.contains("<i>"));
}

#[test]
fn replay_page_is_deterministic() {
    assert_eq!(replay_html(&sample_replay()), replay_html(&sample_replay()));
    assert_eq!(sweep_html(&sample_sweep()), sweep_html(&sample_sweep()));
}

#[test]
fn replay_without_drf_has_no_reduction_plot() {
    let mut s = sample_replay();
    s.policies.remove(0);
    let html = replay_html(&s);
    check_page(&html, 2 + 2 + 2 + 1);
    assert!(html.contains("No DRF run"));
}

#[test]
fn single_policy_and_empty_users_and_zero_tasks() {
    let mut s = sample_replay();
    s.policies = vec![policy("drf", 0.0, vec![], None)];
    s.policies[0].timeline = Timeline::default();
    s.policies[0].wait_quantiles_s.clear();
    s.policies[0].slowdown_quantiles.clear();
    s.input = ReadStats::default();
    s.setting = Setting::default();
    let html = replay_html(&s);
    check_page(&html, 1 + 1);
    assert!(replay_table(&s, &[]).contains("drf"));
}

#[test]
fn nan_metrics_never_reach_the_page() {
    let mut s = sample_replay();
    for p in &mut s.policies {
        p.mean_wait_s = f64::NAN;
        p.user_mean_wait_s = f64::INFINITY;
        p.timeline.utilization[0][3] = f64::NAN;
    }
    check_page(&replay_html(&s), 2 + 2 + 3 + 1);
    assert!(!replay_table(&s, &[]).contains("NaN"));
}

#[test]
fn replay_table_lists_inputs_and_policies() {
    let t = replay_table(&sample_replay(), &[]);
    for expected in [
        "tasks submitted",
        "165",
        "skipped: zero demand",
        "sdrf:delta=0.999999",
        "util memory",
        "1234",
        "1.00 min",
    ] {
        assert!(t.contains(expected), "{expected} missing from\n{t}");
    }
}

#[test]
fn sweep_page_has_figures_4_to_6() {
    let s = sample_sweep();
    let html = sweep_html(&s);
    check_page(&html, 3);
    assert!(html.contains("1−10⁻⁶"));
    assert!(
        html.contains("Above the line: 1; below: 0; on it: 2."),
        "{html}"
    );
    assert!(!html.contains("not in this sweep"));
}

#[test]
fn sweep_falls_back_when_the_paper_cell_is_missing() {
    let mut s = sample_sweep();
    s.cells
        .retain(|c| !matches!(c.epsilon, Some(e) if e <= 1e-4) && c.fraction > 0.5);
    let html = sweep_html(&s);
    check_page(&html, 3);
    assert!(html.contains("not in this sweep"));
    assert!(html.contains("δ = 1−10⁻³ and capacity 0.75"), "{html}");
}

#[test]
fn sweep_without_baseline_or_cells_draws_only_what_it_can() {
    let mut s = sample_sweep();
    s.cells.retain(|c| c.epsilon.is_some());
    check_page(&sweep_html(&s), 2);
    s.cells.clear();
    let html = sweep_html(&s);
    check_page(&html, 1);
    assert!(sweep_table(&s).contains("fraction"));
}

#[test]
fn sweep_table_shows_reductions() {
    let t = sweep_table(&sample_sweep());
    assert!(t.contains("δ=1−10⁻⁶"), "{t}");
    assert!(t.contains("19.0 %"), "{t}");
}

#[test]
fn runs_without_live_tree_events_are_counted_not_drawn() {
    let mut s = sample_sweep();
    s.cells[1].result.livetree_events = Some(0);
    let html = sweep_html(&s);
    check_page(&html, 3);
    assert!(html.contains("a log scale cannot show: 1."), "{html}");
}

#[test]
fn tasks_that_never_fit_are_shown_and_warned_about() {
    let mut summary = sample_replay();
    let quiet = replay_table(&summary, &[]);
    assert!(quiet.contains("never fit"), "a column of its own:\n{quiet}");
    assert!(!quiet.contains("warning"), "{quiet}");
    let drf = &mut summary.policies[0];
    drf.tasks_never_fit = drf.tasks_submitted / 10;
    drf.tasks_unfinished -= drf.tasks_never_fit.min(drf.tasks_unfinished);
    assert_eq!((drf.tasks_never_fit, drf.tasks_submitted), (16, 165));
    let expected = "warning: under drf, 16 of 165 tasks (9.7 %) can never fit the capacity";
    let table = replay_table(&summary, &[]);
    assert!(table.contains(expected), "{table}");
    let page = replay_html(&summary);
    assert!(page.contains("<p class=\"warning\">Warning: under drf,"));
}

#[test]
fn records_skipped_by_lenient_and_arrivals_after_the_horizon_are_warned_about() {
    let mut summary = sample_replay();
    summary
        .input
        .tasks_skipped
        .insert("out of order".into(), 20_000);
    summary
        .input
        .tasks_skipped
        .insert("malformed: field 4 (run time)".into(), 3);
    summary
        .policies
        .iter_mut()
        .for_each(|p| p.tasks_beyond_horizon = 3_013);
    let table = replay_table(&summary, &[]);
    let found = summary.input.tasks_found;
    for expected in [
        format!("warning: 20000 of {found} records of the trace were skipped by --lenient as \"out of order\": were the files given in their order"),
        format!("warning: 3 of {found} records of the trace were skipped by --lenient as \"malformed: field 4 (run time)\""),
        "warning: 3013 tasks arrive after the horizon: they are in no policy's row (--drain replays them all)".to_owned(),
    ] {
        assert!(table.contains(&expected), "{expected}\n{table}");
    }
    assert_eq!(
        table.matches("after the horizon").count(),
        1,
        "said once, not per policy"
    );
}

#[test]
fn tasks_cancelled_while_they_waited_get_a_column_and_a_warning_only_when_there_are_some() {
    let mut summary = sample_replay();
    let quiet = replay_table(&summary, &[]);
    assert!(!quiet.contains("cancelled"), "{quiet}");
    let drf = &mut summary.policies[0];
    drf.tasks_cancelled = 5;
    drf.tasks_unfinished -= 5.min(drf.tasks_unfinished);
    let table = replay_table(&summary, &[]);
    let title = "Tasks and waits (submitted = completed + unfinished + never fit + cancelled):";
    assert!(table.contains(title), "{table}");
    let header = table.lines().find(|l| l.starts_with("policy ")).unwrap();
    assert!(
        header.contains("never fit  cancelled  mean wait"),
        "{header}"
    );
    let row = table.lines().find(|l| l.starts_with("drf ")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[5], "5", "{row}");
    let warning =
        "warning: under drf, 5 of 165 tasks were cancelled by their owners while they waited";
    assert!(table.contains(warning), "{table}");
    let page = replay_html(&summary);
    check_page(&page, 2 + 2 + 3 + 2);
    assert!(page.contains(">cancelled</th>"), "a column in the page too");
}

#[test]
fn five_policies_with_long_names_fit_a_terminal() {
    let mut s = sample_replay();
    for name in ["sdrf:delta=0.9999", "sdrf:delta=0.999999,form=max-of-sums"] {
        s.policies.push(policy(name, 50.0, users(), Some(7)));
    }
    let table = replay_table(&s, &[]);
    let widest = table.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 120, "{widest} characters wide:\n{table}");
    for name in ["sdrf:delta=0.9999 ", "sdrf:delta=0.999999,form=max-of-sums"] {
        assert_eq!(
            table.matches(name).count(),
            3,
            "{name} whole in every table"
        );
    }
}

#[test]
fn hashed_user_ids_get_short_aliases_in_legends() {
    let hashed = |i: usize| format!("{i}Jq9YeclsPWsAT6TX/r9X5OilZpSEb2PBGliYAOMxM=");
    let mut s = sample_replay();
    for p in &mut s.policies {
        for (i, u) in p.users.iter_mut().enumerate() {
            u.id = hashed(i);
        }
        for (i, series) in p.timeline.dominant_share.iter_mut().enumerate() {
            series.id = hashed(i);
        }
    }
    let html = replay_html(&s);
    let legend = html
        .split("<p class=\"legend\">")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .expect("a legend");
    assert!(legend.contains("u1") && legend.contains("u4"), "{legend}");
    assert!(!legend.contains(&hashed(0)), "{legend}");
    assert!(
        html.contains(&format!(
            "<td class=\"l\">u1</td><td class=\"l\">{}</td>",
            hashed(0)
        )),
        "the alias table maps u1 to its id"
    );
}

#[test]
fn short_user_ids_are_shown_as_they_are() {
    let html = replay_html(&sample_replay());
    assert!(html.contains("alice</span>"), "alice in the legend");
    assert!(!html.contains(">u1<"));
}

#[test]
fn memory_and_long_durations_are_in_units_a_person_reads() {
    let mut s = sample_replay();
    s.setting.units = vec!["processors".into(), "KB".into()];
    s.setting.mean_demand = vec![1013.19, 4_327_511_465.89];
    s.setting.capacity = s.setting.mean_demand.clone();
    s.policies[0].mean_wait_s = 1_699_061.9;
    let table = replay_table(&s, &[]);
    let html = replay_html(&s);
    for page in [&table, &html] {
        assert!(page.contains("1013.19 processors / 4.03 TiB"), "{page}");
        assert!(!page.contains("4327511465"), "raw KB in\n{page}");
        assert!(page.contains("19.7 d"), "{page}");
    }
}

#[test]
fn sweep_setting_shows_every_capacity_and_which_shards() {
    let s = sample_sweep();
    let table = sweep_table(&s);
    let html = sweep_html(&s);
    for page in [&table, &html] {
        assert!(
            page.contains("All 2 shards merged: the whole grid, 24 cells"),
            "{page}"
        );
        assert!(
            page.contains("0.50 to 1.00 × mean demand, 3 fractions"),
            "{page}"
        );
        for capacity in ["6.25", "6.19", "12.50", "8.25"] {
            assert!(
                page.contains(capacity),
                "capacity {capacity} missing from\n{page}"
            );
        }
        assert!(!page.contains("[0, 1]"), "{page}");
    }
    let mut one = sample_sweep();
    (one.shard_ids, one.shards) = (vec![0], 1);
    assert!(sweep_table(&one).contains("The whole grid in one run"));
    let mut part = sample_sweep();
    (part.shard_ids, part.shards) = (vec![1], 4);
    assert!(sweep_table(&part).contains("Shard 1/4 only (--shard 1/4)"));
    (part.shard_ids, part.shards) = (vec![0, 2], 4);
    assert!(sweep_table(&part).contains("Shards 0/4, 2/4 merged, 1/4, 3/4 missing"));
}

#[test]
fn sweep_warns_where_tasks_never_fit_and_leaves_them_out_of_figure_5() {
    let mut s = sample_sweep();
    for cell in s.cells.iter_mut().filter(|c| c.fraction == 0.5) {
        cell.result.tasks_never_fit = 20;
        // None of Carol's 5 tasks fits: she has no completion ratio to compare.
        let carol = &mut cell.result.users[2];
        (
            carol.tasks_never_fit,
            carol.tasks_started,
            carol.tasks_completed,
        ) = (5, 0, 0);
    }
    let table = sweep_table(&s);
    let expected =
        "warning: at capacity 0.50 × mean demand, 20 of 165 tasks (12.1 %) can never fit";
    assert!(table.contains(expected), "{table}");
    assert!(table.contains("20 of 165"), "{table}");
    let html = sweep_html(&s);
    assert!(html.contains("<p class=\"warning\">Warning: at capacity 0.50"));
    assert!(
        html.contains("Above the line: 1; below: 0; on it: 1."),
        "Carol is not drawn: {html}"
    );
}

#[test]
fn charges_get_a_table_and_one_chart_per_distinct_metric() {
    let charged = |name: &str, charges: [f64; 3]| {
        let mut users = users();
        for (u, c) in users.iter_mut().zip(charges) {
            u.charged = Some(c);
        }
        policy(name, 50.0, users, None)
    };
    let mut s = sample_replay();
    s.policies
        .push(charged("fairshare:usage=cpu", [10.0, 20.0, 70.0]));
    // The same shares in other units: no chart of its own.
    s.policies
        .push(charged("fairshare:usage=dominant", [1.0, 2.0, 7.0]));
    s.policies
        .push(charged("fairshare:usage=pe", [40.0, 20.0, 40.0]));
    let html = replay_html(&s);
    check_page(&html, 2 + 2 + 6 + 2 + 1);
    assert!(html.contains("What each user was charged"));
    assert!(html.contains("% charged, fairshare:usage=pe"));
    assert!(!html.contains("% charged, fairshare:usage=dominant"));
    assert!(html.contains("charged more: 1"), "alice: 10 % → 40 %");
    assert!(html.contains("charged less: 1"), "carol: 70 % → 40 %");
    assert!(
        html.contains("within 5 %: 2"),
        "bob, and dave who was never charged"
    );
    assert!(html.contains("40.00 %"));
    assert!(!replay_html(&sample_replay()).contains("What each user was charged"));
}

/// The seam for a new table: the page ends with the registered sections, in order, and the
/// terminal's text holds the registered tables, so one file and one line in the list add one.
fn sections_are_the_registered_ones(summary: &ReplaySummary, html: &str) {
    let sections: Vec<String> = REPLAY_SECTIONS.iter().map(|s| s(summary)).collect();
    assert!(
        sections.iter().filter(|s| !s.is_empty()).count() >= 4,
        "most sections draw here"
    );
    let headings = |text: &str| -> Vec<String> {
        let starts = text.match_indices("<h2>").map(|(i, _)| i + 4);
        let heading = |i: usize| text[i..i + text[i..].find("</h2>").unwrap()].to_owned();
        starts.map(heading).collect()
    };
    let page = headings(html);
    let policies = page
        .iter()
        .position(|h| h == "Policies")
        .expect("the policies");
    assert_eq!(
        page[policies + 1..],
        headings(&sections.concat()),
        "only the registered sections follow the policies, in their order"
    );
    let text = replay_table(summary, &[]);
    for table in REPLAY_TEXT_TABLES.iter().map(|t| t(summary)) {
        assert!(!table.is_empty() && text.contains(&table), "{table}");
    }
}

/// A what-if of the baseline `as-slurm` and `sdrf`: alice's real mean wait 100 s, predicted
/// 130 s (an error of 30 s); bob's 50 s, predicted 50 s.
fn sample_whatif() -> fairshare_lab::whatif::WhatIfSummary {
    use fairshare_lab::trust::{Trust, UserWait};
    let users = |alice: f64, bob: f64| vec![user("alice", 10, 10, alice), user("bob", 10, 10, bob)];
    let wait = |user: &str, real: f64, predicted: f64| UserWait {
        user: user.into(),
        jobs: 10,
        recorded_mean_wait_s: real,
        predicted_mean_wait_s: predicted,
        within: (predicted - real).abs() <= 30.0,
    };
    fairshare_lab::whatif::WhatIfSummary {
        schema_version: 1,
        bundle: "site".into(),
        manifest: None,
        taken: vec!["machines: config.txt".into()],
        unmodelled: Vec::new(),
        trust: Trust {
            jobs: 20,
            left_out: 0,
            contested_pairs: 40,
            contested_order: Some(0.95),
            sampled_one_in: None,
            median_start_error_s: 1.0,
            p90_start_error_s: 5.0,
            users: vec![wait("alice", 100.0, 130.0), wait("bob", 50.0, 50.0)],
            window: None,
            pinned: Vec::new(),
        },
        prediction: ReplaySummary {
            input: input(),
            setting: setting(),
            policies: vec![
                policy("as-slurm", 90.0, users(130.0, 50.0), None),
                policy("sdrf", 80.0, users(110.0, 110.0), None),
            ],
        },
    }
}

/// Every chart of a what-if's page compares with the baseline: one chart of each policy's
/// change of each user's mean wait against it, over a band of the model's error for that user
/// (alice's −20 s falls inside her 30-s error and is marked; bob's +1 min does not), and the
/// reduction of waits measured against the baseline, not DRF.
#[test]
fn a_what_ifs_charts_compare_with_the_baseline() {
    let whatif = sample_whatif();
    let html = fairshare_report::whatif_html(&whatif);
    // The replay's figures and one chart of changes for the one policy beside the baseline.
    let replay = replay_html(&whatif.prediction).matches("<svg").count();
    check_page(&html, replay + 1);
    assert!(
        html.contains("sdrf: change of each user&apos;s mean wait against as-slurm (min)"),
        "the change chart"
    );
    assert!(
        html.contains("−20.0 s *") && html.contains("+1.00 min<"),
        "the marked change"
    );
    assert!(
        html.contains("vs as-slurm (the baseline) (%)"),
        "the reduction"
    );
    assert!(!html.contains("No DRF run"));
    // The band of alice's error is drawn, grey and translucent; bob's error is none.
    let band = "opacity=\"0.3\" fill=\"#787878\"";
    assert_eq!(html.matches(band).count(), 1, "alice's error's band");
}
