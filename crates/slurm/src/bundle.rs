//! A site bundle: a folder of the verbatim outputs of named Slurm commands, everything a replay
//! of the site's history needs and nothing else, so that an administrator can make one where
//! Slurm's commands work (with `fairshare slurm collect`, or with the shell commands
//! [`Bundle::script`] prints, on a host where fairshare is not installed) and predict policies
//! on it anywhere else. Every number a prediction takes from the site can then be traced to a
//! line of one of these files.

use crate::adapter::set_setting as setting;
use crate::command::CommandError;
use crate::command::Commands;
use fairshare_core::model::{slurm_duration, Time};
pub use fairshare_trace::bundle::{
    Manifest, ASSOC, CONFIG, CONTROLLER_LOG, DUMP, DUMP_FORMAT, EVENTS, HISTORY, LAST_DECAY,
    LIMITS, MANIFEST, QOS, QOS_LIMITS, RESERVATIONS, TRANSACTIONS, TRES,
};
use fairshare_trace::slurm_limits::{ASSOC_FORMAT, QOS_FORMAT};
use fairshare_trace::slurm_nodes::{EVENT_FORMAT, RESERVATION_FORMAT};
use std::path::{Path, PathBuf};

/// What a bundle is collected over: the accounting window, in `sacct`'s time format (UTC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectWindow {
    /// From (`sacct -S`), such as `2026-10-29T00:00:00` ([`moment`] makes one of `now-30days`).
    pub since: String,
    /// Until (`sacct -E`), such as `2026-11-28T00:00:00`.
    pub until: String,
    /// From when the history before the window is collected ([`HISTORY`], up to `since`);
    /// `None`: none.
    pub history_since: Option<String>,
}

/// How many half-lives of history a bundle holds by default: after four, Slurm's decayed
/// usage of a job is a sixteenth of what it was.
pub const HALF_LIVES_OF_HISTORY: u64 = 4;

/// The moment `text` names, as `sacct` takes it, in UTC to the second
/// (`2026-10-01T00:00:00`), `now` being `now`: an absolute date (`2026-10-01`,
/// `2026-10-01T12:00`, `2026-10-01T12:00:00`), `now`, or `now-N` with a unit (`seconds`,
/// `minutes`, `hours`, `days`, `weeks`, or none for seconds), as `sacct -S` reads them. Other
/// forms of `sacct`'s are refused with the ones taken, so that a bundle's window is a moment
/// the what-if can read.
pub fn moment(text: &str, now: Time) -> Result<String, String> {
    let text = text.trim();
    let at = match text.strip_prefix("now") {
        Some(ago) => now.as_micros().checked_sub(ago_micros(ago)?),
        None => {
            let minutes = format!("{text}:00");
            let full = if text.len() == 16 { &minutes } else { text };
            Time::from_utc(full).map(Time::as_micros)
        }
    };
    let at = at.ok_or_else(|| {
        format!("{text:?}: a moment such as 2026-10-01, 2026-10-01T12:00:00, now or now-30days was expected")
    })?;
    Ok(Time::from_micros(at).utc())
}

/// Microseconds of a `sacct` offset after `now` (`-30days`, `-3600`; empty: none).
fn ago_micros(ago: &str) -> Result<u64, String> {
    if ago.is_empty() {
        return Ok(0);
    }
    let wrong =
        || format!("now{ago}: an offset back such as now-30days or now-12hours was expected");
    let ago = ago.strip_prefix('-').ok_or_else(wrong)?;
    let digits = ago.find(|c: char| !c.is_ascii_digit()).unwrap_or(ago.len());
    let count: u64 = ago[..digits].parse().map_err(|_| wrong())?;
    let unit = match &ago[digits..] {
        "" | "s" | "sec" | "second" | "seconds" => 1,
        "min" | "minute" | "minutes" => 60,
        "hour" | "hours" => 3_600,
        "day" | "days" => 86_400,
        "week" | "weeks" => 604_800,
        _ => return Err(wrong()),
    };
    count.checked_mul(unit * 1_000_000).ok_or_else(wrong)
}

/// The start of the history before a window that opens at `since` (a [`moment`]): `back`
/// microseconds earlier, or `None` for no history (`back` 0).
pub fn history_since(since: &str, back: u64) -> Option<String> {
    let since = Time::from_utc(since)?;
    (back > 0).then(|| Time::from_micros(since.as_micros().saturating_sub(back)).utc())
}

/// How far back a bundle's history reaches by default: [`HALF_LIVES_OF_HISTORY`] times the
/// `PriorityDecayHalfLife` of `scontrol show config`'s output, in microseconds; `None` when it
/// is 0 (Slurm then never forgets usage, and no span of history is enough) or unset.
pub fn default_history(config: &str) -> Option<u64> {
    let half_life = setting(config, "PriorityDecayHalfLife")?;
    let seconds = slurm_duration(&half_life).ok()??;
    (seconds > 0).then(|| seconds * HALF_LIVES_OF_HISTORY * 1_000_000)
}

/// One file of a bundle and the commands whose outputs, one after another, make it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The file's name in the bundle.
    pub file: &'static str,
    /// The commands, each the program then its arguments.
    pub commands: Vec<Vec<String>>,
}

/// The parts of a bundle of the cluster `cluster` (`scontrol show config`'s `ClusterName`)
/// over `window`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    /// The cluster whose associations are listed.
    pub cluster: String,
    /// The window of the dump.
    pub window: CollectWindow,
    /// The files made by commands, in the order they are made.
    pub parts: Vec<Part>,
    /// `slurmctld`'s log (`SlurmctldLogFile`), copied gzip'd when asked for.
    pub log: Option<PathBuf>,
}

/// Why a bundle could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CollectError {
    /// A command gave no usable answer.
    #[error(transparent)]
    Command(#[from] CommandError),
    /// `scontrol show config` names no cluster.
    #[error("`scontrol show config` names no ClusterName, whose associations the bundle lists")]
    NoCluster,
    /// A file to copy could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("{path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A command as words.
fn words(command: &[&str]) -> Vec<String> {
    command.iter().map(|w| w.to_string()).collect()
}

impl Bundle {
    /// The bundle of `cluster` over `window`.
    pub fn new(cluster: &str, window: CollectWindow) -> Bundle {
        let sacct = |since: &str, until: &str| {
            words(&[
                "sacct",
                "--allusers",
                "--duplicates",
                "--parsable2",
                &format!("--starttime={since}"),
                &format!("--endtime={until}"),
                &format!("--format={DUMP_FORMAT}"),
            ])
        };
        let dump = sacct(&window.since, &window.until);
        let history = (window.history_since.as_deref()).map(|h| sacct(h, &window.since));
        let part = |file, commands: &[&[&str]]| Part {
            file,
            commands: commands.iter().map(|c| words(c)).collect(),
        };
        let assoc_of = format!("cluster={cluster}");
        let parts = vec![
            part(
                CONFIG,
                &[
                    &["scontrol", "show", "config"],
                    &["scontrol", "show", "node"],
                    &["scontrol", "show", "partition"],
                ],
            ),
            part(
                ASSOC,
                &[&[
                    "sacctmgr",
                    "-P",
                    "-n",
                    "show",
                    "assoc",
                    "where",
                    &assoc_of,
                    "format=Cluster,Account,User,Partition,Share,ParentName,Priority",
                ]],
            ),
            part(
                QOS,
                &[&[
                    "sacctmgr",
                    "-P",
                    "-n",
                    "show",
                    "qos",
                    "format=Name,UsageFactor,Priority",
                ]],
            ),
            Part {
                file: DUMP,
                commands: vec![dump],
            },
        ];
        let changed_since = window.history_since.as_deref().unwrap_or(&window.since);
        // `sacctmgr -P show WHAT` of the cluster over the window, in `format`.
        let over_window = |file, what, format: &str| {
            part(
                file,
                &[&[
                    "sacctmgr",
                    "-P",
                    "show",
                    what,
                    &format!("Clusters={cluster}"),
                    &format!("Start={}", window.since),
                    &format!("End={}", window.until),
                    &format!("format={format}"),
                ]],
            )
        };
        let limits = [
            part(
                LIMITS,
                &[&[
                    "sacctmgr",
                    "-P",
                    "show",
                    "assoc",
                    "where",
                    &assoc_of,
                    &format!("format={ASSOC_FORMAT}"),
                ]],
            ),
            part(
                QOS_LIMITS,
                &[&[
                    "sacctmgr",
                    "-P",
                    "show",
                    "qos",
                    &format!("format={QOS_FORMAT}"),
                ]],
            ),
            part(TRES, &[&["sacctmgr", "-P", "show", "tres"]]),
            part(
                TRANSACTIONS,
                &[&[
                    "sacctmgr",
                    "-P",
                    "list",
                    "transactions",
                    "withassoc",
                    &format!("Start={changed_since}"),
                    &format!("End={}", window.until),
                ]],
            ),
            over_window(EVENTS, "event", EVENT_FORMAT),
            over_window(RESERVATIONS, "reservation", RESERVATION_FORMAT),
        ];
        let parts = (parts.into_iter())
            .chain(history.map(|history| Part {
                file: HISTORY,
                commands: vec![history],
            }))
            .chain(limits)
            .collect();
        Bundle {
            cluster: cluster.to_owned(),
            window,
            parts,
            log: None,
        }
    }

    /// This bundle with `slurmctld`'s log at `path` copied into it, gzip'd.
    pub fn with_log(self, path: PathBuf) -> Bundle {
        Bundle {
            log: Some(path),
            ..self
        }
    }

    /// The shell commands that make this bundle in the current folder without fairshare, one
    /// per file, each with `TZ=UTC` as fairshare runs them; `state` is `StateSaveLocation`.
    pub fn script(&self, state: &str) -> String {
        let mut lines = Vec::new();
        for part in &self.parts {
            let commands: Vec<String> = (part.commands.iter())
                .map(|c| format!("TZ=UTC {}", c.join(" ")))
                .collect();
            lines.push(match commands.as_slice() {
                [one] => format!("{one} > {}", part.file),
                many => format!("{{ {}; }} > {}", many.join("; "), part.file),
            });
        }
        let decay = format!("{state}/priority_last_decay_ran");
        lines.push(format!(
            "if test -r {decay}; then TZ=UTC date -u -r {decay} +%Y-%m-%dT%H:%M:%S.%N > {LAST_DECAY}; fi"
        ));
        if let Some(log) = &self.log {
            let log = log.display();
            lines.push(format!(
                "if test -r {log}; then gzip -c {log} > {CONTROLLER_LOG}; fi"
            ));
        }
        lines.join("\n") + "\n"
    }

    /// Runs every command through `slurm` and writes each file into `dir` (made if need be),
    /// telling `step` the file before it is made; then the last decay's time (when
    /// `StateSaveLocation` can be read here) and the manifest. The files hold the commands'
    /// outputs as they are.
    pub fn collect(
        &self,
        slurm: &impl Commands,
        dir: &Path,
        state: Option<&Path>,
        step: &mut dyn FnMut(&str),
    ) -> Result<Manifest, CollectError> {
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|source| CollectError::Write { path, source })
        };
        std::fs::create_dir_all(dir).map_err(|source| CollectError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        for part in &self.parts {
            step(part.file);
            let mut text = String::new();
            for command in &part.commands {
                let command: Vec<&str> = command.iter().map(String::as_str).collect();
                text += &slurm.run(&command)?;
            }
            write(part.file, &text)?;
        }
        if let Some(log) = &self.log {
            step(CONTROLLER_LOG);
            gzip(log, &dir.join(CONTROLLER_LOG))?;
        }
        let last_decay = state.and_then(last_decay);
        if let Some(moment) = &last_decay {
            write(LAST_DECAY, &format!("{moment}\n"))?;
        }
        let manifest = Manifest {
            cluster: self.cluster.clone(),
            since: self.window.since.clone(),
            until: self.window.until.clone(),
            history_since: self.window.history_since.clone(),
            slurm_version: slurm.run(&["scontrol", "--version"])?.trim().to_owned(),
            last_decay: last_decay.is_some(),
            controller_log: self.log.is_some(),
            commands: self
                .script(&state.map_or("$StateSaveLocation".into(), |s| s.display().to_string())),
        };
        write(MANIFEST, &manifest.to_toml())?;
        Ok(manifest)
    }
}

/// Copies the file at `from` to `to`, gzip'd.
fn gzip(from: &Path, to: &Path) -> Result<(), CollectError> {
    let mut input = std::fs::File::open(from).map_err(|source| CollectError::Read {
        path: from.to_path_buf(),
        source,
    })?;
    let written = |source| CollectError::Write {
        path: to.to_path_buf(),
        source,
    };
    let output = std::fs::File::create(to).map_err(written)?;
    let mut encoder = flate2::write::GzEncoder::new(output, flate2::Compression::default());
    std::io::copy(&mut input, &mut encoder).map_err(written)?;
    encoder.finish().map_err(written)?;
    Ok(())
}

/// The modification time of `state/priority_last_decay_ran`, in UTC to the nanosecond as
/// `date -u -r … +%FT%T.%N` prints it (the phase of Slurm's recomputations is a fraction of a
/// second), when the file can be read here.
fn last_decay(state: &Path) -> Option<String> {
    let modified = std::fs::metadata(state.join("priority_last_decay_ran"))
        .and_then(|m| m.modified())
        .ok()?;
    let text = humantime::format_rfc3339_nanos(modified).to_string();
    Some(text.trim_end_matches('Z').to_owned())
}

/// `StateSaveLocation` from `scontrol show config`'s output.
pub fn state_save_location(config: &str) -> Option<String> {
    setting(config, "StateSaveLocation")
}

/// `SlurmctldLogFile` from `scontrol show config`'s output.
pub fn controller_log_file(config: &str) -> Option<String> {
    setting(config, "SlurmctldLogFile")
}

/// `ClusterName` from `scontrol show config`'s output.
pub fn cluster_name(config: &str) -> Option<String> {
    setting(config, "ClusterName")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A Slurm that answers each command with its words, and lists the calls.
    struct Echo(RefCell<Vec<String>>);

    impl Commands for Echo {
        fn run(&self, command: &[&str]) -> Result<String, CommandError> {
            self.0.borrow_mut().push(command.join(" "));
            Ok(format!("{}\n", command.join(" ")))
        }
    }

    fn window() -> CollectWindow {
        CollectWindow {
            since: "2026-10-29T00:00:00".into(),
            until: "2026-11-28T00:00:00".into(),
            history_since: None,
        }
    }

    /// A window's ends are moments: absolute ones as given (to the second), `now` and
    /// `now-N` with sacct's units from the moment `collect` ran; other forms are refused.
    #[test]
    fn a_windows_ends_are_moments() {
        let now = Time::from_utc("2026-11-29T12:00:30").unwrap();
        let read = |text| moment(text, now);
        assert_eq!(read("2026-10-01").unwrap(), "2026-10-01T00:00:00");
        assert_eq!(read("2026-10-01T06:30").unwrap(), "2026-10-01T06:30:00");
        assert_eq!(read("2026-10-01T06:30:15").unwrap(), "2026-10-01T06:30:15");
        assert_eq!(read("now").unwrap(), "2026-11-29T12:00:30");
        assert_eq!(read("now-30days").unwrap(), "2026-10-30T12:00:30");
        assert_eq!(read("now-2hours").unwrap(), "2026-11-29T10:00:30");
        assert_eq!(read("now-90").unwrap(), "2026-11-29T11:59:00");
        assert_eq!(read("now-1weeks").unwrap(), "2026-11-22T12:00:30");
        for wrong in ["yesterday", "now+1day", "now-3fortnights", "10/01", "now-"] {
            let e = read(wrong).unwrap_err();
            assert!(e.contains("was expected"), "{wrong}: {e}");
        }
        assert!(read("now-99999999999999weeks").is_err());
    }

    /// The history reaches four half-lives back by default, none when Slurm never decays.
    #[test]
    fn the_history_reaches_four_half_lives_back() {
        let config = "PriorityDecayHalfLife   = 7-00:00:00\n";
        let back = default_history(config).unwrap();
        assert_eq!(back, 28 * 86_400 * 1_000_000);
        assert_eq!(
            history_since("2026-11-01T00:00:00", back).as_deref(),
            Some("2026-10-04T00:00:00")
        );
        assert_eq!(history_since("2026-11-01T00:00:00", 0), None);
        assert_eq!(default_history("PriorityDecayHalfLife = 00:00:00\n"), None);
        assert_eq!(default_history("ClusterName = emu\n"), None);
    }

    /// With a history, the bundle holds the accounting before the window in the dump's
    /// format, up to the window's start, and the manifest says where it begins.
    #[test]
    fn the_history_is_the_dump_before_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let slurm = Echo(RefCell::new(Vec::new()));
        let window = CollectWindow {
            history_since: Some("2026-10-01T00:00:00".into()),
            ..window()
        };
        let bundle = Bundle::new("emu", window);
        let manifest = bundle
            .collect(&slurm, dir.path(), None, &mut |_| {})
            .unwrap();
        let history = std::fs::read_to_string(dir.path().join(HISTORY)).unwrap();
        assert_eq!(history, format!("sacct --allusers --duplicates --parsable2 --starttime=2026-10-01T00:00:00 --endtime=2026-10-29T00:00:00 --format={DUMP_FORMAT}\n"));
        assert!(DUMP_FORMAT.ends_with(",NodeList,Reason,Reservation,SubmitLine"));
        assert_eq!(
            manifest.history_since.as_deref(),
            Some("2026-10-01T00:00:00")
        );
        assert!(bundle.script("/s").contains(" > history.txt\n"));
    }

    /// Each file holds its commands' outputs, one after another, as the script's line for it
    /// makes it; the manifest names the cluster, the window and the commands.
    #[test]
    fn a_bundle_holds_each_commands_output_as_the_script_makes_it() {
        let dir = tempfile::tempdir().unwrap();
        let slurm = Echo(RefCell::new(Vec::new()));
        let bundle = Bundle::new("emu", window());
        let mut steps = Vec::new();
        let manifest = bundle
            .collect(&slurm, dir.path(), None, &mut |f| steps.push(f.to_owned()))
            .unwrap();
        assert_eq!(
            steps,
            [
                CONFIG,
                ASSOC,
                QOS,
                DUMP,
                LIMITS,
                QOS_LIMITS,
                TRES,
                TRANSACTIONS,
                EVENTS,
                RESERVATIONS
            ]
        );
        let read = |name| std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert_eq!(
            read(CONFIG),
            "scontrol show config\nscontrol show node\nscontrol show partition\n"
        );
        assert!(read(ASSOC).contains("where cluster=emu format=Cluster,Account,User"));
        assert_eq!(read(EVENTS), "sacctmgr -P show event Clusters=emu Start=2026-10-29T00:00:00 End=2026-11-28T00:00:00 format=NodeName,TimeStart,TimeEnd,State,Reason,Event\n");
        assert!(read(RESERVATIONS).contains("show reservation Clusters=emu Start=2026-10-29T00:00:00 End=2026-11-28T00:00:00 format=Name,NodeNames,"));
        assert!(read(DUMP).starts_with("sacct --allusers --duplicates --parsable2 --starttime=2026-10-29T00:00:00 --endtime=2026-11-28T00:00:00 --format=JobID,User,Account,Submit,Eligible,"));
        assert!(!dir.path().join(HISTORY).exists(), "no history asked for");
        assert!(
            !dir.path().join(LAST_DECAY).exists(),
            "no StateSaveLocation here"
        );
        let script = bundle.script("/var/spool/slurmctld");
        assert!(script.starts_with("{ TZ=UTC scontrol show config; TZ=UTC scontrol show node; TZ=UTC scontrol show partition; } > config.txt\n"), "{script}");
        assert!(script.contains(
            "TZ=UTC sacctmgr -P -n show qos format=Name,UsageFactor,Priority > qos.txt\n"
        ));
        assert!(script.ends_with("if test -r /var/spool/slurmctld/priority_last_decay_ran; then TZ=UTC date -u -r /var/spool/slurmctld/priority_last_decay_ran +%Y-%m-%dT%H:%M:%S.%N > last-decay.txt; fi\n"), "{script}");
        assert_eq!(
            (manifest.cluster.as_str(), manifest.since.as_str()),
            ("emu", "2026-10-29T00:00:00")
        );
        assert_eq!(manifest.slurm_version, "scontrol --version");
        assert!(read(MANIFEST).contains("cluster = \"emu\""));
    }

    /// With the controller's log, the bundle holds it gzip'd, and the script says how.
    #[test]
    fn the_controllers_log_is_copied_gzipd() {
        use std::io::Read;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("slurmctld.log");
        let text = "[2026-11-28T18:00:00.001] Running as primary controller\n";
        std::fs::write(&log, text).unwrap();
        let bundle = Bundle::new("emu", window()).with_log(log.clone());
        let out = dir.path().join("bundle");
        let slurm = Echo(RefCell::new(Vec::new()));
        let manifest = bundle.collect(&slurm, &out, None, &mut |_| {}).unwrap();
        assert!(manifest.controller_log);
        let gz = std::fs::File::open(out.join(CONTROLLER_LOG)).unwrap();
        let mut copied = String::new();
        flate2::read::GzDecoder::new(gz)
            .read_to_string(&mut copied)
            .unwrap();
        assert_eq!(copied, text);
        let script = bundle.script("/var/spool/slurmctld");
        let log = log.display();
        assert!(
            script.ends_with(&format!(
                "if test -r {log}; then gzip -c {log} > slurmctld.log.gz; fi\n"
            )),
            "{script}"
        );
        let missing = Bundle::new("emu", window()).with_log(dir.path().join("absent"));
        let e = missing
            .collect(&slurm, &out, None, &mut |_| {})
            .unwrap_err();
        assert!(e.to_string().contains("absent"), "{e}");
    }

    /// The time of the last decay is the file's modification time, in UTC.
    #[test]
    fn the_last_decay_is_the_state_files_modification_time() {
        let state = tempfile::tempdir().unwrap();
        let file = state.path().join("priority_last_decay_ran");
        std::fs::write(&file, "").unwrap();
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_767_225_600_250);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(at)
            .unwrap();
        assert_eq!(
            last_decay(state.path()).as_deref(),
            Some("2026-01-01T00:00:00.250000000")
        );
        assert_eq!(last_decay(&state.path().join("absent")), None);
    }

    #[test]
    fn the_cluster_and_the_state_folder_come_from_scontrol() {
        let config = "ClusterName             = emu\nStateSaveLocation       = /var/spool/slurmctld\nPriorityType = (null)\n";
        assert_eq!(cluster_name(config).as_deref(), Some("emu"));
        assert_eq!(
            state_save_location(config).as_deref(),
            Some("/var/spool/slurmctld")
        );
        assert_eq!(setting(config, "PriorityType"), None);
    }
}
