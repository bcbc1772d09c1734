//! The adapter's configuration file (`slurm.toml`), as the reconcile core defines it
//! ([`fairshare_reconcile::slurm_config`]), where a what-if reads a bundle's `adapter.toml` too.

pub use fairshare_reconcile::slurm_config::*;
