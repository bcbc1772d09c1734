//! The space's tests.

use super::super::placement::{BestFit, FirstFit, SlurmNodes};
use super::*;
use fairshare_core::model::NodeType;

/// One machine per capacity vector, the i-th with property `p{i}`.
fn machines(nodes: Vec<Vec<f64>>) -> Capacity {
    let types = nodes
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut node = NodeType::new(format!("m{i}"), 1, c);
            node.properties = vec![format!("p{i}")];
            node
        })
        .collect();
    Capacity::Machines(MachineCatalogue::new(types))
}

fn names() -> Vec<String> {
    vec!["cpu".into(), "mem".into()]
}

fn space(nodes: Vec<Vec<f64>>, placement: Arc<dyn Placement>) -> Space {
    Space::new(&machines(nodes), &names(), placement, true).unwrap()
}

/// The request of `cpus` processors with `mem` in raw units.
fn request(space: &mut Space, raw: [f64; 2], nodes: Option<u32>, exclusive: bool) -> Request {
    let demand = space.normalise(&raw).unwrap();
    space.request(raw[0], demand, nodes, exclusive, &[]).0
}

#[test]
fn one_node_tasks_place_first_fit_and_release() {
    let mut space = space(vec![vec![4.0, 4.0], vec![4.0, 4.0]], Arc::new(FirstFit));
    let task = request(&mut space, [2.5, 1.0], Some(1), false);
    let first = space.fit_now(&task).unwrap();
    assert_eq!(first[0].0, 0);
    space.take(&first);
    let second = space.fit_now(&task).unwrap();
    assert_eq!(second[0].0, 1);
    space.take(&second);
    assert_eq!(
        space.fit_now(&task),
        None,
        "room is left, but on no one node"
    );
    space.release(&first);
    assert_eq!(space.fit_now(&task).unwrap()[0].0, 0);
    let too_big = request(&mut space, [5.0, 1.0], Some(1), false);
    assert!(!space.could_ever_fit(&too_big));
}

#[test]
fn a_parallel_job_spreads_its_processors_over_nodes_of_two_sizes() {
    // 8 + 4 processors; a 10-processor job takes all 8 of the first and 2 of the second.
    let mut space = space(vec![vec![8.0, 8.0], vec![4.0, 4.0]], Arc::new(FirstFit));
    let job = request(&mut space, [10.0, 10.0], None, false);
    let placed = space.fit_now(&job).unwrap();
    let nodes: Vec<usize> = placed.iter().map(|(n, _)| *n).collect();
    assert_eq!(nodes, vec![0, 1]);
    assert!((placed[0].1[0] - 8.0 / 12.0).abs() < 1e-12);
    assert!((placed[1].1[0] - 2.0 / 12.0).abs() < 1e-12);
    // Asked as 2 nodes × 5, it cannot use the 4-processor node: never fits.
    let shaped = request(&mut space, [10.0, 2.0], Some(2), false);
    assert!(!space.could_ever_fit(&shaped));
    // 2 nodes × 3 fits on both.
    let small = request(&mut space, [6.0, 2.0], Some(2), false);
    assert_eq!(space.fit_now(&small).map(|p| p.len()), Some(2));
}

#[test]
fn an_exclusive_job_takes_empty_nodes_whole() {
    let mut space = space(vec![vec![4.0, 4.0], vec![4.0, 4.0]], Arc::new(FirstFit));
    let small = request(&mut space, [1.0, 1.0], Some(1), false);
    let placed = space.fit_now(&small).unwrap();
    space.take(&placed);
    let exclusive = request(&mut space, [1.0, 1.0], Some(1), true);
    let whole = space.fit_now(&exclusive).unwrap();
    assert_eq!(whole[0].0, 1, "the busy node is not empty");
    assert_eq!(
        whole[0].1,
        vec![0.5, 0.5],
        "the whole node: half the cluster"
    );
    space.take(&whole);
    assert_eq!(space.fit_now(&exclusive), None);
    assert_eq!(
        space.fit_now(&small).unwrap()[0].0,
        0,
        "nobody shares node 1"
    );
}

#[test]
fn properties_restrict_the_nodes_and_unknown_ones_are_not_enforced() {
    let mut space = space(vec![vec![4.0, 4.0], vec![4.0, 4.0]], Arc::new(FirstFit));
    let demand = space.normalise(&[1.0, 1.0]).unwrap();
    let (on_p1, unknown) = space.request(1.0, demand.clone(), Some(1), false, &["p1".into()]);
    assert!(!unknown);
    assert_eq!(space.fit_now(&on_p1).unwrap()[0].0, 1);
    let (anywhere, unknown) = space.request(1.0, demand, Some(1), false, &["x86_64".into()]);
    assert!(unknown);
    assert_eq!(space.fit_now(&anywhere).unwrap()[0].0, 0);
}

#[test]
fn best_fit_packs_the_busiest_node() {
    let mut space = space(vec![vec![8.0, 8.0], vec![8.0, 8.0]], Arc::new(BestFit));
    let big = request(&mut space, [6.0, 6.0], Some(1), false);
    let placed = space.fit_now(&big).unwrap();
    space.take(&placed);
    let small = request(&mut space, [1.0, 1.0], Some(1), false);
    assert_eq!(space.fit_now(&small).unwrap()[0].0, placed[0].0);
}

#[test]
fn the_earliest_start_follows_the_profile() {
    let mut space = space(vec![vec![4.0, 4.0]], Arc::new(FirstFit));
    let t = Time::from_micros;
    let half = request(&mut space, [2.0, 2.0], Some(1), false);
    let busy = space.fit_now(&half).unwrap();
    space.take(&busy);
    space.expect(&busy, t(0), t(100), 1.0);
    space.expect(&busy, t(0), t(50), 1.0);
    let whole = request(&mut space, [4.0, 4.0], Some(1), false);
    assert_eq!(
        space.earliest(&whole, t(0), 10, None, None).map(|f| f.0),
        Some(t(100))
    );
    assert_eq!(
        space.earliest(&half, t(0), 10, None, None).map(|f| f.0),
        Some(t(50))
    );
}

#[test]
fn pool_checks_capacity() {
    let pool = |c: Vec<f64>| Space::new(&Capacity::Pool(c), &names(), Arc::new(FirstFit), false);
    let expected = "capacity: mem has a total capacity of 0; expected a positive finite amount";
    assert_eq!(pool(vec![1.0, 0.0]).err().unwrap().to_string(), expected);
    let huge = machines(vec![vec![1.0, f64::MAX], vec![1.0, f64::MAX]]);
    assert!(Space::new(&huge, &names(), Arc::new(FirstFit), false).is_err());
    assert!(pool(vec![1.0]).is_err());
    let many = NodeType::new("m", u32::MAX, vec![1.0, 1.0]);
    let catalogue = Capacity::Machines(MachineCatalogue::new(vec![many]));
    let refused = Space::new(&catalogue, &names(), Arc::new(FirstFit), false).err();
    assert!(refused.unwrap().to_string().contains("at most 1000000"));
    assert!(Space::new(&machines(vec![]), &names(), Arc::new(FirstFit), false).is_err());
}

#[test]
fn an_extent_sums_the_nodes_of_a_property_and_a_fence_keeps_jobs_off_them() {
    let mut space = space(vec![vec![4.0, 2.0], vec![12.0, 6.0]], Arc::new(FirstFit));
    assert_eq!(space.extent(Some("p0")), (vec![0.25, 0.25], 1.0));
    assert_eq!(space.extent(Some("p1")), (vec![0.75, 0.75], 1.0));
    assert_eq!(space.extent(None), (vec![1.0, 1.0], 2.0));
    let task = request(&mut space, [1.0, 1.0], Some(1), false);
    assert_eq!(space.fit_now(&task).unwrap()[0].0, 0);
    space.fence("p0");
    assert_eq!(space.fit_now(&task).unwrap()[0].0, 1, "m0 is fenced");
    space.fence("nobody declares it");
    space.fence("p1");
    assert!(space.fit_now(&task).is_none(), "both are fenced");
    space.unfence();
    assert_eq!(space.fit_now(&task).unwrap()[0].0, 0);
}

#[test]
fn a_search_starts_where_one_for_the_same_request_found_its_start_until_use_is_taken_away() {
    let t = Time::from_micros;
    let mut space = space(vec![vec![4.0, 4.0]], Arc::new(FirstFit));
    let half = request(&mut space, [2.0, 2.0], Some(1), false);
    let most = request(&mut space, [3.0, 3.0], Some(1), false);
    let running = vec![(0, space.normalise(&[3.0, 3.0]).unwrap())];
    space.expect(&running, t(0), t(100), 1.0);
    let found = space.earliest(&half, t(0), 10, None, None);
    assert_eq!(found.map(|f| f.0), Some(t(100)));
    let bound =
        |space: &Space, request: &Request, length| space.bounds.start_at_least(request, length);
    assert_eq!(bound(&space, &half, 10), t(100));
    assert_eq!(bound(&space, &half, 20), t(100), "longer: no earlier");
    assert_eq!(bound(&space, &half, 5), Time::ZERO, "shorter: no bound");
    assert_eq!(
        bound(&space, &most, 10),
        Time::ZERO,
        "another request: no bound"
    );
    assert!(space.fit_during(&most, t(50), 10).is_none());
    assert_eq!(bound(&space, &most, 10), t(51), "a failed try is learnt");
    assert_eq!(space.earliest(&most, t(0), 10, Some(t(90)), None), None);
    assert_eq!(
        bound(&space, &most, 10),
        t(90),
        "none before the window's end"
    );
    space.expect(&running, t(0), t(100), -1.0);
    assert_eq!(bound(&space, &most, 10), Time::ZERO, "use was taken away");
    let found = space.earliest(&most, t(0), 10, None, None);
    assert_eq!(found.map(|f| f.0), Some(t(0)));
}

#[test]
fn dropping_a_passs_plans_keeps_what_started_meanwhile() {
    let t = Time::from_micros;
    let mut space = space(vec![vec![4.0, 4.0], vec![4.0, 4.0]], Arc::new(FirstFit));
    let part = |space: &Space, node| vec![(node, space.normalise(&[1.0, 1.0]).unwrap())];
    let (on_0, on_1) = (part(&space, 0), part(&space, 1));
    space.expect(&on_0, t(0), t(100), 1.0);
    let before = space.profile.clone();
    space.plan(&on_1, t(100), t(200));
    space.plan(&on_0, t(50), t(300));
    space.unplan(&on_1, t(100), t(200));
    space.expect(&on_1, t(0), t(80), 1.0);
    assert_ne!(space.profile[0], before[0], "a plan is in the profile");
    space.drop_plans();
    let mut expected = before;
    expected[1].add(t(0), t(80), &on_1[0].1, 1.0);
    assert_eq!(
        space.profile, expected,
        "the plans are gone, the start is not"
    );
    space.drop_plans();
    assert_eq!(space.profile, expected, "no plans: nothing to drop");
}

proptest::proptest! {
    /// The bounds kept as staircases give every request and length the bound the obvious
    /// reference gives: the latest learnt for that request at that length or shorter.
    #[test]
    fn bounds_give_the_latest_learnt_for_no_longer(
        learnt in proptest::collection::vec((0usize..3, 1u64..50, 0u64..100), 0..60),
        asked in proptest::collection::vec((0usize..3, 1u64..60), 1..20),
    ) {
        let mut space = space(vec![vec![4.0, 4.0]], Arc::new(FirstFit));
        let requests = [1.0, 2.0, 3.0].map(|a| request(&mut space, [a, a], Some(1), false));
        let mut bounds = super::bounds::Bounds::default();
        for &(r, length, at) in &learnt {
            bounds.learn(&requests[r], length, Time::from_micros(at));
        }
        for (r, length) in asked {
            let reference = (learnt.iter())
                .filter(|(known, l, _)| *known == r && *l <= length)
                .map(|(.., at)| Time::from_micros(*at))
                .max()
                .unwrap_or(Time::ZERO);
            proptest::prop_assert_eq!(bounds.start_at_least(&requests[r], length), reference);
        }
    }
}

/// Three nodes of 8 processors, each full with one running job, ending at `ends` seconds;
/// the jobs' placements, each with its end, in order of end.
fn three_full_nodes(ends: [f64; 3]) -> (Space, Vec<(Time, Placed)>) {
    let mut space = space(vec![vec![8.0, 8.0]; 3], Arc::new(FirstFit));
    let full = request(&mut space, [8.0, 1.0], Some(1), false);
    let running = ends
        .iter()
        .map(|&end| {
            let placed = space.fit_now(&full).unwrap();
            space.take(&placed);
            (Time::from_secs_f64(end), placed)
        })
        .collect();
    (space, running)
}

/// The running jobs as [`Space::will_run`] takes them: their ends, keyed by their place in
/// `running`, and where each runs.
fn ending<'a>(
    running: &'a [(Time, Placed)],
) -> (Vec<Ending>, impl Fn(usize) -> will_run::Nodes<'a> + Copy) {
    let ends = running.iter().enumerate().map(|(i, (end, _))| (*end, i));
    (ends.collect(), move |i| &running[i].1[..])
}

#[test]
fn will_run_takes_running_jobs_away_in_batches_and_starts_at_the_last_end() {
    // Ends at 100, 170 and 175 s. A two-node job fits once the first two are gone (170 s),
    // but Slurm's batches are: the first end, 100 s, rounded up to 120 s and 30 s more (only
    // the 100-s job); then, the window doubled to 60 s, every end up to 180 s (both others).
    // The job starts at the end of the last job taken, 175 s.
    let (mut space, running) = three_full_nodes([100.0, 170.0, 175.0]);
    let (ends, placed_of) = ending(&running);
    let two_nodes = request(&mut space, [8.0, 1.0], Some(2), false);
    let (start, placed) = space
        .will_run(&two_nodes, Time::ZERO, (&ends, placed_of), &[false; 3])
        .unwrap();
    assert_eq!(start, Time::from_secs_f64(175.0));
    assert_eq!(placed.iter().map(|p| p.0).collect::<Vec<_>>(), [0, 1]);
    // A one-node job fits after the first batch: at 100 s, on the node it freed.
    let one_node = request(&mut space, [8.0, 1.0], Some(1), false);
    let found = space.will_run(&one_node, Time::ZERO, (&ends, placed_of), &[false; 3]);
    assert_eq!(
        found.map(|(t, p)| (t, p[0].0)),
        Some((Time::from_secs_f64(100.0), 0))
    );
}

#[test]
fn will_run_looks_only_at_the_nodes_left_to_it() {
    // Node 0 (its job ending first, at 40 s) is barred: its job neither sets the first batch
    // nor is taken; the job runs on node 1 after its end at 100 s.
    let (mut space, running) = three_full_nodes([40.0, 100.0, 300.0]);
    let (ends, placed_of) = ending(&running);
    let one_node = request(&mut space, [8.0, 1.0], Some(1), false);
    let found = space.will_run(
        &one_node,
        Time::ZERO,
        (&ends, placed_of),
        &[true, false, false],
    );
    assert_eq!(
        found.map(|(t, p)| (t, p[0].0)),
        Some((Time::from_secs_f64(100.0), 1))
    );
    // With every node barred, it runs nowhere.
    let barred = space.will_run(&one_node, Time::ZERO, (&ends, placed_of), &[true; 3]);
    assert_eq!(barred, None);
    // Room now: it starts now, on the free processors.
    space.release(&running[2].1);
    let now = Time::from_secs_f64(5.0);
    let found = space.will_run(&one_node, now, (&ends[..2], placed_of), &[false; 3]);
    assert_eq!(found.map(|(t, p)| (t, p[0].0)), Some((now, 2)));
}

#[test]
fn will_run_starts_a_job_behind_one_past_its_end_the_next_second() {
    let (mut space, running) = three_full_nodes([10.4, 400.0, 400.0]);
    let (ends, placed_of) = ending(&running);
    let one_node = request(&mut space, [8.0, 1.0], Some(1), false);
    let now = Time::from_secs_f64(10.5);
    let found = space.will_run(&one_node, now, (&ends, placed_of), &[false; 3]);
    assert_eq!(found.map(|(t, _)| t), Some(Time::from_secs_f64(11.5)));
}

/// The request of `cpus` processors and `mem`, on `nodes` nodes or spread, limited to the
/// nodes of property `p{property}` (0: any node).
fn asked(
    space: &mut Space,
    [cpus, mem]: [u32; 2],
    nodes: Option<u32>,
    exclusive: bool,
    property: usize,
) -> Request {
    let raw = [f64::from(cpus), f64::from(mem)];
    let demand = space.normalise(&raw).unwrap();
    let properties = match property {
        0 => Vec::new(),
        p => vec![format!("p{p}")],
    };
    space
        .request(raw[0], demand, nodes, exclusive, &properties)
        .0
}

proptest::proptest! {
    /// Whether a request could ever fit is remembered by its shape: asked again, in any
    /// order and whatever runs now, the answer is what trying it on the empty nodes says.
    #[test]
    fn could_ever_fit_remembers_what_the_empty_nodes_say(
        asks in proptest::collection::vec((1u32..12, 0u32..9, proptest::option::of(1u32..4), proptest::bool::ANY, 0usize..3), 1..40)
    ) {
        let mut space = space(vec![vec![8.0, 8.0], vec![4.0, 4.0], vec![4.0, 16.0]], Arc::new(SlurmNodes));
        let busy = request(&mut space, [6.0, 6.0], Some(1), false);
        if let Some(placed) = space.fit_now(&busy) {
            space.take(&placed);
        }
        for (cpus, mem, nodes, exclusive, property) in asks {
            let asked = asked(&mut space, [cpus, mem], nodes, exclusive, property);
            let remembered = space.could_ever_fit(&asked);
            proptest::prop_assert_eq!(remembered, space.fits_when_empty(&asked));
        }
    }
}

/// Where `request` fits from `from` for `length` on nodes each using its whole peak over the
/// window, read in full: the obviously right reading of the profile.
fn fit_by_whole_peaks(space: &Space, request: &Request, from: Time, length: u64) -> Option<Placed> {
    let to = from.plus_micros(length.max(1));
    let mut nodes = space.nodes.clone();
    for (node, line) in nodes.iter_mut().zip(&space.profile) {
        node.used = line.peak(from, to);
    }
    fit(space.placement.as_ref(), request, &mut nodes, &space.fenced)
}

proptest::proptest! {
    /// A search by the profile passes by the nodes with no room at the window's start, and
    /// stops reading a node once it is full; it places each request where the nodes' whole
    /// peaks place it.
    #[test]
    fn a_search_by_the_profile_places_as_the_whole_peaks_do(
        planned in proptest::collection::vec((1u32..9, 0u32..9, 0u64..40, 1u64..40), 0..25),
        asks in proptest::collection::vec((1u32..12, 0u32..9, proptest::option::of(1u32..4), proptest::bool::ANY, 0usize..3, 0u64..50, 1u64..30), 1..20)
    ) {
        let mut space = space(vec![vec![8.0, 8.0], vec![4.0, 4.0], vec![4.0, 16.0], vec![8.0, 8.0]], Arc::new(SlurmNodes));
        for (cpus, mem, from, length) in planned {
            let job = request(&mut space, [f64::from(cpus), f64::from(mem)], Some(1), false);
            let (from, to) = (Time::from_whole_secs(from), Time::from_whole_secs(from + length));
            if let Some(placed) = space.fit_during_in_full(&job, from, length * 1_000_000) {
                space.expect(&placed, from, to, 1.0);
            }
        }
        for (cpus, mem, nodes, exclusive, property, from, length) in asks {
            let asked = asked(&mut space, [cpus, mem], nodes, exclusive, property);
            let (from, length) = (Time::from_whole_secs(from), length * 1_000_000);
            let reference = fit_by_whole_peaks(&space, &asked, from, length);
            proptest::prop_assert_eq!(space.fit_during_in_full(&asked, from, length), reference);
        }
    }
}
