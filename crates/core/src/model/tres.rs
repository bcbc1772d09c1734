//! Slurm's TRES weights, `TYPE[/NAME]=NUMBER[UNIT]` items such as `CPU=1.0,Mem=0.25G,GRES/gpu=2`:
//! one reader for the two settings Slurm reads with one function (`slurm_get_tres_weight_array`,
//! `_tres_weight_item`), a partition's `TRESBillingWeights`, which bill a job, and
//! `PriorityWeightTRES`, which weighs its TRES in its priority. A unit divides the weight so
//! that it applies to the TRES's base unit (megabytes for memory and burst buffers, one for
//! the others): `Mem=0.25G` is 0.25 per gigabyte, 0.25/1024 per megabyte.

use crate::error::Invalid;

/// TRES weights: each TRES (lower case, `cpu`, `mem`, `gres/gpu`, `license/matlab`) with its
/// weight per base unit, in the order written (a TRES written twice keeps its last weight,
/// moved to the end).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TresWeights(Vec<(String, f64)>);

impl std::str::FromStr for TresWeights {
    type Err = Invalid;

    /// `CPU=1.0,Mem=0.25G,GRES/gpu=2.0`, as slurm.conf and `scontrol show partition` write
    /// them.
    fn from_str(text: &str) -> Result<TresWeights, Invalid> {
        let mut weights = Vec::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (tres, value) = item
                .split_once('=')
                .filter(|(t, v)| !t.is_empty() && !v.is_empty())
                .ok_or_else(|| format!("a TRES weight is TYPE[/NAME]=NUMBER, found {item:?}"))?;
            let tres = tres_name(tres);
            let weight = weight(&tres, value)?;
            weights.retain(|(t, _): &(String, f64)| *t != tres);
            weights.push((tres, weight));
        }
        Ok(TresWeights(weights))
    }
}

impl TresWeights {
    /// Each TRES with its weight, in the order written.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.0.iter().map(|(tres, weight)| (tres.as_str(), *weight))
    }

    /// The weight of `tres` (lower case), when it has one.
    pub fn get(&self, tres: &str) -> Option<f64> {
        self.iter().find(|(t, _)| *t == tres).map(|(_, w)| w)
    }
}

/// A TRES's name as it is keyed: in lower case, as Slurm compares them without case
/// (`GRES/GPU` is `gres/gpu`).
pub fn tres_name(written: &str) -> String {
    written.to_ascii_lowercase()
}

/// The type of a TRES (`bb` of `bb/datawarp`).
pub fn tres_type(tres: &str) -> &str {
    tres.split('/').next().unwrap_or(tres)
}

/// The weight `value` of `tres` per its base unit: `0.25G` for memory is 0.25/1024 per MB. As
/// Slurm reads it (`strtod`, then the unit's first letter): the longest number at the start,
/// exponents included, then a unit whose first letter counts (`0.25GB` is `0.25G`).
fn weight(tres: &str, value: &str) -> Result<f64, String> {
    let number = (1..=value.len())
        .rev()
        .filter(|&end| value.is_char_boundary(end))
        .find_map(|end| Some((value[..end].parse::<f64>().ok()?, &value[end..])));
    let (number, unit) = number
        .filter(|(w, _)| w.is_finite() && *w >= 0.0)
        .ok_or_else(|| format!("the weight of {tres} must be a number >= 0, found {value:?}"))?;
    let power = match unit.chars().next().map(|c| c.to_ascii_uppercase()) {
        None => return Ok(number),
        Some('K') => 1,
        Some('M') => 2,
        Some('G') => 3,
        Some('T') => 4,
        Some('P') => 5,
        Some(_) => {
            return Err(format!(
                "the weight of {tres} has unit {unit:?}: expected K, M, G, T or P"
            ))
        }
    };
    let base = if matches!(tres_type(tres), "mem" | "bb") {
        2
    } else {
        0
    };
    // As Slurm: a unit at or below the base unit leaves the weight as it is.
    Ok(number / 1024f64.powi((power - base).max(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_read_in_base_units_as_slurm_reads_them() {
        let w: TresWeights = "GRES/gpu=1K,Mem=3M,license/x=2".parse().unwrap();
        let read: Vec<(&str, f64)> = w.iter().collect();
        assert_eq!(
            read,
            [("gres/gpu", 1.0 / 1024.0), ("mem", 3.0), ("license/x", 2.0)]
        );
        assert_eq!(w.get("mem"), Some(3.0));
        assert_eq!(w.get("cpu"), None);
        for bad in ["CPU", "CPU=", "CPU=-1", "Mem=1Q", "=2", "CPU=G"] {
            assert!(bad.parse::<TresWeights>().is_err(), "{bad}");
        }
        // As Slurm's strtod and first unit letter read them, names compared without case.
        let w: TresWeights = "Mem=0.25GB,CPU=1e-1,GRES/GPU=2,BB/datawarp=1G,cpu=3"
            .parse()
            .unwrap();
        let read: Vec<(&str, f64)> = w.iter().collect();
        assert_eq!(
            read,
            [
                ("mem", 0.25 / 1024.0),
                ("gres/gpu", 2.0),
                ("bb/datawarp", 1.0 / 1024.0),
                ("cpu", 3.0)
            ]
        );
    }
}
