//! A site's machines as a TOML catalogue: what `.machines` files and node lists cannot say —
//! GPUs, scratch, SPEC speed, node cost, properties — for pricing jobs on a heterogeneous
//! cluster (MetaCentrum's Processor Equivalent) and placing them.
//!
//! ```toml
//! [[machine]]
//! name = "zewura"          # a type of node
//! count = 20               # how many such nodes
//! cpus = 80
//! memory = "505GiB"        # sizes: K, M, G, T are powers of 1024 (a bare number is bytes)
//! gpus = 0                 # optional, default 0
//! scratch = "1TiB"         # optional, default 0
//! spec = 8.5               # optional SPEC per processor, default 1
//! cost = 1.0               # optional node cost, default 1
//! properties = ["x86_64"]  # optional; NAME and cl_NAME are always added
//! ```
//!
//! A catalogue's resources are `[cpu, memory (KB), gpu, scratch (KB)]`, memory and scratch in
//! KB as SWF's `.machines` files give memory.

use crate::TraceError;
use fairshare_core::error::Invalid;
use fairshare_core::model::{MachineCatalogue, NodeType};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The resources of a catalogue, in order, with their units.
pub const CATALOGUE_RESOURCES: [&str; 4] = ["cpu", "memory (KB)", "gpu", "scratch (KB)"];

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    machine: Vec<Machine>,
}

/// One `[[machine]]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Machine {
    name: String,
    count: u32,
    cpus: f64,
    memory: Size,
    #[serde(default)]
    gpus: f64,
    #[serde(default)]
    scratch: Option<Size>,
    #[serde(default = "one")]
    spec: f64,
    #[serde(default = "one")]
    cost: f64,
    #[serde(default)]
    properties: Vec<String>,
}

/// A size: a number of bytes, or text with a unit.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Size {
    Bytes(f64),
    Text(String),
}

fn one() -> f64 {
    1.0
}

/// Reads a machine catalogue.
pub fn read_catalogue(path: &Path) -> Result<MachineCatalogue, TraceError> {
    let bad = |message: String| TraceError::Catalogue {
        path: PathBuf::from(path),
        message: message.trim_end().to_owned(),
    };
    let text = std::fs::read_to_string(path).map_err(|error| TraceError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let file: File = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if file.machine.is_empty() {
        return Err(bad("no [[machine]] listed".into()));
    }
    let types = file
        .machine
        .iter()
        .map(node_type)
        .collect::<Result<_, String>>();
    Ok(MachineCatalogue::new(types.map_err(bad)?))
}

/// One machine's node type.
fn node_type(m: &Machine) -> Result<NodeType, String> {
    let whose = |what: &str| format!("machine {:?}: {what}", m.name);
    let amount = |value: f64, what: &str| {
        if value.is_finite() && value >= 0.0 {
            Ok(value)
        } else {
            Err(whose(&format!(
                "{what} must be a number >= 0, found {value}"
            )))
        }
    };
    let kb = |size: &Size, what: &str| {
        let bytes = match size {
            Size::Bytes(b) => *b,
            Size::Text(t) => parse_size(t).map_err(|e| whose(&format!("{what}: {e}")))?,
        };
        amount(bytes, what).map(|b| b / 1024.0)
    };
    let capacity = vec![
        amount(m.cpus, "cpus")?,
        kb(&m.memory, "memory")?,
        amount(m.gpus, "gpus")?,
        m.scratch.as_ref().map_or(Ok(0.0), |s| kb(s, "scratch"))?,
    ];
    let mut node = NodeType::new(m.name.clone(), m.count, capacity);
    if !(m.spec.is_finite() && m.spec > 0.0) {
        return Err(whose(&format!(
            "spec must be a number > 0, found {}",
            m.spec
        )));
    }
    node.spec = m.spec;
    node.cost = amount(m.cost, "cost")?;
    node.properties = vec![m.name.clone(), format!("cl_{}", m.name)];
    node.properties.extend(m.properties.iter().cloned());
    Ok(node)
}

/// A size such as `64GiB`, `512M`, `1.5TB` or `1048576`, in bytes; K, M, G and T are powers
/// of 1024, with or without `i` and `B`, as PBS reads them.
pub fn parse_size(text: &str) -> Result<f64, Invalid> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let amount: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("expected a size such as 64GiB, 512MiB or 4096, found {text:?}"))?;
    let power = match unit
        .to_ascii_lowercase()
        .trim_end_matches('b')
        .trim_end_matches('i')
    {
        "" => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        _ => {
            return Err(Invalid(format!(
                "unknown unit {unit:?} in {text:?}: use K, M, G or T (KiB, MiB, GiB, TiB)"
            )))
        }
    };
    let bytes = amount * 1024f64.powi(power);
    if bytes.is_finite() && bytes >= 0.0 {
        Ok(bytes)
    } else {
        Err(Invalid(format!("expected a size >= 0, found {text:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<MachineCatalogue, TraceError> {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("cluster.toml");
        std::fs::write(&path, text).unwrap();
        read_catalogue(&path)
    }

    #[test]
    fn machines_with_gpus_scratch_and_spec() {
        let catalogue = read(
            "[[machine]]\nname = \"zewura\"\ncount = 20\ncpus = 80\nmemory = \"512GiB\"\nspec = 8.5\nproperties = [\"x86_64\"]\n\n[[machine]]\nname = \"g\"\ncount = 2\ncpus = 32\nmemory = 274877906944\ngpus = 4\nscratch = \"1T\"\ncost = 2\n",
        )
        .unwrap();
        let zewura = &catalogue.types[0];
        assert_eq!(zewura.capacity, [80.0, 512.0 * 1024.0 * 1024.0, 0.0, 0.0]);
        assert_eq!((zewura.spec, zewura.cost), (8.5, 1.0));
        assert_eq!(zewura.properties, ["zewura", "cl_zewura", "x86_64"]);
        let g = &catalogue.types[1];
        assert_eq!(
            g.capacity,
            [32.0, 256.0 * 1024.0 * 1024.0, 4.0, 1024f64.powi(3)]
        );
        assert_eq!((g.spec, g.cost), (1.0, 2.0));
    }

    #[test]
    fn bad_catalogues_say_what_is_wrong() {
        let said = |text: &str| read(text).unwrap_err().to_string();
        assert!(said("").contains("no [[machine]] listed"));
        assert!(said("[[machine]]\nname = \"a\"\ncount = 1\ncpus = 4\n").contains("memory"));
        assert!(
            said("[[machine]]\nname = \"a\"\ncount = 1\ncpus = 4\nmemory = \"8 parsecs\"\n")
                .contains("machine \"a\": memory: unknown unit")
        );
        assert!(
            said("[[machine]]\nname = \"a\"\ncount = 1\ncpus = -4\nmemory = 1\n")
                .contains("cpus must be a number >= 0")
        );
        assert!(
            said("[[machine]]\nname = \"a\"\ncount = 1\ncpus = 4\nmemory = 1\nspec = 0\n")
                .contains("spec must be a number > 0")
        );
        assert!(
            said("[[machine]]\nname = \"a\"\ncount = 1\ncpus = 4\nmemory = 1\nspeed = 2\n")
                .contains("unknown field")
        );
    }

    #[test]
    fn sizes_in_binary_units() {
        assert_eq!(parse_size("64GiB"), Ok(64.0 * 1024f64.powi(3)));
        assert_eq!(parse_size("64gb"), Ok(64.0 * 1024f64.powi(3)));
        assert_eq!(parse_size("1.5T"), Ok(1.5 * 1024f64.powi(4)));
        assert_eq!(parse_size("4096"), Ok(4096.0));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5 parsecs")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_size("-1G").is_err());
    }
}
