//! Slurm's TRES lists (`cpu=4,mem=16G,node=1,gres/gpu=2`): one grammar for sacct's
//! `AllocTRES` and `ReqTRES` and for the limits of Slurm's associations and QOS, so that every
//! reader counts them the same way.

use crate::parse_size;

/// sacct's `AllocTRES`, such as `cpu=4,mem=16G,node=1,billing=4,gres/gpu=2`, as
/// `[processors, KB, GPUs]` and the nodes (`None` when `node=` is absent or 0); other TRES are
/// ignored, an empty text is nothing allocated. The error says what was expected. Public so
/// that `fairshare-slurm`'s reader of `sacct` takes AllocTRES exactly as this reader does.
pub fn alloc_tres(text: &str) -> Result<(Vec<f64>, Option<u32>), &'static str> {
    let mut demand = vec![0.0; 3];
    let mut nodes = None;
    for (tres, amount) in tres_amounts(text)? {
        match tres {
            Tres::Cpu => demand[0] = amount,
            Tres::Mem => demand[1] = amount,
            Tres::Gpu => demand[2] = amount,
            Tres::Node => nodes = Some(amount as u32).filter(|n| *n > 0),
            Tres::Other(_) => {}
        }
    }
    Ok((demand, nodes))
}

/// One kind of Slurm TRES, as a replay counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tres {
    /// Processors (`cpu`).
    Cpu,
    /// Memory (`mem`), in KB.
    Mem,
    /// GPUs (`gres/gpu`).
    Gpu,
    /// Nodes (`node`).
    Node,
    /// Any other, by its name (`billing`, `gres/mps`, `license/x`).
    Other(String),
}

/// The amounts of a TRES list such as `cpu=4,mem=16G,node=1,gres/gpu=2` (Slurm's AllocTRES,
/// GrpTRES, MaxTRESPU, …), in order: memory in KB (`16G`, `3900M`; a bare number is MiB, as
/// Slurm writes it), nodes a whole number, the others numbers >= 0. The error says what was
/// expected.
pub fn tres_amounts(text: &str) -> Result<Vec<(Tres, f64)>, &'static str> {
    let mut amounts = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (key, value) = item
            .split_once('=')
            .ok_or("TRES as key=value pairs, such as cpu=4,mem=16G")?;
        let number = || {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or("TRES amounts that are numbers >= 0")
        };
        amounts.push(match key {
            "cpu" => (Tres::Cpu, number()?),
            "mem" => {
                let bare = value.parse::<f64>().is_ok();
                let size = if bare {
                    format!("{value}M")
                } else {
                    value.to_owned()
                };
                let bytes = parse_size(&size).map_err(|_| "a memory size such as 16G or 3900M")?;
                (Tres::Mem, bytes / 1024.0)
            }
            "gres/gpu" => (Tres::Gpu, number()?),
            "node" => {
                let n = value
                    .parse::<u32>()
                    .map_err(|_| "a whole number of nodes")?;
                (Tres::Node, f64::from(n))
            }
            other => (Tres::Other(other.to_owned()), number().unwrap_or(0.0)),
        });
    }
    Ok(amounts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_tres_reads_cpus_memory_gpus_and_nodes() {
        let (demand, nodes) = alloc_tres("billing=8,cpu=8,gres/gpu=2,mem=16G,node=2").unwrap();
        assert_eq!(demand, vec![8.0, 16.0 * 1024.0 * 1024.0, 2.0]);
        assert_eq!(nodes, Some(2));
        let (demand, nodes) = alloc_tres("cpu=1,mem=3900M").unwrap();
        assert_eq!(demand, vec![1.0, 3900.0 * 1024.0, 0.0]);
        assert_eq!(nodes, None);
        assert_eq!(alloc_tres("mem=2048").unwrap().0[1], 2048.0 * 1024.0);
        assert_eq!(alloc_tres("").unwrap().0, vec![0.0; 3]);
        assert!(alloc_tres("cpu").is_err());
        assert!(alloc_tres("cpu=-1").is_err());
        assert!(alloc_tres("mem=12Q").is_err());
        assert!(alloc_tres("node=2.5").is_err());
        assert!(alloc_tres("node=99999999999").is_err());
    }
}
