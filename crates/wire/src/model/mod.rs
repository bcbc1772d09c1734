//! What crosses the wire: the API's request and response bodies, and the checks that turn a
//! hostile body into a 4xx naming the problem before anything is stored.

use fairshare_core::error::Invalid;
use fairshare_core::heaviness::{Resource, ResourceKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

mod answer;

pub use answer::{Explanation, Health, NodeStatus, Priorities, UserPriority, WorkloadPriority};

/// A node's, user's or workload's id, shared rather than copied between the registry, the
/// cycle's memory and the snapshot.
pub type Id = Arc<str>;

/// A quantity per resource name.
pub type PerResource = BTreeMap<String, f64>;

/// The most a usage rate may exceed its node's supply by before the report is refused as absurd.
pub const ABSURD_FACTOR: f64 = 2.0;
/// The shortest interval a usage report may cover, in seconds.
pub const MIN_INTERVAL_S: f64 = 0.001;
/// The longest interval a usage report may cover, in seconds.
pub const MAX_INTERVAL_S: f64 = 86_400.0;
/// The most samples one usage report may carry.
pub const MAX_SAMPLES: usize = 100_000;
/// The largest number any quantity may have.
pub const MAX_QUANTITY: f64 = 1e18;
/// The smallest supply a node may have of a resource: the metric divides by the cloud's
/// supply, so a vanishing one (1e-300) makes heaviness infinite or NaN. Against quantities of
/// at most [`MAX_QUANTITY`], this keeps every share finite.
pub const MIN_SUPPLY: f64 = 1e-3;
/// The most knob files one workload's written values may name.
pub const MAX_KNOBS: usize = 16;
/// The longest knob file name accepted.
pub const MAX_KNOB_NAME: usize = 64;
/// The largest knob value accepted (v1's "no limit" is just below it).
pub const MAX_KNOB_VALUE: u64 = i64::MAX as u64;

/// The resources a daemon measures unless its configuration lists others, in order: cpu, mem,
/// disk and net.
pub fn default_resources() -> Vec<Resource> {
    vec![
        Resource::new("cpu", ResourceKind::Cpu),
        Resource::new("mem", ResourceKind::Memory),
        Resource::new("disk", ResourceKind::Disk),
        Resource::new("net", ResourceKind::Network),
    ]
}

/// A workload's knob files and the value in force in each, as its node's agent last wrote them
/// (`cpu.shares` on a cgroup v1 node, `cpu.weight` on a v2 one).
pub type KnobsWritten = BTreeMap<String, u64>;

/// `PUT /v1/nodes/{id}`: a compute node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Physical supply of every configured resource: CPUs, memory in bytes, disk and network
    /// in bytes per second.
    #[cfg_attr(feature = "openapi", schema(inline))]
    pub supply: PerResource,
    /// How much one of its CPUs is worth against the reference machine (default 1).
    #[serde(default = "one")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0.0, maximum = 1000.0))]
    pub speed: f64,
}

fn one() -> f64 {
    1.0
}

/// `PUT /v1/users/{id}`: a user (tenant, project).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UserSpec {
    /// The user's quota of each resource with a virtual size (CPU, memory); leave it out for an
    /// equal split of the cloud. Either every user has a quota or none has.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(inline))]
    pub quota: Option<PerResource>,
}

/// `PUT /v1/workloads/{id}`: a VM, container or cgroup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// The user who owns it (registered first).
    #[cfg_attr(feature = "openapi", schema(pattern = r"^[A-Za-z0-9._:@-]{1,128}$"))]
    pub owner: String,
    /// The node it runs on (registered first).
    #[cfg_attr(feature = "openapi", schema(pattern = r"^[A-Za-z0-9._:@-]{1,128}$"))]
    pub node: String,
    /// Its virtual size of every resource that has one (CPU, memory).
    #[serde(rename = "virtual")]
    #[cfg_attr(feature = "openapi", schema(inline))]
    pub size: PerResource,
}

/// `POST /v1/usage`: what a node's workloads consumed in one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UsageReport {
    /// The reporting node.
    #[cfg_attr(feature = "openapi", schema(pattern = r"^[A-Za-z0-9._:@-]{1,128}$"))]
    pub node: String,
    /// The report's number, increasing per node; a report with a number already stored is
    /// acknowledged and not counted again.
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 0, maximum = 9223372036854775807i64)
    )]
    #[serde(deserialize_with = "whole_number")]
    pub seq: u64,
    /// The interval's length in seconds.
    #[cfg_attr(feature = "openapi", schema(minimum = 0.001, maximum = 86400.0))]
    pub interval_s: f64,
    /// One sample per workload measured.
    pub samples: Vec<Sample>,
    /// What is in force in each workload's knob files, as the agent last wrote them (its
    /// hysteresis and each knob's range applied): workload → file → value. Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<BTreeMap<String, BTreeMap<String, u64>>>,
        example = json!({"vm1": {"cpu.shares": 1597, "blkio.weight": 500, "memory.soft_limit_in_bytes": 3221225472u64}})))]
    pub written: Option<BTreeMap<String, BTreeMap<String, serde_json::Number>>>,
}

/// One workload's consumption in the interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// The workload.
    #[cfg_attr(feature = "openapi", schema(pattern = r"^[A-Za-z0-9._:@-]{1,128}$"))]
    pub workload: String,
    /// Every configured resource: CPU-seconds, disk and network bytes moved during the
    /// interval; memory as its mean level in bytes.
    #[cfg_attr(feature = "openapi", schema(inline))]
    pub usage: PerResource,
}

/// The answer to an accepted usage report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UsageAck {
    /// The node.
    pub node: String,
    /// The report's number.
    pub seq: u64,
    /// Whether this (node, seq) was stored before, so this copy was not counted again.
    pub duplicate: bool,
}

/// Every error the API returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    /// A stable machine-readable kind: `bad_request`, `invalid`, `unauthorized`, `forbidden`,
    /// `not_found`, `conflict`, `too_large`, `rate_limited`, `unavailable`, `internal`.
    pub error: String,
    /// What is wrong and where, for a person.
    pub message: String,
}

/// A whole number ≥ 0, also when written with a zero fraction (`42.0`), as JSON Schema's
/// `integer` allows.
fn whole_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let n = serde_json::Number::deserialize(d)?;
    if let Some(u) = n.as_u64() {
        return Ok(u);
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f >= 0.0 && f < 2f64.powi(64) => Ok(f as u64),
        _ => Err(serde::de::Error::custom(format!(
            "expected a whole number ≥ 0, found {n}"
        ))),
    }
}

/// Whether a string may name a node, user, workload or resource: 1–128 characters of letters,
/// digits and `. _ - : @`.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-:@".contains(&b))
}

/// Checks an identifier, naming what it identifies.
pub fn check_id(what: &str, id: &str) -> Result<(), Invalid> {
    if valid_id(id) {
        Ok(())
    } else {
        Err(Invalid(format!(
            "{what} id {id:?} must be 1–128 characters of letters, digits and . _ - : @"
        )))
    }
}

/// Checks one quantity: finite, ≥ 0 and not absurdly large.
fn check_quantity(field: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && (0.0..=MAX_QUANTITY).contains(&v) {
        Ok(())
    } else {
        Err(format!(
            "{field} must be a number between 0 and {MAX_QUANTITY:e}, found {v}"
        ))
    }
}

/// Reads a per-resource map into the configured order: every name must be known; the
/// resources `wanted` selects must all be there, and no other may be.
fn per_resource(
    field: &str,
    map: &PerResource,
    resources: &[Resource],
    wanted: impl Fn(&Resource) -> bool,
) -> Result<Vec<f64>, Invalid> {
    if let Some(name) = map
        .keys()
        .find(|n| !resources.iter().any(|r| &r.name == *n))
    {
        let known: Vec<&str> = resources.iter().map(|r| r.name.as_str()).collect();
        return Err(Invalid(format!(
            "{field}: unknown resource {name:?} (the service measures {})",
            known.join(", ")
        )));
    }
    let mut out = vec![0.0; resources.len()];
    for (r, resource) in resources.iter().enumerate() {
        let field = format!("{field}.{}", resource.name);
        match (map.get(&resource.name), wanted(resource)) {
            (Some(&v), true) => {
                check_quantity(&field, v)?;
                out[r] = v;
            }
            (None, true) => return Err(Invalid(format!("{field} is missing"))),
            (Some(_), false) => {
                return Err(Invalid(format!(
                    "{field}: this resource has no virtual size, leave it out"
                )))
            }
            (None, false) => {}
        }
    }
    Ok(out)
}

impl NodeSpec {
    /// The supply in the configured order, checked.
    pub fn check(&self, resources: &[Resource]) -> Result<Vec<f64>, Invalid> {
        if !(self.speed.is_finite() && self.speed > 0.0 && self.speed <= 1000.0) {
            return Err(Invalid(format!(
                "speed must be a number in (0, 1000], found {}",
                self.speed
            )));
        }
        let supply = per_resource("supply", &self.supply, resources, |_| true)?;
        match supply.iter().position(|&s| s < MIN_SUPPLY) {
            Some(r) => Err(Invalid(format!(
                "supply.{} must be at least {MIN_SUPPLY} (a smaller supply cannot give a finite \
                 heaviness), found {:?}",
                resources[r].name, supply[r]
            ))),
            None => Ok(supply),
        }
    }
}

impl UserSpec {
    /// The quota in the configured order (zero for resources without a virtual size), checked.
    pub fn check(&self, resources: &[Resource]) -> Result<Option<Vec<f64>>, Invalid> {
        let Some(quota) = &self.quota else {
            return Ok(None);
        };
        per_resource("quota", quota, resources, |r| r.kind.has_virtual()).map(Some)
    }
}

impl WorkloadSpec {
    /// The virtual size in the configured order, checked (references are checked by the store):
    /// every size positive, since a workload's endowment of a resource is its node's supply
    /// shared in proportion to the sizes, and a size of 0 would leave it none.
    pub fn check(&self, resources: &[Resource]) -> Result<Vec<f64>, Invalid> {
        check_id("owner", &self.owner)?;
        check_id("node", &self.node)?;
        let size = per_resource("virtual", &self.size, resources, |r| r.kind.has_virtual())?;
        let empty = resources
            .iter()
            .zip(&size)
            .find(|(r, &v)| r.kind.has_virtual() && v <= 0.0);
        match empty {
            Some((r, v)) => Err(Invalid(format!(
                "virtual.{} must be positive: a workload's endowment is its node's supply shared \
                 in proportion to the virtual sizes, and a size of 0 leaves it none to weigh its \
                 use against; found {v}",
                r.name
            ))),
            None => Ok(size),
        }
    }
}

impl UsageReport {
    /// Checks the report's own fields; that its workloads exist on its node, and that no rate
    /// exceeds the node's supply absurdly, the store checks against the registry.
    pub fn check(&self, resources: &[Resource]) -> Result<Vec<Vec<f64>>, Invalid> {
        check_id("node", &self.node)?;
        if self.seq > i64::MAX as u64 {
            return Err(Invalid(format!(
                "seq must be at most {}, found {}",
                i64::MAX,
                self.seq
            )));
        }
        if !(MIN_INTERVAL_S..=MAX_INTERVAL_S).contains(&self.interval_s) {
            return Err(Invalid(format!(
                "interval_s must be a number in [{MIN_INTERVAL_S}, {MAX_INTERVAL_S}], found {}",
                self.interval_s
            )));
        }
        if self.samples.len() > MAX_SAMPLES {
            return Err(Invalid(format!(
                "samples: at most {MAX_SAMPLES} per report, found {}",
                self.samples.len()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        self.samples
            .iter()
            .enumerate()
            .map(|(i, s)| {
                check_id(&format!("samples[{i}].workload"), &s.workload)?;
                if !seen.insert(s.workload.as_str()) {
                    return Err(Invalid(format!(
                        "samples[{i}]: workload {:?} is reported twice",
                        s.workload
                    )));
                }
                per_resource(&format!("samples[{i}].usage"), &s.usage, resources, |_| {
                    true
                })
            })
            .collect::<Result<_, _>>()
            .and_then(|amounts| self.check_written().map(|()| amounts))
    }

    /// Checks the knob values written: at most [`MAX_SAMPLES`] workloads, each with at most
    /// [`MAX_KNOBS`] plain file names, each value a whole number in [0, [`MAX_KNOB_VALUE`]].
    fn check_written(&self) -> Result<(), Invalid> {
        let Some(written) = &self.written else {
            return Ok(());
        };
        if written.len() > MAX_SAMPLES {
            return Err(Invalid(format!(
                "written: at most {MAX_SAMPLES} workloads per report, found {}",
                written.len()
            )));
        }
        for (workload, knobs) in written {
            check_id("written workload", workload)?;
            if knobs.len() > MAX_KNOBS {
                return Err(Invalid(format!(
                    "written[{workload:?}]: at most {MAX_KNOBS} knobs, found {}",
                    knobs.len()
                )));
            }
            for (file, value) in knobs {
                check_knob(workload, file, value)?;
            }
        }
        Ok(())
    }

    /// Each sample's rate (per second; memory as its level), in the configured order.
    pub fn rates(&self, amounts: &[Vec<f64>], resources: &[Resource]) -> Vec<Vec<f64>> {
        amounts
            .iter()
            .map(|a| {
                a.iter()
                    .zip(resources)
                    .map(|(&x, r)| rate(r.kind, x, self.interval_s))
                    .collect()
            })
            .collect()
    }
}

/// Checks one knob written: a plain file name and a whole number in range.
fn check_knob(workload: &str, file: &str, value: &serde_json::Number) -> Result<(), String> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b == b'.' || b == b'_';
    if file.is_empty() || file.len() > MAX_KNOB_NAME || !file.bytes().all(plain) {
        return Err(format!(
            "written[{workload:?}]: knob {file:?} must be 1–{MAX_KNOB_NAME} characters of \
             letters, digits, . and _"
        ));
    }
    match value.as_u64() {
        Some(v) if v <= MAX_KNOB_VALUE => Ok(()),
        _ => Err(format!(
            "written[{workload:?}][{file:?}] must be a whole number in [0, {MAX_KNOB_VALUE}], \
             found {value}"
        )),
    }
}

/// A sample's amount as a rate: per second for everything but memory, which is a level.
pub fn rate(kind: ResourceKind, amount: f64, interval_s: f64) -> f64 {
    if kind == ResourceKind::Memory {
        amount
    } else {
        amount / interval_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resources() -> Vec<Resource> {
        vec![
            Resource::new("cpu", ResourceKind::Cpu),
            Resource::new("mem", ResourceKind::Memory),
            Resource::new("disk", ResourceKind::Disk),
        ]
    }

    fn map(pairs: &[(&str, f64)]) -> PerResource {
        pairs.iter().map(|&(k, v)| (k.to_string(), v)).collect()
    }

    #[test]
    fn a_node_needs_every_resource_positive() {
        let r = resources();
        let node = |s: PerResource, speed| NodeSpec { supply: s, speed };
        let full = map(&[("cpu", 8.0), ("mem", 1e9), ("disk", 1e8)]);
        assert_eq!(node(full.clone(), 1.0).check(&r), Ok(vec![8.0, 1e9, 1e8]));
        let e = node(map(&[("cpu", 8.0), ("mem", 1e9)]), 1.0).check(&r);
        assert_eq!(e, Err("supply.disk is missing".into()));
        let e = node(map(&[("cpu", 8.0), ("mem", 1e9), ("disk", 0.0)]), 1.0).check(&r);
        assert!(e
            .unwrap_err()
            .contains("supply.disk must be at least 0.001"));
        let e = node(map(&[("cpu", 1e-300), ("mem", 1e9), ("disk", 1e8)]), 1.0).check(&r);
        assert!(e.unwrap_err().contains("found 1e-300"));
        let mut gpu = full.clone();
        gpu.insert("gpu".into(), 1.0);
        assert!(node(gpu, 1.0)
            .check(&r)
            .unwrap_err()
            .contains("unknown resource \"gpu\""));
        assert!(node(full.clone(), 0.0)
            .check(&r)
            .unwrap_err()
            .contains("speed"));
        let mut neg = full;
        neg.insert("cpu".into(), -1.0);
        assert!(node(neg, 1.0)
            .check(&r)
            .unwrap_err()
            .contains("supply.cpu must be"));
    }

    #[test]
    fn virtual_sizes_cover_exactly_the_virtual_resources() {
        let r = resources();
        let w = |size| WorkloadSpec {
            owner: "alice".into(),
            node: "n1".into(),
            size,
        };
        assert_eq!(
            w(map(&[("cpu", 2.0), ("mem", 4e9)])).check(&r),
            Ok(vec![2.0, 4e9, 0.0])
        );
        assert!(w(map(&[("cpu", 2.0)]))
            .check(&r)
            .unwrap_err()
            .contains("virtual.mem is missing"));
        let e = w(map(&[("cpu", 2.0), ("mem", 4e9), ("disk", 1.0)])).check(&r);
        assert!(e.unwrap_err().contains("no virtual size"));
    }

    #[test]
    fn a_report_is_checked_field_by_field_and_rates_divide_by_the_interval() {
        let r = resources();
        let sample = |w: &str, cpu| Sample {
            workload: w.into(),
            usage: map(&[("cpu", cpu), ("mem", 2e9), ("disk", 5e6)]),
        };
        let mut report = UsageReport {
            node: "n1".into(),
            seq: 42,
            interval_s: 10.0,
            samples: vec![sample("vm1", 19.5), sample("vm2", 0.0)],
            written: None,
        };
        let amounts = report.check(&r).unwrap();
        assert_eq!(report.rates(&amounts, &r)[0], vec![1.95, 2e9, 5e5]);
        report.samples[1].workload = "vm1".into();
        assert!(report.check(&r).unwrap_err().contains("reported twice"));
        report.samples[1] = sample("vm2", f64::INFINITY);
        assert!(report
            .check(&r)
            .unwrap_err()
            .contains("samples[1].usage.cpu"));
        report.samples[1] = sample("vm 2", 1.0);
        assert!(report
            .check(&r)
            .unwrap_err()
            .contains("samples[1].workload"));
        report.samples[1] = sample("vm2", 1.0);
        report.interval_s = 0.0;
        assert!(report.check(&r).unwrap_err().contains("interval_s"));
        report.interval_s = 10.0;
        report.seq = u64::MAX;
        assert!(report.check(&r).unwrap_err().contains("seq"));
        let read = |seq: &str| {
            let text =
                format!(r#"{{"node": "n1", "seq": {seq}, "interval_s": 10, "samples": []}}"#);
            serde_json::from_str::<UsageReport>(&text).map(|r| r.seq)
        };
        assert_eq!(read("42").unwrap(), 42);
        assert_eq!(
            read("42.0").unwrap(),
            42,
            "JSON Schema's integer allows a zero fraction"
        );
        assert!(read("42.5").is_err());
        assert!(read("-1").is_err());
        assert!(read("1e30").is_err());
    }

    #[test]
    fn knob_values_written_are_whole_numbers_under_plain_names() {
        let r = resources();
        let read = |written: &str| {
            let text = format!(
                r#"{{"node": "n1", "seq": 1, "interval_s": 10, "samples": [], "written": {written}}}"#
            );
            serde_json::from_str::<UsageReport>(&text)
                .unwrap()
                .check(&r)
                .map(|_| ())
        };
        assert_eq!(
            read(r#"{"vm1": {"cpu.shares": 204472, "blkio.weight": 500}}"#),
            Ok(())
        );
        assert_eq!(
            read(r#"{"vm1": {"memory.low": 9223372036854775807}}"#),
            Ok(())
        );
        for (bad, needle) in [
            (
                r#"{"vm1": {"cpu.shares": -1}}"#,
                r#"written["vm1"]["cpu.shares"] must be"#,
            ),
            (r#"{"vm1": {"cpu.shares": 1.5}}"#, "found 1.5"),
            (
                r#"{"vm1": {"cpu.shares": 9223372036854775808}}"#,
                "found 9223",
            ),
            (r#"{"vm1": {"cpu/shares": 1}}"#, r#"knob "cpu/shares""#),
            (r#"{"vm1": {"": 1}}"#, r#"knob """#),
            (r#"{"vm 1": {}}"#, "written workload id"),
        ] {
            let e = read(bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
        let many: BTreeMap<String, u64> = (0..=MAX_KNOBS).map(|i| (format!("k{i}"), 1)).collect();
        let e = read(&format!(
            "{{\"vm1\": {}}}",
            serde_json::to_string(&many).unwrap()
        ));
        assert!(e.unwrap_err().contains("at most 16 knobs"));
        let long = "k".repeat(MAX_KNOB_NAME + 1);
        assert!(read(&format!("{{\"vm1\": {{\"{long}\": 1}}}}")).is_err());
    }

    proptest::proptest! {
        /// A report passes exactly when every amount is a finite number in range, and then
        /// every rate is finite and ≥ 0.
        #[test]
        fn reports_pass_exactly_when_every_amount_is_in_range(
            amounts in proptest::collection::vec(
                proptest::prop_oneof![
                    0.0f64..1e6,
                    proptest::num::f64::ANY,
                    proptest::strategy::Just(f64::NAN),
                    proptest::strategy::Just(-1.0),
                    proptest::strategy::Just(2e18),
                ],
                3..=3,
            ),
            interval in proptest::prop_oneof![0.001f64..86400.0, proptest::num::f64::ANY],
        ) {
            let r = resources();
            let report = UsageReport {
                node: "n1".into(),
                seq: 1,
                interval_s: interval,
                samples: vec![Sample {
                    workload: "w".into(),
                    usage: map(&[("cpu", amounts[0]), ("mem", amounts[1]), ("disk", amounts[2])]),
                }],
                written: None,
            };
            let in_range = |v: f64| v.is_finite() && (0.0..=MAX_QUANTITY).contains(&v);
            let valid = amounts.iter().all(|&v| in_range(v))
                && (MIN_INTERVAL_S..=MAX_INTERVAL_S).contains(&interval);
            match report.check(&r) {
                Ok(a) => {
                    proptest::prop_assert!(valid);
                    let rates = report.rates(&a, &r);
                    proptest::prop_assert!(rates[0].iter().all(|x| x.is_finite() && *x >= 0.0));
                }
                Err(_) => proptest::prop_assert!(!valid),
            }
        }
    }

    #[test]
    fn ids_are_short_and_plain() {
        assert!(valid_id("vm-1.alice@n1:x_y"));
        assert!(!valid_id(""));
        assert!(!valid_id("a b"));
        assert!(!valid_id("a/b"));
        assert!(!valid_id(&"a".repeat(129)));
    }
}
