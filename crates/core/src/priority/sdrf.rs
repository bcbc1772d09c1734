//! Stateful DRF (Sadok, Campista, Costa): DRF that remembers past over-use through decaying
//! commitments. The paper's Algorithm 1 and its Eq. 5 rank clients differently once commitments
//! are non-zero, so both forms are offered (docs/mechanisms.md, SDRF §6.2).

use super::{dominant_share, ClientView};
use serde::{Deserialize, Serialize};

/// How SDRF combines allocation and commitment into one priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PriorityForm {
    /// `(max_r o_r + max_r c_r) / ρ`: the water level of Eq. 5 (the default).
    #[default]
    SumOfMaxes,
    /// `max_r (o_r + c_r) / ρ`: Algorithm 1 as printed in the paper.
    MaxOfSums,
}

impl PriorityForm {
    /// The SDRF priority of a client under this form.
    pub fn priority(&self, client: &ClientView) -> f64 {
        let raw = match self {
            PriorityForm::SumOfMaxes => {
                dominant_share(client.allocation) + dominant_share(client.commitment)
            }
            PriorityForm::MaxOfSums => client
                .allocation
                .iter()
                .zip(client.commitment)
                .map(|(o, c)| o + c)
                .fold(dominant_share(client.allocation), f64::max),
        };
        raw / client.weight
    }
}
