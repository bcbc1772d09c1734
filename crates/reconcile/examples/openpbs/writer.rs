//! The writer: `qalter -p PRIORITY JOB…` gives jobs a `Priority` (OpenPBS holds it in
//! [-1024, 1023]; the scheduler orders by it under `job_sort_key: "job_priority HIGH"`).

use crate::jobs::PbsId;
use fairshare_reconcile::command::{CommandError, Commands};
use fairshare_reconcile::writes::Write;

/// Gives the jobs of `write` its priority, through `commands`.
pub fn qalter(commands: &impl Commands, write: &Write<PbsId>) -> Result<(), CommandError> {
    let ids: Vec<String> = write.jobs.iter().map(PbsId::to_string).collect();
    let priority = write.factor.to_string();
    let line = ["qalter", "-p", &priority].into_iter();
    commands.run(
        &line
            .chain(ids.iter().map(String::as_str))
            .collect::<Vec<_>>(),
    )?;
    Ok(())
}
