//! What users submit: tasks as traces record them, and the job requests of batch systems.
//!
//! A [`Task`] is one unit of work as a trace reader yields it and as the cluster engine
//! replays it: who, when, for how long, and how much of each resource. A [`JobRequest`] is
//! what a batch system is asked for: one or more chunks of nodes with a demand per node,
//! perhaps whole nodes, a walltime, a queue, a partition and an account. Readers fill in what
//! their format records; the rest stays `None`.

use super::Time;
use serde::Serialize;

/// One task: who submitted it, when, how long it ran and what it asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Task {
    /// Unique within its trace; what it is depends on the format (see each reader).
    pub id: u64,
    /// The submitting user or tenant: an index into the source's user names.
    pub user: u32,
    /// When the task was submitted.
    pub submit: Time,
    /// When it started in the original trace, if known.
    pub start: Option<Time>,
    /// How long it ran, in microseconds.
    pub runtime: u64,
    /// What it asked for, one amount per resource of its source, in the source's units.
    pub demand: Vec<f64>,
    /// The walltime the user requested, in microseconds, when the trace records one (SWF
    /// field 9).
    pub walltime: Option<u64>,
    /// The queue it was submitted to: an index into the source's queue names (SWF field 15,
    /// or the queue name of the Alea extension).
    pub queue: Option<u32>,
    /// The partition it ran in: an index into the source's partition names (SWF field 16).
    pub partition: Option<u32>,
    /// Its quality of service: an index into the source's QOS names (Slurm dumps).
    pub qos: Option<u32>,
    /// How many nodes it spans, its demand split evenly over them; `None` when the trace gives
    /// only a processor count, so any nodes with enough free processors may hold it.
    pub nodes: Option<u32>,
    /// Whether it takes its nodes whole, sharing them with nobody.
    pub exclusive: bool,
    /// Node properties it requires (architecture, cluster name, …).
    pub properties: Vec<String>,
    /// Whether it was still running when the log was taken: `runtime` then lasts until that
    /// moment, and the job has not ended (Slurm dumps).
    pub running: bool,
    /// When its owner cancelled it while it waited, as the log records (Slurm dumps): it never
    /// ran there (`start` is `None`, `runtime` 0), so a replay withdraws it then if it still
    /// waits, and ends it then, at the latest, if the replay started it.
    pub cancelled: Option<Time>,
    /// Whether the log records that it failed (SWF's status 0; the other readers leave it
    /// `false`). A failed job that ran up to its walltime was most likely killed by it.
    pub failed: bool,
    /// What Slurm charges it per second of running, in billing units: its billable TRES
    /// (the partition's `TRESBillingWeights` over what it was allocated, or its processors
    /// where the partition has none) times its QOS's `UsageFactor`; `None` where the log does
    /// not say (the `billing` usage metric then charges its processors, as Slurm does without
    /// weights).
    pub billing: Option<f64>,
    /// For a trace whose jobs hold several tasks (Google's): the job's own id in the trace and
    /// this task's index within it, which join the task back to the trace's other tables.
    pub job_part: Option<(u64, u64)>,
    /// The nodes it ran on in the log, by host name, when the log says (a Slurm dump's
    /// `NodeList`): where a replay that must start it as it started puts it.
    pub hosts: Vec<String>,
    /// What the log records of it that a replay does not model, when it records something:
    /// a replay then starts it where and when the log started it, and leaves it out of every
    /// count and wait.
    pub pinned: Option<Pin>,
}

/// What a log records of a job that a replay does not model, so that it starts the job as the
/// log started it rather than guess.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Pin {
    /// It ran in a reservation (Slurm's `Reservation`): only its own nodes over its own span.
    Reservation,
    /// It waited for other jobs (`--dependency`): when it could start depends on when they
    /// ended in the log, not in a replay.
    Dependency,
    /// It was requeued or preempted (Slurm's `REQUEUED`, `PREEMPTED`): the log keeps only its
    /// last run.
    Requeued,
}

impl Pin {
    /// Every kind, in order.
    pub const ALL: [Pin; 3] = [Pin::Reservation, Pin::Dependency, Pin::Requeued];

    /// What it says of a job, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Pin::Reservation => "ran in a reservation",
            Pin::Dependency => "waited for other jobs (a dependency)",
            Pin::Requeued => "was requeued or preempted",
        }
    }
}

impl Task {
    /// A task of `user` submitted at `submit`, running `runtime` microseconds with `demand` on
    /// one node, with no recorded start, walltime, queue, partition or property.
    pub fn new(id: u64, user: u32, submit: Time, runtime: u64, demand: Vec<f64>) -> Task {
        Task {
            id,
            user,
            submit,
            start: None,
            runtime,
            demand,
            walltime: None,
            queue: None,
            partition: None,
            qos: None,
            nodes: Some(1),
            exclusive: false,
            properties: Vec::new(),
            running: false,
            cancelled: None,
            failed: false,
            billing: None,
            job_part: None,
            hosts: Vec::new(),
            pinned: None,
        }
    }
}

/// Nodes of one shape within a job request: `nodes` nodes, each giving `per_node`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chunk {
    /// How many nodes of this shape.
    pub nodes: u32,
    /// The demand on each of those nodes, one amount per resource.
    pub per_node: Vec<f64>,
    /// Node properties the chunk requires (architecture, cluster name, …).
    pub properties: Vec<String>,
}

/// What a batch system is asked for by one job.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobRequest {
    /// The submitting user: an index into the source's user names.
    pub user: u32,
    /// The chunks of nodes the job needs, all at once.
    pub chunks: Vec<Chunk>,
    /// Whether the job takes its nodes whole, sharing them with nobody.
    pub exclusive: bool,
    /// Requested walltime, in microseconds, when known.
    pub walltime: Option<u64>,
    /// Queue, as an index into the source's queue names.
    pub queue: Option<u32>,
    /// Partition, as an index into the source's partition names.
    pub partition: Option<u32>,
    /// The account charged: an index into an [`AccountTree`](super::AccountTree).
    pub account: Option<usize>,
}

impl JobRequest {
    /// The request a task makes: its demand split evenly over its nodes (one node when the
    /// trace gives none), with its exclusivity, properties, walltime, queue and partition and
    /// no account.
    pub fn of_task(task: &Task) -> JobRequest {
        let nodes = task.nodes.unwrap_or(1).max(1);
        JobRequest {
            user: task.user,
            chunks: vec![Chunk {
                nodes,
                per_node: task.demand.iter().map(|d| d / f64::from(nodes)).collect(),
                properties: task.properties.clone(),
            }],
            exclusive: task.exclusive,
            walltime: task.walltime,
            queue: task.queue,
            partition: task.partition,
            account: None,
        }
    }

    /// The whole demand: each chunk's per-node demand times its node count, summed.
    pub fn total(&self) -> Vec<f64> {
        let resources = self
            .chunks
            .iter()
            .map(|c| c.per_node.len())
            .max()
            .unwrap_or(0);
        let mut total = vec![0.0; resources];
        for chunk in &self.chunks {
            for (t, d) in total.iter_mut().zip(&chunk.per_node) {
                *t += f64::from(chunk.nodes) * d;
            }
        }
        total
    }

    /// How many nodes the request spans.
    pub fn nodes(&self) -> u64 {
        self.chunks.iter().map(|c| u64::from(c.nodes)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_a_one_node_request() {
        let mut task = Task::new(7, 2, Time::from_micros(5), 60, vec![4.0, 8.0]);
        task.walltime = Some(120);
        let request = JobRequest::of_task(&task);
        assert_eq!(request.nodes(), 1);
        assert_eq!(request.total(), vec![4.0, 8.0]);
        assert_eq!(request.walltime, Some(120));
        assert_eq!(request.user, 2);
    }

    #[test]
    fn a_parallel_task_splits_its_demand_over_its_nodes() {
        let mut task = Task::new(7, 2, Time::ZERO, 60, vec![8.0, 32.0]);
        task.nodes = Some(4);
        task.exclusive = true;
        task.properties = vec!["cl_zewura".into()];
        let request = JobRequest::of_task(&task);
        assert_eq!(request.chunks[0].per_node, vec![2.0, 8.0]);
        assert_eq!(request.nodes(), 4);
        assert_eq!(request.total(), vec![8.0, 32.0]);
        assert!(request.exclusive);
        assert_eq!(request.chunks[0].properties, task.properties);
    }

    #[test]
    fn chunks_add_up() {
        let request = JobRequest {
            chunks: vec![
                Chunk {
                    nodes: 2,
                    per_node: vec![8.0, 16.0],
                    properties: vec!["x86_64".into()],
                },
                Chunk {
                    nodes: 1,
                    per_node: vec![1.0, 2.0],
                    properties: Vec::new(),
                },
            ],
            exclusive: true,
            ..JobRequest::of_task(&Task::new(0, 0, Time::ZERO, 1, vec![0.0, 0.0]))
        };
        assert_eq!(request.nodes(), 3);
        assert_eq!(request.total(), vec![17.0, 34.0]);
    }
}
