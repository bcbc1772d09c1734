//! Slurm's TRES billing: the sum of each resource's amount times its weight, weights in the
//! order of the resources (missing ones weigh 0), written `tres:W+W+…`.

use super::{MetricEntry, Params, ParamsEntry, MOST_TRES};
use crate::error::Invalid;

/// Slurm's TRES billing.
pub const TRES: MetricEntry = MetricEntry {
    name: "tres",
    params: Some(ParamsEntry {
        written: "W+W+…",
        parse: weights,
        show,
        check,
    }),
    about: "Slurm's TRES billing: the sum of each resource's amount times its weight",
    rate: |weights, task, _, _| Ok(task.demand.iter().zip(weights).map(|(a, w)| a * w).sum()),
    needs_machines: false,
    uses_spec: false,
    on_a_pool: None,
};

/// `W+W+…`: at most [`MOST_TRES`] weights, each a number >= 0.
fn weights(text: &str) -> Result<Params, Invalid> {
    let mut weights = [0.0; MOST_TRES];
    let given: Vec<&str> = text.split('+').collect();
    if given.len() > MOST_TRES {
        return Err(Invalid(format!(
            "TRES billing takes at most {MOST_TRES} weights, found {}",
            given.len()
        )));
    }
    for (w, g) in weights.iter_mut().zip(given) {
        *w = g
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("a TRES weight must be a number >= 0, found {g:?}"))?;
    }
    Ok(weights)
}

/// The weights up to the last that is not 0 (at least one), joined by `+`.
fn show(weights: &Params) -> String {
    let last = weights.iter().rposition(|w| *w != 0.0).map_or(1, |i| i + 1);
    let written: Vec<String> = weights[..last].iter().map(f64::to_string).collect();
    written.join("+")
}

/// Refuses weights for more resources than `resources` has: the weights go by position, so
/// one too many would weigh nothing, silently.
fn check(weights: &Params, resources: &[String]) -> Result<(), Invalid> {
    let given = weights.iter().rposition(|w| *w != 0.0).map_or(0, |i| i + 1);
    if given > resources.len() {
        return Err(Invalid(format!(
            "TRES billing weighs {given} resources, there are {} ({}): one weight per resource, in that order",
            resources.len(),
            resources.join(", ")
        )));
    }
    Ok(())
}
