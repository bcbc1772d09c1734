//! The program interpreter of the process engine: where each process is in its program
//! (blocks of requests, each repeated) and the length of its next request, drawn from its own
//! random stream.

use crate::scenario::{Dist, Scenario};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Normal};

/// A request with its resource resolved to a lane index (`None` = idle).
#[derive(Debug, Clone, Copy)]
struct Step {
    resource: Option<usize>,
    mean: f64,
    width: f64,
    dist: Dist,
}

/// Where a process is in its program: blocks of steps, each repeated, sampled as issued.
pub(super) struct Cursor {
    blocks: Vec<(u32, Vec<Step>)>,
    block: usize,
    round: u32,
    step: usize,
    rng: ChaCha8Rng,
}

impl Cursor {
    /// Process `i`'s program, drawing from its own stream of the run's seed, so adding a
    /// process does not change the others' samples (docs/mechanisms.md, bottleneck §3.4).
    pub(super) fn new(scenario: &Scenario, i: usize, seed: u64) -> Cursor {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(i as u64);
        let lane = |name: &String| scenario.resources.iter().position(|n| n == name);
        let blocks = scenario.processes[i]
            .program
            .blocks
            .iter()
            .map(|b| {
                let steps = b.requests.iter().map(|r| Step {
                    resource: r.resource.as_ref().and_then(lane),
                    mean: r.mean,
                    width: r.width,
                    dist: r.dist,
                });
                (b.repeat, steps.collect())
            })
            .collect();
        Cursor {
            blocks,
            block: 0,
            round: 0,
            step: 0,
            rng,
        }
    }

    /// The next request and its sampled length in µs, or `None` at the end of the program.
    pub(super) fn next(&mut self) -> Option<(Option<usize>, u64)> {
        loop {
            let (repeat, steps) = self.blocks.get(self.block)?;
            if self.round >= *repeat || steps.is_empty() {
                (self.block, self.round, self.step) = (self.block + 1, 0, 0);
                continue;
            }
            let step = steps[self.step];
            self.step += 1;
            if self.step == steps.len() {
                (self.round, self.step) = (self.round + 1, 0);
            }
            let length = micros(sample(step.dist, step.mean, step.width, &mut self.rng));
            return Some((step.resource, length));
        }
    }
}

pub(super) fn micros(seconds: f64) -> u64 {
    (seconds.max(0.0) * 1e6).round() as u64
}

/// One duration: normal (sd = width), uniform on mean ± width, or exponential with the mean;
/// negative samples are clamped to 0, and width 0 is deterministic.
fn sample(dist: Dist, mean: f64, width: f64, rng: &mut ChaCha8Rng) -> f64 {
    let value = match dist {
        Dist::Normal if width > 0.0 => Normal::new(mean, width).map_or(mean, |d| d.sample(rng)),
        Dist::Uniform if width > 0.0 => mean + width * (2.0 * rand::Rng::gen::<f64>(rng) - 1.0),
        Dist::Exponential if mean > 0.0 => Exp::new(1.0 / mean).map_or(mean, |d| d.sample(rng)),
        _ => mean,
    };
    value.max(0.0)
}
