//! Allocators: turning one priority per client into resources.
//!
//! [`divisible`] solves the continuous problem exactly (water-filling); [`tasks`] places
//! indivisible tasks one at a time by progressive filling (SDRF's Algorithm 1). Both read
//! priorities through [`crate::priority::Policy`], so every policy works with both. [`baa`]
//! divides resources by bottleneck sets instead of priorities.

pub mod baa;
pub mod divisible;
pub mod tasks;
pub mod weighted;

use thiserror::Error;

/// An allocation instance that cannot be solved as given.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum AllocError {
    /// A vector has the wrong length.
    #[error("client {client}: {field} has {found} components, expected {expected}")]
    WrongLength {
        /// Position of the client.
        client: usize,
        /// Which vector.
        field: &'static str,
        /// Components found.
        found: usize,
        /// Components expected (one per resource).
        expected: usize,
    },
    /// A component is negative or not finite.
    #[error(
        "client {client}: {field}[{resource}] must be a finite non-negative number, found {value}"
    )]
    BadValue {
        /// Position of the client.
        client: usize,
        /// Which vector.
        field: &'static str,
        /// Position of the resource.
        resource: usize,
        /// The offending value.
        value: f64,
    },
    /// A weight is zero, negative or not finite.
    #[error("client {client}: weight must be a positive finite number, found {value}")]
    BadWeight {
        /// Position of the client.
        client: usize,
        /// The offending value.
        value: f64,
    },
    /// Progressive filling would never end or would place an unreasonable number of tasks.
    #[error("client {client}: {reason}")]
    Unbounded {
        /// Position of the client.
        client: usize,
        /// Why.
        reason: String,
    },
}

impl AllocError {
    /// The position of the client the error is about.
    pub fn client(&self) -> usize {
        match self {
            AllocError::WrongLength { client, .. }
            | AllocError::BadValue { client, .. }
            | AllocError::BadWeight { client, .. }
            | AllocError::Unbounded { client, .. } => *client,
        }
    }
}

fn check_vector(
    client: usize,
    field: &'static str,
    v: &[f64],
    expected: usize,
) -> Result<(), AllocError> {
    if v.len() != expected {
        return Err(AllocError::WrongLength {
            client,
            field,
            found: v.len(),
            expected,
        });
    }
    match v.iter().position(|x| !(x.is_finite() && *x >= 0.0)) {
        Some(resource) => Err(AllocError::BadValue {
            client,
            field,
            resource,
            value: v[resource],
        }),
        None => Ok(()),
    }
}

fn check_weight(client: usize, value: f64) -> Result<(), AllocError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(AllocError::BadWeight { client, value })
    }
}
