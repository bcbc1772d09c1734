//! What a fairshare policy charges a job for each second it runs: the usage metrics sites
//! choose between (`spec/metacentrum.md` §5, and Slurm's TRES billing).
//!
//! The metrics are a registry: each file here declares its [`MetricEntry`] (its name, how its
//! parameters are written, one line of help, its rate, whether it prices jobs on the cluster's
//! machines, whether the SPEC of the machine that ran the job multiplies it, what it becomes on
//! a pool), and [`METRICS`] lists them. Parsing, display, the error for an unknown metric and
//! the policy registry's help for `usage=` are built from that list, so adding a metric is one
//! file and one line in [`METRICS`].
//!
//! | metric | file | charges per second |
//! |---|---|---|
//! | `cpu` | [`cpu`] | its processors (CPU time) |
//! | `maui-pe` | [`maui_pe`] | Maui's system-wide Processor Equivalent |
//! | `pe`, `pe-additive` | [`pe`] | the heterogeneous PE (the paper's, or MetaCentrum's since 2023) × SPEC |
//! | `dominant` | [`dominant`] | its dominant share |
//! | `tres:W+W+…` | [`tres`] | Slurm's TRES billing, one weight per resource of the log |
//! | `billing` | [`billing`] | Slurm's billing as the log's reader works it out per job |

pub mod billing;
pub mod cpu;
pub mod dominant;
pub mod maui_pe;
pub mod pe;
pub mod tres;

use crate::error::Invalid;
use crate::model::{MachineCatalogue, Task};
use crate::usage::penalty::{maui_pe as system_wide_pe, ChargeError};
use std::fmt;

/// Every metric, in the order help texts and errors list them: the registry.
pub const METRICS: &[MetricEntry] = &[
    cpu::CPU,
    maui_pe::MAUI_PE,
    pe::PE,
    pe::PE_ADDITIVE,
    dominant::DOMINANT,
    tres::TRES,
    billing::BILLING,
];

/// The most parameters a metric takes: the resources a TRES billing gives weights to.
pub const MOST_TRES: usize = 4;

/// A metric's parameters (TRES billing's weights, in the order of the resources; zeros for a
/// metric that takes none).
pub type Params = [f64; MOST_TRES];

/// A metric's usage per second of running of a task, from its parameters, the task, the
/// catalogue it is priced on and that catalogue's whole amounts
/// ([`totals`](crate::usage::penalty::totals)), before any SPEC.
pub type RateFn = fn(&Params, &Task, &MachineCatalogue, &[f64]) -> Result<f64, ChargeError>;

/// How a metric that takes parameters writes, reads and checks them.
#[derive(Debug, Clone, Copy)]
pub struct ParamsEntry {
    /// How they are written after `name:` in help texts, e.g. `W+W+…`.
    pub written: &'static str,
    /// Reads them; the error says what was expected.
    pub parse: fn(&str) -> Result<Params, Invalid>,
    /// Writes them back as `parse` reads them.
    pub show: fn(&Params) -> String,
    /// Refuses parameters that do not fit the resources of a run (`resources`, by name).
    pub check: fn(&Params, &[String]) -> Result<(), Invalid>,
}

/// One registered usage metric.
#[derive(Debug, Clone, Copy)]
pub struct MetricEntry {
    /// Its name, as `usage=` and `--usage` take it.
    pub name: &'static str,
    /// Its parameters, written `name:PARAMS`, if it takes any.
    pub params: Option<ParamsEntry>,
    /// What it charges, in one line.
    pub about: &'static str,
    /// Its usage per second of running.
    pub rate: RateFn,
    /// Whether it prices jobs on the cluster's machines, rather than by what they asked for
    /// alone.
    pub needs_machines: bool,
    /// Whether the charge is multiplied by the SPEC of the machine that ran the job.
    pub uses_spec: bool,
    /// What it becomes on a pool, which has no machines to choose between (`None`: itself).
    pub on_a_pool: Option<&'static MetricEntry>,
}

/// What a fairshare policy charges a job for each second it runs: a registered metric and its
/// parameters. Two metrics are equal when their names and parameters are.
#[derive(Clone, Copy)]
pub struct UsageMetric {
    entry: &'static MetricEntry,
    params: Params,
}

impl UsageMetric {
    /// The metric `entry`, without parameters.
    pub const fn new(entry: &'static MetricEntry) -> UsageMetric {
        UsageMetric::with(entry, [0.0; MOST_TRES])
    }

    /// The metric `entry` with its parameters.
    pub const fn with(entry: &'static MetricEntry, params: Params) -> UsageMetric {
        UsageMetric { entry, params }
    }

    /// Its registry entry.
    pub fn entry(&self) -> &'static MetricEntry {
        self.entry
    }

    /// Its parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Usage per second of running of `task` on `catalogue` whose whole amounts are `totals`
    /// ([`totals`](crate::usage::penalty::totals)), before any SPEC
    /// ([`UsageMetric::uses_spec`]).
    pub fn rate(
        &self,
        task: &Task,
        catalogue: &MachineCatalogue,
        totals: &[f64],
    ) -> Result<f64, ChargeError> {
        (self.entry.rate)(&self.params, task, catalogue, totals)
    }

    /// [`UsageMetric::rate`], or, for a task the metric cannot price (a property or size no
    /// machine offers), Maui's system-wide PE; the flag says which.
    pub fn price(&self, task: &Task, catalogue: &MachineCatalogue, totals: &[f64]) -> (f64, bool) {
        match self.rate(task, catalogue, totals) {
            Ok(rate) if rate.is_finite() && rate >= 0.0 => (rate, false),
            _ => {
                let maui = system_wide_pe(&task.demand, totals);
                (if maui.is_finite() { maui } else { 0.0 }, true)
            }
        }
    }

    /// The metric on a pool, which has no machines to choose between (the heterogeneous PE is
    /// then Maui's system-wide PE: see [`pe::PE`]).
    pub fn on_a_pool(self) -> UsageMetric {
        match self.entry.on_a_pool {
            Some(entry) => UsageMetric::with(entry, self.params),
            None => self,
        }
    }

    /// Refuses parameters that do not fit `resources` (TRES weights for more resources than
    /// there are: the weights go by position, so one too many would weigh nothing, silently).
    pub fn check_resources(&self, resources: &[String]) -> Result<(), Invalid> {
        match self.entry.params {
            Some(params) => (params.check)(&self.params, resources),
            None => Ok(()),
        }
    }

    /// Whether the metric prices jobs on the cluster's machines (the PE metrics and the
    /// dominant share), rather than by what they asked for alone.
    pub fn needs_machines(&self) -> bool {
        self.entry.needs_machines
    }

    /// Whether the charge is multiplied by the SPEC of the machine that ran the job
    /// (MetaCentrum's heterogeneous PE is; the others are not).
    pub fn uses_spec(&self) -> bool {
        self.entry.uses_spec
    }
}

impl PartialEq for UsageMetric {
    fn eq(&self, other: &UsageMetric) -> bool {
        self.entry.name == other.entry.name && self.params == other.params
    }
}

impl fmt::Debug for UsageMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UsageMetric({self})")
    }
}

impl fmt::Display for UsageMetric {
    /// The metric as [`UsageMetric::from_str`](std::str::FromStr) reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.entry.params {
            Some(params) => write!(f, "{}:{}", self.entry.name, (params.show)(&self.params)),
            None => f.write_str(self.entry.name),
        }
    }
}

impl std::str::FromStr for UsageMetric {
    type Err = Invalid;

    /// A registered metric's name, followed by `:` and its parameters when it takes some:
    /// `cpu`, `maui-pe`, `pe`, `pe-additive`, `dominant` or `tres:W+W+…` (one weight per
    /// resource, in the trace's units and order).
    fn from_str(s: &str) -> Result<UsageMetric, Invalid> {
        for entry in METRICS {
            match entry.params {
                None if s == entry.name => return Ok(UsageMetric::new(entry)),
                Some(params) => {
                    let given = s.strip_prefix(entry.name).and_then(|p| p.strip_prefix(':'));
                    if let Some(given) = given {
                        return Ok(UsageMetric::with(entry, (params.parse)(given)?));
                    }
                }
                None => {}
            }
        }
        Err(Invalid(format!("expected {}, found {s:?}", names())))
    }
}

/// The metrics as an error lists them: `cpu, maui-pe, … or tres:W+W+…`.
pub fn names() -> String {
    let written: Vec<String> = METRICS.iter().map(written).collect();
    match written.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => written.concat(),
    }
}

/// How a metric is written, with the form of its parameters: `tres:W+W+…`.
fn written(entry: &MetricEntry) -> String {
    match entry.params {
        Some(params) => format!("{}:{}", entry.name, params.written),
        None => entry.name.to_owned(),
    }
}

/// The metrics as a help text's value lists them, `cpu|maui-pe|…|tres:W+W+…`: joined from
/// [`METRICS`] when the crate is compiled, for the policy registry's constant parameter list.
pub const WRITTEN: &str = match std::str::from_utf8(&WRITTEN_BYTES) {
    Ok(text) => text,
    Err(_) => panic!("metric names are UTF-8"),
};

const WRITTEN_BYTES: [u8; written_len()] = written_bytes();

/// The length of [`WRITTEN`].
const fn written_len() -> usize {
    let (mut len, mut i) = (0, 0);
    while i < METRICS.len() {
        if i > 0 {
            len += 1;
        }
        len += METRICS[i].name.len();
        if let Some(params) = &METRICS[i].params {
            len += 1 + params.written.len();
        }
        i += 1;
    }
    len
}

/// The bytes of [`WRITTEN`].
const fn written_bytes() -> [u8; written_len()] {
    let mut out = [0; written_len()];
    let (mut at, mut i) = (0, 0);
    while i < METRICS.len() {
        if i > 0 {
            out[at] = b'|';
            at += 1;
        }
        let name = METRICS[i].name.as_bytes();
        let mut k = 0;
        while k < name.len() {
            out[at] = name[k];
            (at, k) = (at + 1, k + 1);
        }
        if let Some(params) = &METRICS[i].params {
            out[at] = b':';
            at += 1;
            let form = params.written.as_bytes();
            let mut k = 0;
            while k < form.len() {
                out[at] = form[k];
                (at, k) = (at + 1, k + 1);
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NodeType;
    use crate::usage::penalty::totals;

    fn metric(text: &str) -> UsageMetric {
        text.parse().unwrap()
    }

    /// The metrics on one task: CPU time, Maui's PE, the cheapest PE (an undeclared property
    /// ignored, a declared one enforced), a spread task paid per processor, TRES billing.
    #[test]
    fn usage_metrics_price_a_task() {
        let mut small = NodeType::new("small", 4, vec![12.0, 90.0]);
        small.properties = vec!["small".into()];
        let mut big = NodeType::new("big", 1, vec![80.0, 505.0]);
        big.properties = vec!["big".into()];
        let catalogue = MachineCatalogue {
            types: vec![small, big],
        };
        let totals = totals(&catalogue);
        let mut task = Task::new(0, 0, crate::model::Time::ZERO, 1, vec![1.0, 45.0]);
        task.nodes = Some(1);
        task.properties = vec!["x86_64".into()];
        let rate =
            |metric: UsageMetric, task: &Task| metric.rate(task, &catalogue, &totals).unwrap();
        assert_eq!(rate(UsageMetric::new(&cpu::CPU), &task), 1.0);
        // Half a small node's memory: 6 processors there, 45/505 × 80 = 7.13 on the big one.
        assert_eq!(rate(UsageMetric::new(&pe::PE), &task), 6.0);
        assert!(
            (rate(UsageMetric::new(&maui_pe::MAUI_PE), &task) - 45.0 / 865.0 * 128.0).abs() < 1e-9
        );
        assert!((rate(UsageMetric::new(&dominant::DOMINANT), &task) - 45.0 / 865.0).abs() < 1e-12);
        assert_eq!(
            rate(UsageMetric::with(&tres::TRES, [2.0, 0.5, 0.0, 0.0]), &task),
            2.0 + 22.5
        );
        task.properties = vec!["big".into()];
        assert!((rate(UsageMetric::new(&pe::PE), &task) - 45.0 / 505.0 * 80.0).abs() < 1e-9);
        // Four processors on any nodes, 2 each of memory: each processor pays max(1/12, 2/90) × 12.
        let mut spread = Task::new(1, 0, crate::model::Time::ZERO, 1, vec![4.0, 8.0]);
        spread.nodes = None;
        assert!((rate(UsageMetric::new(&pe::PE), &spread) - 4.0).abs() < 1e-9);
        // More memory than any machine: not priced by the PE, so Maui's PE stands in.
        let huge = Task::new(2, 0, crate::model::Time::ZERO, 1, vec![1.0, 600.0]);
        let (price, system_wide) = UsageMetric::new(&pe::PE).price(&huge, &catalogue, &totals);
        assert!(system_wide && (price - 600.0 / 865.0 * 128.0).abs() < 1e-9);
        for text in [
            "cpu",
            "maui-pe",
            "pe",
            "pe-additive",
            "dominant",
            "tres:1+0.25",
        ] {
            assert_eq!(text.parse::<UsageMetric>().unwrap().to_string(), text);
        }
    }

    /// The seam: [`METRICS`] is the one list of metrics. Every registered metric has a unique
    /// name, displays as its name (with `:` and its parameters when it takes some) and parses
    /// back; the error for an unknown metric, the help value and the policy registry's
    /// `usage=` help list exactly the registered metrics, in registry order.
    #[test]
    fn every_registered_metric_round_trips_and_the_texts_list_exactly_the_registry() {
        let mut names: Vec<&str> = METRICS.iter().map(|e| e.name).collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all, "metric names repeat");
        for entry in METRICS {
            let metric = UsageMetric::new(entry);
            let text = metric.to_string();
            match entry.params {
                None => assert_eq!(text, entry.name),
                Some(_) => {
                    assert!(text.starts_with(&format!("{}:", entry.name)), "{text}");
                    assert!(entry.name.parse::<UsageMetric>().is_err(), "{}", entry.name);
                }
            }
            let parsed: UsageMetric = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(parsed, metric);
            assert_eq!(parsed.entry().name, entry.name);
            assert_eq!(parsed.to_string(), text);
            assert!(!entry.about.is_empty(), "{}", entry.name);
        }
        let written: Vec<String> = METRICS.iter().map(written).collect();
        assert_eq!(WRITTEN, written.join("|"));
        let error = "bogus".parse::<UsageMetric>().unwrap_err();
        let listed = format!("expected {}, found \"bogus\"", names_from(&written));
        assert_eq!(error, listed);
        let help = crate::policy::registry::help(crate::policy::Engine::Replay);
        assert!(help.contains(&format!("usage={WRITTEN}: ")), "{help}");
    }

    /// `a, b or c`, written out independently of [`names`].
    fn names_from(written: &[String]) -> String {
        let (last, rest) = written.split_last().unwrap();
        format!("{} or {last}", rest.join(", "))
    }

    /// What each metric declares: which price on machines, which take the SPEC, and the PE's
    /// stand-in on a pool.
    #[test]
    fn each_metric_declares_machines_spec_and_its_pool_form() {
        for (text, needs_machines, uses_spec, on_a_pool) in [
            ("cpu", false, false, "cpu"),
            ("maui-pe", true, false, "maui-pe"),
            ("pe", true, true, "maui-pe"),
            ("pe-additive", true, true, "pe-additive"),
            ("dominant", true, false, "dominant"),
            ("tres:1+0.25", false, false, "tres:1+0.25"),
        ] {
            let m = metric(text);
            assert_eq!(m.needs_machines(), needs_machines, "{text}");
            assert_eq!(m.uses_spec(), uses_spec, "{text}");
            assert_eq!(m.on_a_pool().to_string(), on_a_pool, "{text}");
        }
        assert_eq!(
            metric("tres:1+0.5"),
            UsageMetric::with(&tres::TRES, [1.0, 0.5, 0.0, 0.0])
        );
        assert_ne!(metric("tres:1+0.5"), metric("tres:1"));
        assert_ne!(metric("pe"), metric("pe-additive"));
        assert_eq!(format!("{:?}", metric("tres:2")), "UsageMetric(tres:2)");
    }

    /// TRES weights: at most [`MOST_TRES`], each a number >= 0, no more than the resources.
    #[test]
    fn tres_weights_are_checked() {
        for (bad, says) in [
            (
                "tres:1+x",
                "a TRES weight must be a number >= 0, found \"x\"",
            ),
            ("tres:1+-1", "a TRES weight must be a number >= 0"),
            (
                "tres:1+1+1+1+1",
                "TRES billing takes at most 4 weights, found 5",
            ),
            ("tres", "expected cpu, maui-pe"),
            ("pe:1", "expected cpu, maui-pe"),
        ] {
            let error = bad.parse::<UsageMetric>().unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
        let resources = ["cpu".to_owned(), "mem".to_owned()];
        assert!(metric("tres:1+0+0").check_resources(&resources).is_ok());
        assert!(metric("pe").check_resources(&resources[..1]).is_ok());
        let error = metric("tres:1+1+1")
            .check_resources(&resources)
            .unwrap_err();
        assert_eq!(
            error,
            "TRES billing weighs 3 resources, there are 2 (cpu, mem): one weight per resource, in that order"
        );
    }
}
