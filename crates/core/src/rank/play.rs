//! The order in which a policy would start the jobs that wait, played out on a copy of a
//! [`Book`], and that order cut into runs.
//!
//! A policy orders clients; a scheduler that orders jobs wants a number per job. The
//! adapters (`fairshare-reconcile`) play the policy's progressive filling out over the pending
//! jobs at each pass and give each run of one client's consecutive starts one factor
//! ([`super::factors::stable_factors`]); the replay's model of an adapter (`fairshare-sim`)
//! plays the very same function at each of the adapter's passes, so that what a replay
//! predicts the adapter writes is what it writes.

use super::{Book, Head, PlaceDependsOn, RankError, Standing};
use crate::model::Time;
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::ops::Range;

/// A pending job as the play of starts plays it.
#[derive(Debug, Clone)]
pub struct Waiting<'a> {
    /// Its head, as the ranker sees it while it waits first.
    pub head: Head,
    /// What it would hold, as fractions of each resource (borrowed where the caller keeps
    /// it: a pass lists every pending job).
    pub holding: Cow<'a, [f64]>,
    /// Its usage per second, for policies that charge jobs.
    pub rate: Option<f64>,
    /// Its time limit, microseconds: when the play expects it to end once started (`None`:
    /// it never frees what it holds, in the play).
    pub limit: Option<u64>,
}

/// A job the play expects to end, freeing what it holds: a running job at its start plus its
/// time limit, or a job the play started.
#[derive(Debug, Clone)]
pub struct Expected {
    /// When it is expected to end.
    pub end: Time,
    /// Its client.
    pub client: u32,
    /// What it holds, as fractions of each resource.
    pub holding: Vec<f64>,
    /// Its usage per second, for policies that charge jobs.
    pub rate: Option<f64>,
    /// When it started.
    pub start: Time,
}

/// What is free as the play of starts goes on, and what will free it, soonest first.
struct Room {
    /// Each resource's free fraction (negative when the play had to overfill it).
    free: Vec<f64>,
    /// The jobs expected to end, soonest first (at one end, in the order they were added), as
    /// their index in `jobs`.
    ends: BinaryHeap<Reverse<(Time, usize)>>,
    /// Every job expected to end.
    jobs: Vec<Expected>,
}

impl Room {
    /// What `book`'s clients leave free, with `running` expected to end.
    fn of(book: &Book, running: Vec<Expected>) -> Room {
        let mut free = vec![1.0; book.holdings(0).len()];
        for client in 0..book.clients() as u32 {
            let held = book.holdings(client);
            free.iter_mut().zip(held).for_each(|(f, h)| *f -= h);
        }
        let mut room = Room {
            free,
            ends: BinaryHeap::new(),
            jobs: Vec::new(),
        };
        running.into_iter().for_each(|job| room.expect(job));
        room
    }

    /// Whether `holding` fits in what is free.
    fn fits(&self, holding: &[f64]) -> bool {
        const SLACK: f64 = 1e-9;
        self.free.iter().zip(holding).all(|(f, h)| f + SLACK >= *h)
    }

    /// A job expected to end.
    fn expect(&mut self, job: Expected) {
        self.ends.push(Reverse((job.end, self.jobs.len())));
        self.jobs.push(job);
    }

    /// The jobs that end soonest (all those expected at that one instant: a wave that started
    /// together ends together), their holdings freed.
    fn free_next(&mut self) -> Vec<&Expected> {
        let Some(&Reverse((end, _))) = self.ends.peek() else {
            return Vec::new();
        };
        let mut ended = Vec::new();
        while self.ends.peek().is_some_and(|Reverse((t, _))| *t == end) {
            let Some(Reverse((_, i))) = self.ends.pop() else {
                break;
            };
            let job = &self.jobs[i];
            (self.free.iter_mut().zip(job.holding.iter())).for_each(|(f, h)| *f += h);
            ended.push(i);
        }
        ended.into_iter().map(|i| &self.jobs[i]).collect()
    }

    /// A job the play starts at `t`, holding what it holds until its limit.
    fn take(&mut self, t: Time, client: u32, job: &Waiting) {
        (self.free.iter_mut().zip(job.holding.iter())).for_each(|(f, h)| *f -= h);
        if let Some(limit) = job.limit {
            self.expect(Expected {
                end: Time::from_micros(t.as_micros().saturating_add(limit)),
                client,
                holding: job.holding.to_vec(),
                rate: job.rate,
                start: t,
            });
        }
    }
}

/// The order in which the policy of `book` would start the jobs of `queues` (each client's in
/// the order given), as the client of each start: its progressive filling played out on a
/// copy of the book at `now`, for the first `runs` runs (a run: one client's consecutive
/// starts).
///
/// With `running` given (and the queues' limits), the play keeps what is free (without them
/// every job starts at once, the clients' holdings only growing): the first client's next job
/// starts when it fits, as Slurm's main scheduler starts the highest-priority job when room
/// frees; until then the jobs expected to end soonest end (a running job at its expected end,
/// or a job the play started, at its limit; all those expected at one instant together), their
/// clients' holdings fall, and the policy chooses again, so that whose job frees the room
/// weighs in the choice. The expected ends only order the ends: the ranker's clock stays at
/// `now`, since time limits overstate run times many times over and a decay run on for the
/// minutes they span would rank by a moment that never comes (the next pass ranks again). A
/// job that fits nowhere with nothing left to end starts regardless. Each start adds its job's
/// holding (and rate) before the next choice, as a scheduler's pass does; the policy's factors
/// that are refreshed only with time (the production fairshare functions) keep every start of
/// a client together, as Slurm's one factor per association does. After those runs, each
/// client's remaining jobs follow together, the clients in the ranker's order at that point.
/// Where nothing held moves the ranker's order while time stands still
/// ([`super::Ranker::place_depends_on`]), that is the whole play, worked out at once: each
/// client's jobs together where nothing moves it, the queues merged by their jobs' standings
/// where its head alone does.
pub fn starts(
    book: &Book,
    now: Time,
    queues: &BTreeMap<u32, Vec<Waiting<'_>>>,
    runs: usize,
    running: Vec<Expected>,
) -> Result<Vec<u32>, RankError> {
    let mut queue_of: Vec<&[Waiting]> = vec![&[]; book.clients()];
    for (&client, queue) in queues {
        if let Some(of) = queue_of.get_mut(client as usize) {
            *of = queue;
        }
    }
    let place = book.ranker().place_depends_on();
    if place == PlaceDependsOn::HeadAlone {
        if let Some(starts) = merged_by_heads(book, &queue_of, runs) {
            return Ok(starts);
        }
    }
    // The ranker's clock stays at `now` throughout.
    let mut book = book.frozen();
    let heads = (queue_of.iter().enumerate())
        .map(|(client, queue)| (client as u32, queue.first().map(|w| w.head)))
        // Most clients wait for nothing, which the ranker already knows.
        .filter(|&(client, head)| head.is_some() || !book.known_idle(client))
        .collect::<Vec<_>>();
    book.waits_all(heads)?;
    if place == PlaceDependsOn::Nothing {
        // No start or end at this instant moves a waiting client: each one's jobs start
        // together, the clients in the ranker's order.
        let order = book.order().into_iter();
        let each = |client: u32| std::iter::repeat_n(client, queue_of[client as usize].len());
        return Ok(order.flat_map(each).collect());
    }
    let mut room = Room::of(&book, running);
    // When the play expects each start, for the ends of the jobs it starts.
    let mut expected = now;
    let mut taken: Vec<usize> = vec![0; queue_of.len()];
    let mut starts: Vec<u32> = Vec::with_capacity(queues.values().map(Vec::len).sum());
    let mut played = 0;
    while let Some(client) = book.ranker().first() {
        let queue = queue_of[client as usize];
        let next = &mut taken[client as usize];
        let Some(job) = queue.get(*next) else { break };
        if !room.fits(&job.holding) {
            let ended = room.free_next();
            if !ended.is_empty() {
                for job in ended {
                    expected = expected.max(job.end);
                    let ran = now.as_micros().saturating_sub(job.start.as_micros());
                    book.finished(job.client, &job.holding, job.rate, ran as f64 / 1e6)?;
                }
                continue;
            }
        }
        if starts.last() != Some(&client) {
            if played == runs {
                break;
            }
            played += 1;
        }
        *next += 1;
        starts.push(client);
        // The ranker hears of the start with the client's next head, once.
        book.take(client, &job.holding, job.rate)?;
        room.take(expected, client, job);
        book.waits(client, queue.get(*next).map(|w| w.head))?;
    }
    for client in book.order() {
        let left = queue_of[client as usize].len() - taken[client as usize];
        starts.extend(std::iter::repeat_n(client, left));
    }
    Ok(starts)
}

/// The play of [`starts`] for a ranker whose order depends on each waiting client's head alone
/// (FIFO, smallest-first): whatever starts or ends, the client served next is the one whose
/// next job stands first, so the play merges the queues by their jobs' standings. `None`
/// where the ranker gives no standings.
fn merged_by_heads(book: &Book, queue_of: &[&[Waiting]], runs: usize) -> Option<Vec<u32>> {
    let mut known = QueueStandings::new(book, queue_of)?;
    let mut next: Vec<usize> = vec![0; queue_of.len()];
    let mut firsts: BinaryHeap<Reverse<Standing>> = (known.known.iter())
        .filter_map(|own| Some(Reverse(*own.first()?)))
        .collect();
    let mut starts: Vec<u32> = Vec::with_capacity(queue_of.iter().map(|q| q.len()).sum());
    let mut played = 0;
    while let Some(Reverse(first)) = firsts.pop() {
        let client = first.client;
        if starts.last() != Some(&client) {
            if played == runs {
                firsts.push(Reverse(first));
                break;
            }
            played += 1;
        }
        // The client's jobs start while each stands before every other client's next.
        let others = firsts.peek().map(|Reverse(s)| *s);
        let from = &mut next[client as usize];
        loop {
            starts.push(client);
            *from += 1;
            match known.at(client, *from)? {
                Some(standing) if others.is_none_or(|other| standing < other) => {}
                Some(standing) => break firsts.push(Reverse(standing)),
                None => break,
            }
        }
    }
    // After the ranked runs, each client's remaining jobs together, by its next job's standing.
    let mut left: Vec<Standing> = firsts.into_iter().map(|Reverse(s)| s).collect();
    left.sort_unstable();
    for client in left.into_iter().map(|s| s.client as usize) {
        starts.extend(std::iter::repeat_n(
            client as u32,
            queue_of[client].len() - next[client],
        ));
    }
    Some(starts)
}

/// The standings of the jobs of each client's queue, worked out as far as a play reaches (a
/// queue deep past the ranked runs is never stood job by job), in stretches that double.
struct QueueStandings<'b, 'q, 'w> {
    book: &'b Book,
    queue_of: &'q [&'q [Waiting<'w>]],
    /// Each client's first jobs' standings, in its queue's order.
    known: Vec<Vec<Standing>>,
}

impl<'b, 'q, 'w> QueueStandings<'b, 'q, 'w> {
    /// Each client's first job stood (`None` where the ranker gives no standings).
    fn new(book: &'b Book, queue_of: &'q [&'q [Waiting<'w>]]) -> Option<Self> {
        if !queue_of
            .iter()
            .filter_map(|queue| queue.first())
            .all(usable)
        {
            return None;
        }
        let asked: Vec<(u32, Head)> = (queue_of.iter().enumerate())
            .filter_map(|(client, queue)| Some((client as u32, queue.first()?.head)))
            .collect();
        let mut known = vec![Vec::new(); queue_of.len()];
        for standing in book.standings(&asked)? {
            known[standing.client as usize].push(standing);
        }
        Some(QueueStandings {
            book,
            queue_of,
            known,
        })
    }

    /// The standing of the job at `place` in `client`'s queue (`Some(None)` past its end;
    /// `None` where the ranker gives no standings).
    fn at(&mut self, client: u32, place: usize) -> Option<Option<Standing>> {
        let (c, queue) = (client as usize, self.queue_of[client as usize]);
        let known = &mut self.known[c];
        if place >= known.len() && place < queue.len() {
            let upto = (2 * known.len()).max(place + 1).min(queue.len());
            let stretch = &queue[known.len()..upto];
            if !stretch.iter().all(usable) {
                return None;
            }
            let asked: Vec<(u32, Head)> = stretch.iter().map(|job| (client, job.head)).collect();
            known.extend(self.book.standings(&asked)?);
        }
        Some(known.get(place).copied())
    }
}

/// Whether `job`'s holding is one the play one start at a time takes (finite, not negative):
/// one it would refuse is left to it, to refuse.
fn usable(job: &Waiting) -> bool {
    job.holding.iter().all(|h| h.is_finite() && *h >= 0.0)
}

/// The head of a job submitted at `now`, as the submit table places a client with nothing
/// waiting: of size 0 and no points (nothing is known of the job), numbered after every job
/// of that instant.
pub fn submitted_at(now: Time) -> Head {
    Head::new(now, u64::MAX)
}

/// Every client of `book`, first to last, as the policy would rank them at `now` were each
/// waiting: those in `heads` with their heads, the others with a job submitted at `now`
/// (where a new job of theirs would stand).
pub fn order_of_all(
    book: &Book,
    now: Time,
    heads: &BTreeMap<u32, Head>,
) -> Result<Vec<u32>, RankError> {
    let heads: Vec<Head> = (0..book.clients() as u32)
        .map(|client| heads.get(&client).copied().unwrap_or(submitted_at(now)))
        .collect();
    book.order_of_all(&heads)
}

/// The runs of `starts` (the client of each start, as [`starts`] gives them): its first
/// `ranked` runs of one client's consecutive starts, then one run per client of its starts
/// after them, in the order of their first. Deep in a long queue the order of starts changes
/// from pass to pass long before those jobs can start; one factor per client there keeps the
/// writes few. Each run is its client and the places in that client's queue of the jobs it
/// starts: a client's jobs start in its queue's order, so every run is a span of its queue.
pub fn run_spans(starts: &[u32], ranked: usize) -> Vec<(u32, Range<usize>)> {
    let mut runs: Vec<(u32, Range<usize>)> = Vec::new();
    // Per client: its next place, and its run after the first `ranked`, once it has one.
    let clients = starts.iter().max().map_or(0, |&top| top as usize + 1);
    let mut next: Vec<usize> = vec![0; clients];
    let mut tail: Vec<Option<usize>> = vec![None; clients];
    for block in starts.chunk_by(|a, b| a == b) {
        let client = block[0];
        let from = &mut next[client as usize];
        let span = *from..*from + block.len();
        *from = span.end;
        // A client's run goes on where its last job's run ends (it took every job between).
        let (head, last) = (runs.len() < ranked, runs.last_mut());
        match last {
            Some((c, last)) if *c == client => last.end = span.end,
            _ if head => runs.push((client, span)),
            _ => match tail[client as usize] {
                Some(at) => runs[at].1.end = span.end,
                None => {
                    tail[client as usize] = Some(runs.len());
                    runs.push((client, span));
                }
            },
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priority::PriorityForm;
    use crate::rank::{smallest, FifoRanker, Ranker, SdrfRanker, Share, UsageRanker};
    use proptest::prelude::*;

    /// A ranker told of every start: it never says its place depends on less than a
    /// client's holdings and head.
    struct ToldEveryStart(Box<dyn Ranker>);

    impl Ranker for ToldEveryStart {
        fn boxed_clone(&self) -> Box<dyn Ranker> {
            Box::new(ToldEveryStart(self.0.boxed_clone()))
        }
        fn advance(&mut self, now: Time) -> Result<(), RankError> {
            self.0.advance(now)
        }
        fn update(&mut self, c: u32, h: &[f64], head: Option<Head>) -> Result<(), RankError> {
            self.0.update(c, h, head)
        }
        fn first(&self) -> Option<u32> {
            self.0.first()
        }
        fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
            self.0.iter()
        }
        fn priority(&self, client: u32) -> Option<f64> {
            self.0.priority(client)
        }
        fn set_aside(&mut self, client: u32) {
            self.0.set_aside(client)
        }
        fn restore(&mut self) {
            self.0.restore()
        }
    }

    /// The runs of `sequence` the slow way: its groups of one client's consecutive jobs, the
    /// first `ranked` of them kept as they are, the jobs of the later ones gathered by client
    /// in the order of each client's first.
    fn runs_by_hand<J: Copy>(sequence: &[(u32, J)], ranked: usize) -> Vec<(u32, Vec<J>)> {
        let mut groups: Vec<(u32, Vec<J>)> = Vec::new();
        for &(client, job) in sequence {
            match groups.last_mut() {
                Some((c, jobs)) if *c == client => jobs.push(job),
                _ => groups.push((client, vec![job])),
            }
        }
        let rest = groups.split_off(ranked.min(groups.len()));
        let mut gathered: Vec<(u32, Vec<J>)> = Vec::new();
        for (client, jobs) in rest {
            match gathered.iter_mut().find(|(c, _)| *c == client) {
                Some((_, all)) => all.extend(jobs),
                None => gathered.push((client, jobs)),
            }
        }
        groups.extend(gathered);
        groups
    }

    /// Each start of `starts` (the client of each) as its client and the place, in that
    /// client's queue, of the job it starts.
    fn in_queues(starts: &[u32]) -> Vec<(u32, usize)> {
        let mut taken: BTreeMap<u32, usize> = BTreeMap::new();
        (starts.iter())
            .map(|&client| {
                let next = taken.entry(client).or_insert(0);
                *next += 1;
                (client, *next - 1)
            })
            .collect()
    }

    proptest! {
        /// Each span is the places of its run's jobs in its client's queue.
        #[test]
        fn spans_are_the_runs_places(
            clients in prop::collection::vec(0u32..4, 0..30),
            ranked in 0usize..8,
        ) {
            let placed = in_queues(&clients);
            let by_hand: Vec<(u32, Vec<usize>)> = runs_by_hand(&placed, ranked);
            let spans: Vec<(u32, Vec<usize>)> = (run_spans(&clients, ranked).into_iter())
                .map(|(client, span)| (client, span.collect()))
                .collect();
            prop_assert_eq!(spans, by_hand);
        }

        /// Under decayed usage, whose order stands while time does, a play that tells the
        /// ranker of a client's starts only once it stops waiting starts the jobs in the order
        /// of one that tells it of every start; so does the merge of the queues by their jobs'
        /// standings under FIFO and smallest-first, whose order depends on heads alone (the
        /// queues out of arrival and size order, heads tied in arrival and size).
        #[test]
        fn an_order_worked_out_at_once_plays_as_one_told_of_every_start(
            policy in 0u8..3,
            held in prop::collection::vec((0.0f64..0.3, 0.0f64..0.3), 4),
            queued in prop::collection::vec(prop::collection::vec((0.01f64..0.6, 0.01f64..0.6, 1u64..50, 0u64..4, 0u8..3), 0..6), 4),
            played in 1usize..20,
        ) {
            let shares = Share::equal(4);
            let ranker: Box<dyn Ranker> = match policy {
                0 => Box::new(UsageRanker::new(2, 600.0, &shares)),
                1 => Box::new(FifoRanker::new(4)),
                _ => smallest::smallest_first(2, &shares),
            };
            let place = ranker.place_depends_on();
            prop_assert_ne!(place, PlaceDependsOn::HoldingsAndHead);
            let books = [
                Book::new(ranker.boxed_clone(), 4, 2),
                Book::new(Box::new(ToldEveryStart(ranker)), 4, 2),
            ];
            let queues: BTreeMap<u32, Vec<Waiting>> = (queued.iter().enumerate())
                .filter(|(_, q)| !q.is_empty())
                .map(|(client, q)| {
                    let jobs = q.iter().enumerate().map(|(k, &(cpu, mem, limit_s, arrival, size))| Waiting {
                        head: Head::new(Time::from_micros(arrival), (client * 10 + k) as u64)
                            .with_size(f64::from(size) / 4.0),
                        holding: Cow::Owned(vec![cpu, mem]),
                        rate: None,
                        limit: Some(limit_s * 1_000_000),
                    });
                    (client as u32, jobs.collect())
                })
                .collect();
            let mut orders = Vec::new();
            for mut book in books {
                for (client, &(cpu, mem)) in held.iter().enumerate() {
                    book.started(client as u32, &[cpu, mem], None).unwrap();
                }
                let now = Time::from_secs_f64(100.0);
                book.advance(now).unwrap();
                orders.push(starts(&book, now, &queues, played, Vec::new()).unwrap());
            }
            prop_assert!(orders[0].len() == queues.values().map(Vec::len).sum::<usize>());
            prop_assert_eq!(&orders[0], &orders[1]);
        }

        /// Every pending job is started once, each client's in its queue's order, and the
        /// first start is the client the policy serves first.
        #[test]
        fn every_waiting_job_starts_once_the_policys_first_client_first(
            held in prop::collection::vec((0.0f64..0.3, 0.0f64..0.3), 3),
            queued in prop::collection::vec(prop::collection::vec((0.01f64..0.5, 0.01f64..0.5), 0..5), 3),
            played in 1usize..20,
        ) {
            let ranker = SdrfRanker::with_delta(2, 0.999, PriorityForm::SumOfMaxes, &Share::equal(3));
            let mut book = Book::new(Box::new(ranker), 3, 2);
            for (client, &(cpu, mem)) in held.iter().enumerate() {
                book.started(client as u32, &[cpu, mem], None).unwrap();
            }
            let queues: BTreeMap<u32, Vec<Waiting>> = (queued.iter().enumerate())
                .filter(|(_, q)| !q.is_empty())
                .map(|(client, q)| {
                    let jobs = q.iter().enumerate().map(|(k, &(cpu, mem))| Waiting {
                        head: Head::new(Time::from_micros(k as u64), (client * 10 + k) as u64),
                        holding: Cow::Owned(vec![cpu, mem]),
                        rate: None,
                        limit: Some(1_000_000),
                    });
                    (client as u32, jobs.collect())
                })
                .collect();
            let order = starts(&book, Time::ZERO, &queues, played, Vec::new()).unwrap();
            for (client, queue) in &queues {
                prop_assert_eq!(order.iter().filter(|c| *c == client).count(), queue.len());
            }
            prop_assert_eq!(order.len(), queues.values().map(Vec::len).sum::<usize>());
            let mut waiting = book.clone();
            for (client, queue) in &queues {
                waiting.waits(*client, Some(queue[0].head)).unwrap();
            }
            prop_assert_eq!(order.first().copied(), waiting.ranker().first());
        }
    }

    #[test]
    fn a_holding_the_play_refuses_is_refused_under_fifo_too() {
        let job = |holding: Vec<f64>, seq| Waiting {
            head: Head::new(Time::ZERO, seq),
            holding: Cow::Owned(holding),
            rate: None,
            limit: None,
        };
        let book = Book::new(Box::new(FifoRanker::new(2)), 2, 2);
        let queues =
            BTreeMap::from([(0, vec![job(vec![0.1, 0.1], 1), job(vec![f64::NAN, 0.1], 2)])]);
        assert!(starts(&book, Time::ZERO, &queues, 10, Vec::new()).is_err());
        let queues = BTreeMap::from([(1, vec![job(vec![0.1, 0.1], 3)])]);
        assert_eq!(
            starts(&book, Time::ZERO, &queues, 10, Vec::new()).unwrap(),
            [1]
        );
    }

    #[test]
    fn each_start_is_placed_in_its_clients_queue() {
        assert_eq!(
            in_queues(&[2, 0, 2, 2, 0]),
            [(2, 0), (0, 0), (2, 1), (2, 2), (0, 1)]
        );
    }

    #[test]
    fn runs_past_the_head_are_one_per_client() {
        let starts = [0, 1, 1, 0, 2, 0, 1];
        let spans = |ranked| -> Vec<(u32, Vec<usize>)> {
            (run_spans(&starts, ranked).into_iter())
                .map(|(client, span)| (client, span.collect()))
                .collect()
        };
        let all = [(0, vec![0]), (1, vec![0, 1]), (0, vec![1]), (2, vec![0])];
        assert_eq!(
            spans(100)[..4],
            all,
            "every run its own, in the order of starts"
        );
        assert_eq!(spans(100).len(), 6);
        assert_eq!(
            spans(2),
            [
                (0, vec![0]),
                (1, vec![0, 1]),
                (0, vec![1, 2]),
                (2, vec![0]),
                (1, vec![2])
            ]
        );
    }
}
