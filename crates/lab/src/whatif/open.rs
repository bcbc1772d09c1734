//! Opening a site bundle for its what-if: each file read as the site wrote it (the dump,
//! the configuration, the associations, the adapter's configuration, the controller's log),
//! what the model takes from each named, and what it leaves out said.

use super::{WhatIf, ADAPTER_BASELINE, BASELINE, NEVER_MODELLED};
use crate::site_limits::SiteLimits;
use crate::site_nodes::SiteNodes;
use crate::slurm_conf::{slurm_setup, BillingFiles, SlurmSetup};
use crate::{CapacitySource, LabError, Replay, ReplayRequest, ShareSource, StopRule, TraceSpec};
use fairshare_core::model::Time;
use fairshare_core::policy::{PolicyKind, PolicySpec};
use fairshare_sim::cluster::{Partition, PlacementEntry, Release, SchedulerEntry};
use fairshare_slurm::config::SlurmConfig;
use fairshare_trace::bundle::{self, Manifest};
use fairshare_trace::slurm_conf::parse_slurm_conf;
use fairshare_trace::slurm_version::{tested_list, SlurmVersion};
use fairshare_trace::slurmctld_log::{read_controller_log, ControllerLog};
use fairshare_trace::{Format, ReadOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a bundle whose dumps list each job once leaves out.
const NO_DUPLICATES: &str = "a requeued job's earlier runs: the bundle's sacct commands have no --duplicates (a bundle of an earlier `collect`, or of the shell commands without it), so sacct listed only each job's last run and the usage of the runs before is not charged";

/// What a bundle without the nodes' events leaves out.
const NO_NODES: &str = "nodes down, drained or reserved during the window: the bundle holds no events.txt (a bundle of an earlier `collect`), so the replay's nodes are up throughout and the jobs that ran in a reservation start as they did";

/// What a bundle without the limits' files leaves out.
const NO_LIMITS: &str = "limits of associations and QOS (GrpTRES, MaxJobs, MaxTRESPU, …): the bundle holds no limits.txt (a bundle of an earlier `collect`), so a job a limit held waits in the record and may start at once in the replay";

/// What a bundle without a window's moment leaves out.
const NO_OPENING: &str = "the machine as it stood when the window opened: the bundle's manifest.toml names no moment it opened at (a bundle of `collect` before it wrote one, or of the shell commands), so the replay's cluster starts empty and the jobs that held nodes then start when the replay starts them";

impl WhatIf {
    /// Opens the bundle in `dir` for `policies` (each replayed as the Slurm adapter would apply
    /// it, beside the site's other priority terms). Refused: a bundle missing a file, or one
    /// whose file cannot be read (the error names it).
    pub fn open(dir: &Path, policies: Vec<PolicySpec>) -> Result<WhatIf, LabError> {
        bundle::check(dir)?;
        let manifest_path = dir.join(bundle::MANIFEST);
        let manifest = match manifest_path.is_file() {
            true => Some(Manifest::read(&manifest_path)?),
            false => None,
        };
        let (text, setup) = read_setup(dir)?;
        let log = read_log(&dir.join(bundle::CONTROLLER_LOG))?;
        let last_decay = read_last_decay(&dir.join(bundle::LAST_DECAY))?;
        let adapter = read_adapter(&dir.join(bundle::ADAPTER))?;
        let mut taken = describe(&setup);
        let files = billing_files(dir, &setup, &mut taken);
        let mut later = Vec::new();
        let setup = with_adapter(setup, adapter.as_ref(), &mut later, !policies.is_empty())?;
        let spelled = (bundle::CONTROLLER_LOG, "--scheduler slurm");
        let setup = (setup.with_loop_turns(log.as_deref(), SchedulerEntry::SLURM, spelled))
            .map_err(|e| in_file(&dir.join(bundle::CONTROLLER_LOG), &e))?;
        let phase = phase(log.as_deref(), last_decay.as_ref(), &mut later);
        let policies = site_policies(&setup, policies, adapter.as_ref(), phase, &mut taken)?;
        taken.extend(later);
        taken.push("the run: drained (every job of the dump runs to its end)".to_owned());
        let opens = (manifest.as_ref()).and_then(|m| Time::from_utc(&m.since));
        let paths = dumps(dir, manifest.as_ref(), opens, &mut taken);
        let conf = parse_slurm_conf(&text);
        let printed = conf.get("SLURM_VERSION");
        let (version_taken, version_left) = slurm_version(printed, setup.parameters.release);
        taken.push(version_taken);
        let limits = SiteLimits::read(dir, &conf)?;
        let (limits_taken, limits_left) = limits.as_ref().map_or_else(
            || (Vec::new(), vec![NO_LIMITS.to_owned()]),
            SiteLimits::describe,
        );
        taken.extend(limits_taken);
        let known: Vec<String> = conf.nodes().iter().map(|n| n.name.clone()).collect();
        let (outages, nodes_taken, nodes_left) = match SiteNodes::read(dir)? {
            Some(nodes) => nodes.outages(&known, log.as_deref()),
            None => (Vec::new(), Vec::new(), vec![NO_NODES.to_owned()]),
        };
        taken.extend(nodes_taken);
        let adapter_left =
            (adapter.as_ref()).map_or_else(Vec::new, |a| adapter_unmodelled(a, &setup.partitions));
        let unmodelled = (version_left.into_iter())
            .chain(setup.notes.iter().cloned())
            .chain(adapter_left)
            .chain(limits_left)
            .chain(nodes_left)
            .chain(NEVER_MODELLED.iter().map(|s| s.to_string()))
            .chain((!lists_every_run(manifest.as_ref())).then(|| NO_DUPLICATES.to_owned()))
            .chain(opens.is_none().then(|| NO_OPENING.to_owned()))
            .collect();
        let trace = TraceSpec {
            shown: paths.iter().map(|p| p.display().to_string()).collect(),
            paths,
            format: Some(Format::SACCT),
            options: ReadOptions {
                billing: files.billing()?,
                controller_log: log,
                ..ReadOptions::default()
            },
        };
        let mut request = request(dir, setup);
        request.replay.opens = opens;
        request.replay.outages = outages;
        Ok(WhatIf {
            dir: dir.to_path_buf(),
            manifest,
            trace,
            request,
            policies,
            taken,
            unmodelled,
            overlaps: conf.sharing_partitions(),
            opens,
            limits,
        })
    }
}

/// The dumps a what-if replays, in order: the history before the window when the bundle
/// holds one and its window opens at a known moment, then the window's; said in `taken`.
fn dumps(
    dir: &Path,
    manifest: Option<&Manifest>,
    opens: Option<Time>,
    taken: &mut Vec<String>,
) -> Vec<PathBuf> {
    let (dump, history) = (dir.join(bundle::DUMP), dir.join(bundle::HISTORY));
    let Some(manifest) = manifest.filter(|_| opens.is_some()) else {
        return vec![dump];
    };
    taken.push(format!("the window: opens at {} ({}): the jobs the record started before it start as they did, on the nodes {}'s NodeList names, and those waiting then wait for it with their own submission; only the jobs eligible inside it are scored", manifest.since, bundle::MANIFEST, bundle::DUMP));
    if !history.is_file() {
        taken.push(format!("the history before the window: none (the bundle holds no {}), so the accounting starts with the jobs that ran across the window's start", bundle::HISTORY));
        return vec![dump];
    }
    let since = manifest.history_since.as_deref().unwrap_or("its first job");
    taken.push(format!("the history before the window: {} from {since}, charged to the accounting as it ran and never scored", bundle::HISTORY));
    vec![history, dump]
}

/// The configuration's text in the bundle in `dir` and the setup it gives, with each QOS's
/// priority; refused when it defines no node.
fn read_setup(dir: &Path) -> Result<(String, SlurmSetup), LabError> {
    let path = dir.join(bundle::CONFIG);
    let text = read(&path)?;
    let setup = slurm_setup(&text).map_err(|e| in_file(&path, &e))?;
    let setup = setup.with_qos(qos_file(dir).qos_priorities()?.as_ref());
    if !setup.has_nodes {
        return Err(in_file(&path, &"no node is defined: the bundle's config.txt holds `scontrol show config`, then `scontrol show node` and `scontrol show partition`"));
    }
    Ok((text, setup))
}

/// The bundle's QOS file, as the files a dump is billed by.
fn qos_file(dir: &Path) -> BillingFiles {
    BillingFiles {
        qos: Some(dir.join(bundle::QOS)),
        prefix: "",
        ..BillingFiles::default()
    }
}

/// What the dump's jobs are billed by: the QOS, and the configuration's partitions when they
/// set billing weights (said in `taken`).
fn billing_files(dir: &Path, setup: &SlurmSetup, taken: &mut Vec<String>) -> BillingFiles {
    let files = qos_file(dir);
    let Some((files, _)) = setup.site_billing(&files, (&dir.join(bundle::CONFIG), bundle::CONFIG))
    else {
        return files;
    };
    let max_tres = match files.max_tres {
        true => ", with PriorityFlags=MAX_TRES",
        false => "",
    };
    taken.push(format!(
        "billing: the partitions' TRESBillingWeights of {}{max_tres}",
        bundle::CONFIG
    ));
    files
}

/// The cluster, the shares and the scheduler of a bundle in `dir` under `setup`: its nodes
/// and partitions, its associations, Slurm's schedulers and placement, the run drained.
fn request(dir: &Path, setup: SlurmSetup) -> ReplayRequest {
    ReplayRequest {
        capacity: CapacitySource::SiteMachines(dir.join(bundle::CONFIG)),
        shares: ShareSource::File(dir.join(bundle::ASSOC)),
        queues: None,
        replay: Replay {
            stop: StopRule::Drain,
            scheduler: SchedulerEntry::SLURM,
            slurm: setup.parameters,
            partitions: setup.partitions,
            qos_factors: setup.qos_factors,
            placement: PlacementEntry::SLURM,
            cluster: setup.cluster_name,
            ..Replay::default()
        },
    }
}

/// The error of a bundle's file at `path` that cannot be used, and why.
fn in_file(path: &Path, why: &dyn std::fmt::Display) -> LabError {
    LabError::Unusable(format!("{}: {why}", path.display()))
}

/// The text of `path`, an error naming it.
fn read(path: &Path) -> Result<String, LabError> {
    std::fs::read_to_string(path).map_err(|e| in_file(path, &e))
}

/// The controller's log at `path`, when the bundle holds one.
fn read_log(path: &Path) -> Result<Option<Arc<ControllerLog>>, LabError> {
    if !path.is_file() {
        return Ok(None);
    }
    Ok(Some(Arc::new(read_controller_log(path)?)))
}

/// The moment of the last decay in `path` (`2026-11-28T17:42:45.270000000`, UTC), when the
/// bundle holds it.
fn read_last_decay(path: &Path) -> Result<Option<(Time, String)>, LabError> {
    if !path.is_file() {
        return Ok(None);
    }
    let text = read(path)?.trim().to_owned();
    let at = Time::from_utc(&text).ok_or_else(|| {
        LabError::Unusable(format!(
            "{}: {text:?} is not a UTC moment as `date -u +%Y-%m-%dT%H:%M:%S.%N` prints one",
            path.display()
        ))
    })?;
    Ok(Some((at, text)))
}

/// The site's adapter configuration in `path` (`adapter.toml`), read as the adapter reads it,
/// when the bundle holds one; refused, naming the file and the key, when the adapter would
/// refuse it.
fn read_adapter(path: &Path) -> Result<Option<SlurmConfig>, LabError> {
    if !path.is_file() {
        return Ok(None);
    }
    // The adapter's own error names the file, the line and the key.
    SlurmConfig::load(path)
        .map(Some)
        .map_err(|e| LabError::Unusable(e.to_string()))
}

/// `setup` with the site factors weighed, refreshed and played out (ranked runs, ends at
/// limits, the submit table) as the site's adapter does, or as its defaults do without
/// `adapter.toml` (jobs then given their user's factor at submission, as with a submit
/// table), said in `taken` when policies are `asked` for.
fn with_adapter(
    setup: SlurmSetup,
    adapter: Option<&SlurmConfig>,
    taken: &mut Vec<String>,
    asked: bool,
) -> Result<SlurmSetup, LabError> {
    let defaults = SlurmConfig::default();
    let settings = adapter.unwrap_or(&defaults);
    let play = adapter_play(settings, &defaults);
    taken.extend(asked.then(|| match adapter {
        Some(a) => format!("other policies: written as the site's adapter writes them, weight {} every {} s{play} ({})", a.shared.weight, a.shared.interval_s, bundle::ADAPTER),
        None => format!("other policies: written as the Slurm adapter writes them by default, weight {} every {} s, each job given its user's factor at submission as a submit table gives it (the bundle holds no {})", settings.shared.weight, settings.shared.interval_s, bundle::ADAPTER),
    }));
    let interval = format!("{}s", settings.shared.interval_s);
    let spelled = (bundle::ADAPTER, "--scheduler slurm");
    let setup =
        (setup.with_site_weight(Some(settings.shared.weight), SchedulerEntry::SLURM, spelled))
            .and_then(|s| s.with_site_interval(Some(&interval), SchedulerEntry::SLURM, spelled));
    let setup = setup.map(|s| match adapter {
        Some(adapter) => s.with_adapter_play(adapter),
        None => s,
    });
    setup.map_err(|e| LabError::Unusable(e.to_string()))
}

/// How `adapter` plays its order of starts, in words: its ranked runs where they are not as
/// `defaults` have them, jobs ending at their limits when it expects them to, whether it
/// writes a submit table, and the partitions it ranks when it names some.
fn adapter_play(adapter: &SlurmConfig, defaults: &SlurmConfig) -> String {
    let ranked = adapter.shared.ranked_runs;
    let mut said = String::new();
    if ranked != defaults.shared.ranked_runs {
        said += &format!(", its first {ranked} runs of starts ranked (ranked_runs)");
    }
    if adapter.ends_at_limits {
        said += ", jobs expected to end at their limits (ends_at_limits)";
    }
    said += match adapter.submit_table {
        Some(_) => ", each job given its user's factor at submission (submit_table)",
        None => ", a job waiting with no site factor until the next pass (no submit_table)",
    };
    if !adapter.partitions.is_empty() {
        let names = adapter.partitions.join(", ");
        said += &format!(
            ", only the jobs of {names} ranked and counted, their nodes the whole (partitions)"
        );
    }
    said
}

/// Whether the bundle's dumps list every run of a requeued job: its manifest's commands ask
/// `sacct` for `--duplicates`.
fn lists_every_run(manifest: Option<&Manifest>) -> bool {
    manifest.is_some_and(|m| m.commands.contains("--duplicates"))
}

/// The moment Slurm's recomputations are in phase with, and where it was read: its priority
/// plugin's start in the controller's log, else the last decay's time; `taken` hears when
/// neither is in the bundle.
fn phase(
    log: Option<&ControllerLog>,
    last_decay: Option<&(Time, String)>,
    taken: &mut Vec<String>,
) -> Option<(Time, String)> {
    let started = log.and_then(ControllerLog::recomputations_phase);
    let from_log = started.map(|(at, what)| (at, format!("{what} in {}", bundle::CONTROLLER_LOG)));
    let from_decay = || {
        last_decay.map(|(at, text)| {
            (
                *at,
                format!("the last decay at {text} in {}", bundle::LAST_DECAY),
            )
        })
    };
    let phase = from_log.or_else(from_decay);
    if phase.is_none() {
        taken.push(format!("the recomputations' phase: unknown (the bundle holds neither {} nor {}), so on the minute", bundle::LAST_DECAY, bundle::CONTROLLER_LOG));
    }
    phase
}

/// The baseline, then `policies`, each as the site's Slurm computes its own fairshare where a
/// `fairshare` policy leaves a parameter out; the notes go to `taken`.
fn site_policies(
    setup: &SlurmSetup,
    policies: Vec<PolicySpec>,
    adapter: Option<&SlurmConfig>,
    phase: Option<(Time, String)>,
    taken: &mut Vec<String>,
) -> Result<Vec<PolicySpec>, LabError> {
    let phase = phase.as_ref().map(|(at, source)| (*at, source.as_str()));
    let wrong = |e: &dyn std::fmt::Display| LabError::Unusable(format!("policy: {e}"));
    // The baseline is what the site ran: Slurm's own fairshare, run as `fairshare` is, or the
    // adapter's policy through its site factors; then named apart.
    let (own, baseline_name) = match adapter {
        Some(adapter) => {
            let policy = adapter
                .policy()
                .map_err(|e| in_file(Path::new(bundle::ADAPTER), &e))?;
            taken.push(format!("the baseline ({ADAPTER_BASELINE}): what the site ran, the adapter's policy {} through the site factors it writes, weight {} every {} s ({})", policy.name, adapter.shared.weight, adapter.shared.interval_s, bundle::ADAPTER));
            (policy, ADAPTER_BASELINE)
        }
        None => ("fairshare".parse().map_err(|e| wrong(&e))?, BASELINE),
    };
    let policies = (policies.into_iter()).map(|policy| (policy, false));
    let mut site = Vec::with_capacity(policies.len() + 1);
    for (policy, baseline) in std::iter::once((own, true)).chain(policies) {
        let (ran, note) = setup.site_policy(policy, phase).map_err(|e| wrong(&e))?;
        let note = match baseline {
            // Its parameters are the site's by definition: no invitation to set others.
            true => note.map(|n| {
                let n = n.replacen("fairshare:", &format!("{baseline_name}:"), 1);
                n.split_once("; give")
                    .map_or(n.clone(), |(said, _)| said.to_owned())
            }),
            false => note,
        };
        taken.extend(note);
        let name = match baseline {
            true => baseline_name.to_owned(),
            false => ran.name.clone(),
        };
        site.push(PolicySpec { name, ..ran });
    }
    crate::distinct(&site)?;
    Ok(site)
}

/// What the bundle says of the Slurm that ran (`SLURM_VERSION` of `config.txt`, whose release
/// the model follows): the line for "taken from the bundle", and for "not modelled" a version
/// fairshare is not tested on, or none given.
fn slurm_version(printed: Option<&str>, release: Release) -> (String, Option<String>) {
    let file = bundle::CONFIG;
    match printed.filter(|text| !text.trim().is_empty()) {
        Some(text) => {
            let version = SlurmVersion::new(text);
            let followed = release.followed();
            let taken = format!("the Slurm that ran: {version}, the SLURM_VERSION of {file}; modelled with {followed}");
            (taken, version.note())
        }
        None => (
            format!("the Slurm that ran: not known ({file} prints no SLURM_VERSION)"),
            Some(format!("which Slurm ran: {file} prints no SLURM_VERSION, so whether fairshare is tested on it (tested: {}) is not known", tested_list())),
        ),
    }
}

/// What the replay of a site's adapter leaves out of its configuration: the settings the
/// model does not follow when they are not the adapter's defaults, the phase of its passes,
/// and its `partitions` that none of the configuration's `partitions` is (the live adapter
/// refuses them, the replay ranks no job of them).
fn adapter_unmodelled(adapter: &SlurmConfig, partitions: &[Partition]) -> Vec<String> {
    let file = bundle::ADAPTER;
    let mut left = vec![format!("the phase of the adapter's passes: taken on the multiples of its interval_s, as no file of the bundle says when it started (its log is not collected)")];
    if adapter
        .policy()
        .is_ok_and(|p| matches!(p.kind, PolicyKind::Fairshare(_)))
    {
        left.push(format!("the adapter's policy {} in {file} is a fairshare function: the replay runs it as Slurm's own fairshare, weighed by config.txt's PriorityWeightFairshare, not through the site factors the adapter writes", adapter.shared.policy));
    }
    let since = (adapter.shared.since.as_deref()).map_or(String::new(), |s| format!(", since {s}"));
    left.push(format!("the adapter's history (window_s = {} s{since} in {file}): the replay's adapter counts every job of the bundle's dumps from their first, as no file of the bundle says when the adapter started and so where its window began", adapter.shared.window_s));
    let unknown: Vec<&str> = (adapter.partitions.iter())
        .filter(|name| !partitions.iter().any(|p| &p.name == *name))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        left.push(format!("partitions {} in {file}: not partitions of {}, so the replay's adapter ranks no job of them (the live adapter refuses a partition no node serves)", unknown.join(", "), bundle::CONFIG));
    }
    if adapter.mapping == "add" {
        left.push(format!("mapping = \"add\" in {file}: Slurm's own fairshare factor, weighed by config.txt's PriorityWeightFairshare beside the site factor, is left out of the replay's job priority"));
    }
    left
}

/// One sentence on the machines, the shares, the QOS and the settings read from the
/// configuration.
fn describe(setup: &SlurmSetup) -> Vec<String> {
    let cluster =
        (setup.cluster_name.as_ref()).map_or(String::new(), |c| format!(" of cluster {c}"));
    let mut lines = vec![
        format!("machines: the nodes and partitions of {}", bundle::CONFIG),
        format!("shares: the associations{cluster} in {}", bundle::ASSOC),
        format!(
            "QOS: each one's UsageFactor and Priority in {}",
            bundle::QOS
        ),
    ];
    if !setup.settings.is_empty() {
        let settings: Vec<String> = (setup.settings.iter())
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        lines.push(format!(
            "settings of {}: {}",
            bundle::CONFIG,
            settings.join(", ")
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::{slurm_version, Release};

    /// The line on the Slurm that `printed` names, and the note on it, as a bundle gives both.
    fn version_of(printed: Option<&str>) -> (String, Option<String>) {
        slurm_version(printed, Release::of(printed))
    }

    #[test]
    fn the_bundles_slurm_is_named_and_an_untested_or_unknown_one_is_not_modelled() {
        let (taken, left) = version_of(Some("22.05.8"));
        assert_eq!(
            taken,
            "the Slurm that ran: Slurm 22.05.8 (tested), the SLURM_VERSION of config.txt; modelled with the background loop turning a second after its work (22.05), a job's end freeing its nodes 5 ms after it (22.05), backfill plans' ends rounded down to bf_resolution (22.05)"
        );
        assert_eq!(left, None);
        let (taken, left) = version_of(Some("24.11.5"));
        assert!(taken.contains("Slurm 24.11.5 (tested)"), "{taken}");
        assert!(taken.ends_with("the background loop waking on each whole second where no log shows its turns (23.11 on), a job's end freeing its nodes at the next whole second (24.11 on), backfill plans' ends rounded up to bf_resolution (24.11 on)"), "{taken}");
        assert_eq!(left, None);
        let (taken, left) = version_of(Some("25.05.0"));
        assert!(taken.contains("Slurm 25.05.0 (not tested)"), "{taken}");
        assert!(left.is_some_and(|l| l.starts_with("Slurm 25.05.0 is not a version")));
        for none in [None, Some(""), Some("  ")] {
            let (taken, left) = version_of(none);
            assert!(
                taken.ends_with("(config.txt prints no SLURM_VERSION)"),
                "{taken}"
            );
            assert!(left.is_some_and(|l| l.contains("tested: 22.05")));
        }
    }
}
