//! A run's plots as SVG: each user's share of the processors over time, as run and as
//! predicted, and the processors each user's jobs waited for.

use crate::measure::{first_submit, last_end, share};
use crate::{Experiment, Job, Run};
use fairshare_report::svg::{line_chart, Axis, Colour, LineChart, Series};
use std::path::Path;

/// Width of a plot's time bucket, seconds.
const BUCKET_S: f64 = 10.0;

/// A run's plots: the shares as run and as predicted, and the processors waiting as run.
pub(super) fn write_plots(out: &Path, run: &Run, experiment: &Experiment) -> std::io::Result<()> {
    let name = &run.name;
    let origin = first_submit(&run.real);
    let end = last_end(&run.real).max(last_end(&run.predicted));
    let shares = |jobs: &[Job], how: &str| {
        share_plot(jobs, origin, end, &format!("{name}, {how}"), experiment)
    };
    let waiting = queue_plot(
        &run.real,
        origin,
        end,
        &format!("{name}, as run"),
        experiment,
    );
    std::fs::write(out.join(format!("{name}.svg")), shares(&run.real, "as run"))?;
    let predicted = shares(&run.predicted, "as the replay predicts");
    std::fs::write(out.join(format!("{name}-replay.svg")), predicted)?;
    std::fs::write(out.join(format!("{name}-queue.svg")), waiting)
}

/// The colour of the `i`-th user: the palette's eight, then grey.
fn colour(i: usize) -> Colour {
    if i < fairshare_report::svg::PALETTE.len() {
        Colour::Palette(i)
    } else {
        fairshare_report::svg::GREY
    }
}

/// Each user's share of the processors over `[origin, end]` in 10-s buckets, as an SVG chart.
fn share_plot(jobs: &[Job], origin: f64, end: f64, title: &str, experiment: &Experiment) -> String {
    let buckets = ((end - origin) / BUCKET_S).ceil() as usize;
    let series = experiment
        .users
        .iter()
        .enumerate()
        .map(|(i, user)| Series {
            label: user.clone(),
            colour: colour(i),
            // Each bucket a flat step, so that the line reads as the bucket's mean.
            points: (0..buckets)
                .flat_map(|b| {
                    let (from, to) = (b as f64 * BUCKET_S, (b + 1) as f64 * BUCKET_S);
                    let held = share(jobs, user, origin + from, origin + to, experiment.cpus);
                    [(from, held), (to, held)]
                })
                .collect(),
        })
        .collect();
    line_chart(&LineChart {
        size: (760, 300),
        x: Axis::new(&format!("{title}: seconds since the first submission"))
            .range(0.0, (buckets as f64 * BUCKET_S).max(BUCKET_S)),
        y: Axis::new(&format!("share of the {} CPUs, per 10 s", experiment.cpus)).range(0.0, 1.0),
        series,
        hline: None,
        markers: false,
        legend: true,
    })
}

/// The processors each user's jobs waited for over `[origin, end]`, sampled every 10 s (the
/// jobs submitted and not yet started at each sample), as an SVG chart.
fn queue_plot(jobs: &[Job], origin: f64, end: f64, title: &str, experiment: &Experiment) -> String {
    let samples = ((end - origin) / BUCKET_S).ceil() as usize + 1;
    let series = experiment
        .users
        .iter()
        .enumerate()
        .map(|(i, user)| Series {
            label: user.clone(),
            colour: colour(i),
            points: (0..samples)
                .map(|k| {
                    let t = origin + k as f64 * BUCKET_S;
                    let waiting = jobs
                        .iter()
                        .filter(|j| &j.user == user && j.submit <= t && t < j.start);
                    (k as f64 * BUCKET_S, waiting.map(|j| j.cpus).sum())
                })
                .collect(),
        })
        .collect();
    line_chart(&LineChart {
        size: (760, 300),
        x: Axis::new(&format!("{title}: seconds since the first submission")),
        y: Axis::new("processors waiting").with_zero(),
        series,
        hline: None,
        markers: false,
        legend: true,
    })
}
