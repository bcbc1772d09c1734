//! The policy registry's tests: specifications parsed, or refused saying what was expected, and
//! every registered policy named once and built through its entry.

use super::*;

#[test]
fn a_specification_tells_the_parameters_it_sets() {
    let spec: PolicySpec = "fairshare:function=fair-tree,decay=step:72h:0.5"
        .parse()
        .unwrap();
    assert!(spec.sets("decay") && spec.sets("function"));
    assert!(!spec.sets("refresh") && !spec.sets("step"));
    assert!(!"fairshare".parse::<PolicySpec>().unwrap().sets("decay"));
}

/// A memory left out is written in; one given, or none to have, is left alone. SDRF's
/// commitments then halve in the half-life: δ^600 = 1/2.
#[test]
fn a_policy_remembers_as_long_as_it_is_told_unless_it_says() {
    let remembering = |s: &str| s.parse::<PolicySpec>().unwrap().remembering(600);
    let sdrf = remembering("sdrf").unwrap();
    let PolicyKind::Sdrf {
        epsilon: Some(e), ..
    } = sdrf.kind
    else {
        panic!("{sdrf:?}")
    };
    assert!(((1.0 - e).powi(600) - 0.5).abs() < 1e-12, "{e}");
    assert!(
        sdrf.name.starts_with("sdrf:epsilon=0.00115"),
        "{}",
        sdrf.name
    );
    assert_eq!(
        remembering("sdrf:form=max-of-sums").unwrap().name,
        format!("sdrf:form=max-of-sums,epsilon={e}")
    );
    assert_eq!(
        remembering("fairshare").unwrap().name,
        "fairshare:decay=half-life:600"
    );
    assert_eq!(
        remembering("decayed-usage").unwrap().name,
        "decayed-usage:half-life=600"
    );
    for alone in ["sdrf:delta=0.9", "fairshare:decay=reset:1d", "drf", "fifo"] {
        assert!(remembering(alone).is_none(), "{alone}");
    }
    assert!("sdrf"
        .parse::<PolicySpec>()
        .unwrap()
        .remembering(0)
        .is_none());
}

#[test]
fn parses_every_form() {
    let kind = |s: &str| s.parse::<PolicySpec>().unwrap().kind;
    assert_eq!(kind("fifo"), PolicyKind::Fifo);
    assert_eq!(kind("drf"), PolicyKind::Stateless(Policy::Drf));
    assert_eq!(
        PolicySpec::parse_for("wdrf", Engine::Allocate)
            .unwrap()
            .kind,
        PolicyKind::Stateless(Policy::WeightedDrf)
    );
    let sdrf: PolicySpec = "sdrf:delta=0.999999".parse().unwrap();
    assert!((sdrf.tau() - 999_999.5).abs() < 1e-2, "{}", sdrf.tau());
    assert_eq!(sdrf.to_string(), "sdrf:delta=0.999999");
    assert_eq!(
        kind("sdrf:epsilon=1e-3,form=max-of-sums"),
        PolicyKind::Sdrf {
            epsilon: Some(1e-3),
            form: PriorityForm::MaxOfSums
        }
    );
    assert_eq!(PolicySpec::sdrf_with_nines(3).name, "sdrf:delta=0.999");
    assert_eq!(
        "sdrf".parse::<PolicySpec>().unwrap().tau(),
        tau_from_epsilon(DEFAULT_SDRF_EPSILON)
    );
}

#[test]
fn rejects_nonsense_and_says_what_is_expected() {
    for bad in [
        "fair",
        "drf:delta=0.9",
        "sdrf:delta=x",
        "sdrf:delta=2",
        "sdrf:gamma=1",
        "sdrf:form=best",
        "sdrf:delta",
        "sdrf:delta=0.99,epsilon=0.5",
        "bottleneck",
    ] {
        assert!(bad.parse::<PolicySpec>().is_err(), "{bad}");
    }
    let unknown = "fair".parse::<PolicySpec>().unwrap_err().to_string();
    assert!(
        unknown.starts_with(
            "unknown policy \"fair\": expected fifo, drf, weighted-drf, asset, sdrf[:delta=D][,epsilon=E][,form=sum-of-maxes|max-of-sums], smallest-first, decayed-usage[:half-life=D], fairshare[:function=NAME[:KEY=N]]"
        ),
        "{unknown}"
    );
    for (slip, meant) in [
        ("sdfr", "sdrf"),
        ("fairshar", "fairshare"),
        ("SDRF:delta=0.9", "sdrf"),
        ("dfr", "drf"),
    ] {
        let said = slip.parse::<PolicySpec>().unwrap_err().to_string();
        let expected = format!("did you mean {meant}? (`--help` lists every policy)");
        assert!(said.ends_with(&expected), "{slip}: {said}");
    }
    let simulate = PolicySpec::parse_for("asset", Engine::Simulate).unwrap_err();
    assert!(simulate
        .to_string()
        .ends_with("fifo, drf, bottleneck or per-resource"));
    let elsewhere = PolicySpec::parse_for("weighted-drf", Engine::Simulate)
        .unwrap_err()
        .to_string();
    assert!(
        elsewhere.starts_with("policy \"weighted-drf\" runs only in allocate or replay and sweep"),
        "{elsewhere}"
    );
    let param = "drf:delta=0.9"
        .parse::<PolicySpec>()
        .unwrap_err()
        .to_string();
    assert_eq!(param, "policy \"drf:delta=0.9\": drf takes no parameters");
    let twice = "fairshare:usage=pe,usage=cpu".parse::<PolicySpec>();
    assert_eq!(
        twice.unwrap_err().to_string(),
        "policy \"fairshare:usage=pe,usage=cpu\": usage is given twice"
    );
    let both = "sdrf:delta=0.99,epsilon=0.5"
        .parse::<PolicySpec>()
        .unwrap_err();
    assert_eq!(
        both.to_string(),
        "policy \"sdrf:delta=0.99,epsilon=0.5\": give delta or epsilon, once: they set one discount (epsilon = 1 − delta)"
    );
    for (spec, problem) in [
        (
            "sdrf:epsilon=-0.1",
            "epsilon must lie in [0, 1], found -0.1",
        ),
        ("sdrf:delta=7", "delta must lie in [0, 1], found 7"),
    ] {
        let error = spec.parse::<PolicySpec>().unwrap_err().to_string();
        assert!(error.ends_with(problem), "{spec}: {error}");
    }
}

#[test]
fn every_name_is_unique_and_every_entry_parses_in_its_engines() {
    let mut names: Vec<&str> = POLICIES
        .iter()
        .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()))
        .collect();
    let all = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all);
    for entry in POLICIES {
        for engine in entry.engines {
            let spec = PolicySpec::parse_for(entry.name, *engine).unwrap();
            if *engine == Engine::Replay {
                assert!(
                    spec.ranker(2, &Share::equal(3), None).is_some(),
                    "{}",
                    entry.name
                );
            }
        }
    }
}

/// The seam for a ranking policy (docs/architecture.md, "Seams"): `smallest-first` is one
/// file (`rank/smallest.rs`) and one entry here, and that is enough for every front end —
/// the parser, the ranker it builds, `--help` and the error for a misspelt name.
#[test]
fn a_ranked_policy_is_its_file_and_its_entry() {
    let spec = PolicySpec::parse_for("smallest-first", Engine::Replay).unwrap();
    let mut ranker = spec.ranker(1, &Share::equal(2), None).expect("it ranks");
    let head = |size: f64, seq| crate::rank::Head {
        size,
        ..crate::rank::Head::new(crate::model::Time::ZERO, seq)
    };
    ranker.update(0, &[0.0], Some(head(0.5, 1))).unwrap();
    ranker.update(1, &[0.0], Some(head(0.1, 2))).unwrap();
    assert_eq!(ranker.first(), Some(1), "the smaller next task goes first");
    assert!(help(Engine::Replay).contains("smallest-first: FIFO by size"));
    let misspelt = PolicySpec::parse_for("smalest-first", Engine::Replay).unwrap_err();
    assert!(
        misspelt.to_string().contains("smallest-first"),
        "{misspelt}"
    );
}

#[test]
fn fairshare_parameters_parse_and_bad_ones_say_what_was_expected() {
    let spec: PolicySpec =
        "fairshare:function=pbs,usage=tres:1+0.5,decay=step:259200:0.5,charge=finish,refresh=3600,entry-penalty=60"
            .parse()
            .unwrap();
    let PolicyKind::Fairshare(s) = spec.kind else {
        panic!("{:?}", spec.kind)
    };
    assert_eq!(s.function, FairshareFunction::PBS);
    assert_eq!(
        s.metric,
        crate::usage::metric::UsageMetric::with(
            &crate::usage::metric::tres::TRES,
            [1.0, 0.5, 0.0, 0.0]
        )
    );
    assert_eq!(s.charging, Charging::AtFinish);
    assert_eq!((s.refresh_s, s.entry_penalty_s), (3600.0, 60.0));
    let kueue: PolicySpec = "kueue-afs".parse().unwrap();
    let PolicyKind::Fairshare(k) = kueue.kind else {
        panic!("{:?}", kueue.kind)
    };
    assert_eq!(k.entry_penalty_s, 300.0);
    // Durations read as everywhere else: seconds, or with units.
    let with_units: PolicySpec = "fairshare:decay=half-life:7d,refresh=5m,entry-penalty=90s"
        .parse()
        .unwrap();
    let in_seconds: PolicySpec = "fairshare:decay=half-life:604800,refresh=300,entry-penalty=90"
        .parse()
        .unwrap();
    assert_eq!(with_units.kind, in_seconds.kind);
    // MetaCentrum's function brings its 72-hour halving; a decay given wins; kueue-afs,
    // which orders by the same function, keeps the week's half-life.
    let decay_of = |text: &str| match text.parse::<PolicySpec>().unwrap().kind {
        PolicyKind::Fairshare(s) => s.decay,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        decay_of("fairshare:function=metacentrum"),
        METACENTRUM_DECAY
    );
    assert_eq!(
        decay_of("fairshare:function=metacentrum,decay=half-life:1d"),
        Decay::Continuous {
            half_life_s: 86_400.0
        }
    );
    assert_eq!(decay_of("kueue-afs"), FairshareSettings::default().decay);
    let day: PolicySpec = "decayed-usage:half-life=1d".parse().unwrap();
    assert_eq!(
        day.kind,
        PolicyKind::DecayedUsage {
            half_life: 86_400.0
        }
    );
    for (bad, says) in [
        (
            "fairshare:function=lottery",
            "expected fair-tree, slurm-classic, pbs, metacentrum, htcondor or grid-engine",
        ),
        (
            "fairshare:function=htcondor:floor=-1",
            "function: htcondor: floor must be a number >= 0",
        ),
        ("fairshare:usage=gpu", "expected cpu, maui-pe"),
        (
            "fairshare:usage=tres:1+x",
            "a TRES weight must be a number >= 0",
        ),
        ("fairshare:decay=half-life:0", "must be a duration > 0"),
        ("fairshare:decay=half-life:7y-", "must be a duration > 0"),
        ("fairshare:decay=slurm", "is for `fairshare priorities`"),
        ("fairshare:charge=never", "expected running or finish"),
        ("fairshare:refresh=-1", "refresh: expected a duration >= 0"),
        (
            "fairshare:refresh=1e-300",
            "expected 0 or at least 0.001 seconds",
        ),
    ] {
        let error = bad.parse::<PolicySpec>().unwrap_err().to_string();
        assert!(error.contains(says), "{bad}: {error}");
    }
}
