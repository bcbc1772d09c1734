//! Tasks kept in memory between the first pass and the runs, in a compact form.
//!
//! A [`Task`] is built for every format (walltime, queue, partition, nodes, properties, …) and
//! takes about 150 bytes with its demand vector on the heap; most traces use few of its
//! fields. A kept trace is stored here as one fixed-size head per task, its demands side by
//! side, the job and index of tasks that are parts of jobs (Google's) beside them, and the
//! rarely set fields only for the tasks that have them: 48 bytes plus 8 per resource plus 16
//! for a Google task. Heads and demands grow in chunks of a fixed size, so keeping a
//! task never moves the ones kept before. The runs get back the very same tasks.

use crate::load::{project, RecordedRun};
use fairshare_core::model::{Pin, Task, Time};

/// The fields every task has.
struct Head {
    id: u64,
    submit: Time,
    start: Option<Time>,
    runtime: u64,
    user: u32,
    /// Index into [`Kept::rest`], or [`Head::PLAIN`] when those fields are as [`Task::new`]
    /// leaves them.
    rest: u32,
}

impl Head {
    /// The task's rarely set fields are as [`Task::new`] leaves them.
    const PLAIN: u32 = u32::MAX;
}

/// The fields of a task that many formats never set.
struct Rest {
    walltime: Option<u64>,
    queue: Option<u32>,
    partition: Option<u32>,
    qos: Option<u32>,
    nodes: Option<u32>,
    exclusive: bool,
    properties: Vec<String>,
    running: bool,
    cancelled: Option<Time>,
    failed: bool,
    billing: Option<f64>,
    hosts: Vec<String>,
    pinned: Option<Pin>,
}

impl Rest {
    /// Whether every field is as [`Task::new`] leaves it, so that the task needs no `Rest`.
    fn is_plain(&self) -> bool {
        let new = Task::new(0, 0, Time::ZERO, 0, Vec::new());
        self.walltime == new.walltime
            && self.queue == new.queue
            && self.partition == new.partition
            && self.qos == new.qos
            && self.nodes == new.nodes
            && self.exclusive == new.exclusive
            && self.properties == new.properties
            && self.running == new.running
            && self.cancelled == new.cancelled
            && self.failed == new.failed
            && self.billing == new.billing
            && self.hosts == new.hosts
            && self.pinned == new.pinned
    }
}

/// How many tasks a chunk of heads (and of demands) holds.
const TASKS_PER_CHUNK: usize = 1 << 14;

/// A sequence that grows a chunk of `chunk` values at a time: a value once pushed never moves
/// (a `Vec` doubles by copying into fresh memory, whose pages the kernel clears: a tenth of a
/// Google replay's main thread went to that).
struct Chunked<T> {
    chunk: usize,
    chunks: Vec<Vec<T>>,
}

impl<T> Chunked<T> {
    /// Empty, growing `chunk` values at a time.
    fn new(chunk: usize) -> Chunked<T> {
        Chunked {
            chunk: chunk.max(1),
            chunks: Vec::new(),
        }
    }

    /// The chunk that has room for `more` values.
    fn room(&mut self, more: usize) -> &mut Vec<T> {
        let full = |last: &Vec<T>| last.len() + more > self.chunk;
        if self.chunks.last().is_none_or(full) {
            self.chunks.push(Vec::with_capacity(self.chunk));
        }
        self.chunks.last_mut().expect("a chunk was just made")
    }

    /// Appends `value`.
    fn push(&mut self, value: T) {
        self.room(1).push(value);
    }

    /// How many values it holds (every chunk but the last is full).
    fn len(&self) -> usize {
        match self.chunks.split_last() {
            Some((last, full)) => full.len() * self.chunk + last.len(),
            None => 0,
        }
    }

    /// Every chunk, oldest first.
    fn chunks(&self) -> impl Iterator<Item = &[T]> {
        self.chunks.iter().map(Vec::as_slice)
    }

    /// Gives back the room the last chunk keeps for values that never came.
    fn shrink_to_fit(&mut self) {
        if let Some(last) = self.chunks.last_mut() {
            last.shrink_to_fit();
        }
    }
}

impl<T: Clone> Chunked<T> {
    /// Appends `values` (at most a chunk), all in one chunk.
    fn extend_from_slice(&mut self, values: &[T]) {
        self.room(values.len()).extend_from_slice(values);
    }
}

/// Tasks in the order they were pushed, each `width` amounts wide.
pub(crate) struct Kept {
    width: usize,
    heads: Chunked<Head>,
    /// Each chunk holds the demands of the tasks of the chunk of heads of the same place.
    demands: Chunked<f64>,
    /// Each task's job and index within it, when the tasks are parts of jobs (all or none).
    parts: Chunked<(u64, u64)>,
    rest: Vec<Rest>,
}

impl Kept {
    /// An empty store for tasks of `width` resources.
    pub fn new(width: usize) -> Kept {
        Kept::chunked(width, TASKS_PER_CHUNK)
    }

    /// An empty store for tasks of `width` resources, growing `tasks_per_chunk` at a time.
    fn chunked(width: usize, tasks_per_chunk: usize) -> Kept {
        Kept {
            width,
            heads: Chunked::new(tasks_per_chunk),
            demands: Chunked::new(width * tasks_per_chunk),
            parts: Chunked::new(tasks_per_chunk),
            rest: Vec::new(),
        }
    }

    /// How many tasks are kept.
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// Keeps `task`, whose demand must be `width` amounts wide; `None` (and nothing kept) when
    /// it is not, when it is a part of a job and the tasks before it were not (or the other
    /// way round), or when the store holds as many tasks with rare fields as a `u32` counts.
    pub fn push(&mut self, task: Task) -> Option<()> {
        // Every field named, so that a field added to `Task` cannot be dropped here unseen.
        let Task {
            id,
            user,
            submit,
            start,
            runtime,
            demand,
            walltime,
            queue,
            partition,
            qos,
            nodes,
            exclusive,
            properties,
            running,
            cancelled,
            failed,
            billing,
            job_part,
            hosts,
            pinned,
        } = task;
        let parts_alike = job_part.is_some() == (self.parts.len() > 0) || self.heads.len() == 0;
        if demand.len() != self.width || !parts_alike {
            return None;
        }
        let rest = Rest {
            walltime,
            queue,
            partition,
            qos,
            nodes,
            exclusive,
            properties,
            running,
            cancelled,
            failed,
            billing,
            hosts,
            pinned,
        };
        let rest = if rest.is_plain() {
            Head::PLAIN
        } else {
            let index = u32::try_from(self.rest.len())
                .ok()
                .filter(|&i| i != Head::PLAIN)?;
            self.rest.push(rest);
            index
        };
        self.demands.extend_from_slice(&demand);
        self.parts.extend_from_slice(job_part.as_slice());
        self.heads.push(Head {
            id,
            submit,
            start,
            runtime,
            user,
            rest,
        });
        Some(())
    }

    /// Gives back the memory reserved for tasks that never came.
    pub fn shrink_to_fit(&mut self) {
        self.heads.shrink_to_fit();
        self.demands.shrink_to_fit();
        self.parts.shrink_to_fit();
        self.rest.shrink_to_fit();
    }

    /// The tasks in the order they were pushed, with their demand restricted to the resources
    /// `keep` (indices into the demand as pushed).
    pub fn tasks<'a>(&'a self, keep: &'a [usize]) -> impl Iterator<Item = Task> + 'a {
        let width = self.width.max(1);
        let demands = self
            .demands
            .chunks()
            .flat_map(move |c| c.chunks_exact(width));
        let heads = self.heads.chunks().flatten();
        let mut parts = self.parts.chunks().flatten();
        heads.zip(demands).map(move |(head, demand)| {
            let demand = project(demand, keep);
            let mut task = Task::new(head.id, head.user, head.submit, head.runtime, demand);
            task.start = head.start;
            task.job_part = parts.next().copied();
            if let Some(rest) = self.rest.get(head.rest as usize) {
                task.walltime = rest.walltime;
                task.queue = rest.queue;
                task.partition = rest.partition;
                task.qos = rest.qos;
                task.nodes = rest.nodes;
                task.exclusive = rest.exclusive;
                task.properties = rest.properties.clone();
                task.running = rest.running;
                task.cancelled = rest.cancelled;
                task.failed = rest.failed;
                task.billing = rest.billing;
                task.hosts = rest.hosts.clone();
                task.pinned = rest.pinned;
            }
            task
        })
    }

    /// How each task ran, in the order they were pushed, without building the tasks: the
    /// totals of [`recorded_shares`](crate::recorded_shares) are the resources `keep`.
    pub fn runs<'a>(&'a self, keep: &'a [usize]) -> impl Iterator<Item = RecordedRun<'a>> + 'a {
        let width = self.width.max(1);
        let demands = (self.demands.chunks()).flat_map(move |c| c.chunks_exact(width));
        (self.heads.chunks().flatten())
            .zip(demands)
            .map(move |(head, demand)| RecordedRun {
                user: head.user,
                start: head.start,
                runtime: head.runtime,
                demand,
                keep,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Tasks with every field drawn, the rare ones set on some tasks only.
    fn task() -> impl Strategy<Value = Task> {
        let head = (
            any::<u64>(),
            0u32..50,
            0u64..1 << 40,
            any::<Option<u64>>(),
            any::<u64>(),
        );
        let demand = prop::collection::vec(0.0f64..1e6, 3);
        let rest = (
            any::<Option<u64>>(),
            any::<Option<u32>>(),
            any::<Option<u32>>(),
            any::<Option<u32>>(),
            any::<Option<u32>>(),
            any::<bool>(),
            prop::collection::vec("[a-z]{1,4}", 0..2),
            any::<bool>(),
            any::<Option<u64>>(),
            any::<bool>(),
            prop::option::of(0.0f64..1e6),
        );
        let rest = prop::option::weighted(0.3, rest);
        let part = any::<(u64, u64)>();
        (head, demand, rest, part).prop_map(
            |((id, user, submit, start, runtime), demand, rest, part)| {
                let mut task = Task::new(id, user, Time(submit), runtime, demand);
                task.start = start.map(Time);
                task.job_part = Some(part);
                if let Some((
                    walltime,
                    queue,
                    partition,
                    qos,
                    nodes,
                    exclusive,
                    properties,
                    running,
                    cancelled,
                    failed,
                    billing,
                )) = rest
                {
                    task.walltime = walltime;
                    task.queue = queue;
                    task.partition = partition;
                    task.qos = qos;
                    task.nodes = nodes;
                    task.exclusive = exclusive;
                    task.properties = properties;
                    task.running = running;
                    task.cancelled = cancelled.map(Time);
                    task.failed = failed;
                    task.billing = billing;
                }
                task
            },
        )
    }

    proptest! {
        #[test]
        fn kept_tasks_come_back_as_they_were_pushed(
            mut tasks in prop::collection::vec(task(), 0..60),
            tasks_per_chunk in 1usize..8,
            parts in any::<bool>(),
        ) {
            if !parts {
                tasks.iter_mut().for_each(|t| t.job_part = None);
            }
            let mut kept = Kept::chunked(3, tasks_per_chunk);
            for task in &tasks {
                prop_assert_eq!(kept.push(task.clone()), Some(()));
            }
            kept.shrink_to_fit();
            prop_assert_eq!(kept.len(), tasks.len());
            let all: Vec<Task> = kept.tasks(&[0, 1, 2]).collect();
            prop_assert_eq!(&all, &tasks);
            let projected: Vec<Task> = kept.tasks(&[2, 0]).collect();
            for (back, task) in projected.iter().zip(&tasks) {
                prop_assert_eq!(&back.demand, &vec![task.demand[2], task.demand[0]]);
                prop_assert_eq!(back.id, task.id);
            }
        }
    }

    #[test]
    fn a_part_of_a_job_after_tasks_that_are_not_is_refused() {
        let mut kept = Kept::new(1);
        let mut part = Task::new(2, 0, Time(0), 5, vec![1.0]);
        part.job_part = Some((7, 0));
        assert_eq!(kept.push(Task::new(1, 0, Time(0), 5, vec![1.0])), Some(()));
        assert_eq!(kept.push(part.clone()), None);
        let mut parts = Kept::new(1);
        assert_eq!(parts.push(part), Some(()));
        assert_eq!(parts.push(Task::new(3, 0, Time(0), 5, vec![1.0])), None);
    }

    #[test]
    fn a_task_of_another_width_is_refused() {
        let mut kept = Kept::new(2);
        assert_eq!(kept.push(Task::new(1, 0, Time(0), 5, vec![1.0])), None);
        assert_eq!(kept.len(), 0);
    }
}
