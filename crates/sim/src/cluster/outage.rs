//! Nodes a site took from its jobs for a while. No month of a production site keeps every
//! node up: nodes are drained for maintenance, go down and fail, and reservations keep nodes
//! for their own jobs or for nobody's. A replay that kept them all up would start jobs where
//! the record could not.

use fairshare_core::model::Time;

/// A span during which some nodes take no new job.
#[derive(Debug, Clone, PartialEq)]
pub struct Outage {
    /// What it was, for the results (`n05 DRAIN: maintenance`, `reservation maint`).
    pub name: String,
    /// Its nodes, by host name, as the run's machines name them.
    pub hosts: Vec<String>,
    /// When it begins.
    pub from: Time,
    /// When it ends; `None`: not within the run.
    pub to: Option<Time>,
    /// Whether the site announced it before it began (a reservation): from then on no job may
    /// start on its nodes if it could still run when it begins, and no plan crosses it.
    /// Otherwise (a node drained, down or failing) it comes unannounced, the jobs running on
    /// its nodes run on, and while it lasts no plan counts on the nodes coming back.
    pub announced: bool,
}
