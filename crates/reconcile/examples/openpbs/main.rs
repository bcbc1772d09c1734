//! An OpenPBS adapter, whole: what a scheduler's adapter writes on `fairshare-reconcile`.
//!
//! Its readers turn OpenPBS's outputs into the crate's neutral types ([`jobs`]: `qstat -f -F
//! json`; [`nodes`]: `pbsnodes -a -F json`; [`groups`]: the scheduler's fairshare tree,
//! `resource_group`), its writer is one command ([`writer`]: `qalter -p`), and this file is the
//! glue: the [`SchedulerIo`] that calls them, its defaults and its constructor. The
//! crate's `Controller` does the rest: the history, the plan, the writes read back; the
//! crate's `Watcher` repeats it.
//!
//! It runs here on outputs written in the shape OpenPBS 23.06 prints them (`recorded/`; no
//! PBS server runs on this machine), through a stand-in server ([`recorded`]) that applies
//! `qalter -p` to what its `qstat` prints next: `cargo run -p fairshare-reconcile --example
//! openpbs` prints one pass's order and writes; `cargo test` runs its tests.

mod groups;
mod jobs;
mod nodes;
mod read;
mod recorded;
#[cfg(test)]
mod tests;
mod writer;

use fairshare_core::model::Time;
use fairshare_reconcile::clients::Clients;
use fairshare_reconcile::command::{Commands, Counted, Unread};
use fairshare_reconcile::config::{policy, AdapterDefaults, SettingError, SharedKeys};
use fairshare_reconcile::controller::{Cluster, Controller, Jobs, PassError, SchedulerIo};
use fairshare_reconcile::job::QueuedJob;
use fairshare_reconcile::machines::Machines;
use fairshare_reconcile::pass::Words;
use fairshare_reconcile::writes::Write;
use jobs::PbsId;
use read::OutputError;
use std::path::PathBuf;

/// The OpenPBS adapter's defaults for the keys every adapter's file has.
#[derive(Debug, Clone, PartialEq)]
pub struct PbsDefaults;

impl AdapterDefaults for PbsDefaults {
    const WEIGHT: u32 = 1_000;
    const MOST_WEIGHT: (u32, &'static str) = (1_023, "OpenPBS holds a Priority in [-1024, 1023]");
    const JOBS_PER_CALL: usize = 100;
    const LOCK: &'static str = "/run/lock/fairshare-openpbs.lock";
}

/// OpenPBS's readers and writer, through its commands and its fairshare tree's file.
pub struct PbsIo<C: Commands> {
    commands: Counted<C>,
    resource_group: PathBuf,
}

impl<C: Commands> SchedulerIo for PbsIo<C> {
    type Error = PassError<OutputError>;
    type Job = PbsId;
    type Charging = ();
    const WORDS: Words = Words {
        scheduler: "OpenPBS",
        client: "user",
        accounting: "qstat -x",
        writer: "qalter",
        reader: "qstat",
        set: "-p ",
        factor: "Priority",
        priority_divisor: 1,
        new_jobs: false,
    };

    fn cluster(&mut self) -> Result<Cluster<()>, Self::Error> {
        let tree = groups::read(&self.resource_group).map_err(PassError::Read)?;
        let nodes = self.commands.read(&nodes::PBSNODES, nodes::nodes)?;
        let (clients, machines) = (Clients::new(tree)?, Machines::of(&nodes, &[])?);
        Ok(Cluster::new(clients, machines, ()))
    }

    fn jobs(&mut self, from: Time, to: Time, _: &()) -> Result<Jobs<PbsId>, Self::Error> {
        let listed = |text: &str| jobs::listed(text, from, to);
        Ok(self.commands.read(&jobs::QSTAT_X, listed)?)
    }

    fn queue(&mut self) -> Result<Vec<QueuedJob<PbsId>>, Self::Error> {
        Ok(self.commands.read(&jobs::QSTAT, jobs::queue)?)
    }

    fn write(&mut self, write: &Write<PbsId>) -> Result<(), Self::Error> {
        Ok(writer::qalter(&self.commands, write).map_err(Unread::Command)?)
    }

    fn reads(&mut self) -> u32 {
        self.commands.taken()
    }
}

/// The adapter of `config` on `commands`, its fairshare tree read from `resource_group`.
pub fn adapter<C: Commands>(
    commands: C,
    config: &SharedKeys<PbsDefaults>,
    resource_group: PathBuf,
) -> Result<Controller<PbsIo<C>>, SettingError> {
    let setup = config.setup(policy(&config.policy)?, Vec::new(), false)?;
    let commands = Counted::new(commands);
    let io = PbsIo {
        commands,
        resource_group,
    };
    Ok(Controller::new(io, setup))
}

/// One pass on the recorded outputs, its writes made: the order and the writes, as JSON.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tree = recorded::path("resource_group");
    let mut controller = adapter(recorded::Server::new(), &SharedKeys::default(), tree)?;
    let pass = controller.pass(recorded::NOW)?;
    let applied = controller.apply(&pass.plan);
    let shown = (&pass.plan.standings, &pass.plan.writes, &applied);
    println!("{}", serde_json::to_string_pretty(&shown)?);
    Ok(())
}
