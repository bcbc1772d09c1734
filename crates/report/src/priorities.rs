//! The table of `fairshare priorities`: each account and user of a log's share tree at a
//! moment, with the columns `sshare -l` prints under the fairshare function (Slurm's names),
//! below a line saying the moment and what was charged. It is here, not in the command, so
//! that every table a person reads comes from this crate, from the lab's
//! [`PrioritiesDocument`].

use crate::text::{fixed, table};
use fairshare_core::model::RawShares;
use fairshare_core::usage::decay::Decay;
use fairshare_lab::{utc_date, PrioritiesDocument, PriorityRow};

/// The standings as an indented tree, with the columns `sshare -l` prints under the policy
/// (Slurm's names; `EffectvUsage` only under Slurm's functions, `LevelFS` under Fair Tree).
pub fn priorities_table(d: &PrioritiesDocument) -> String {
    let columns = d.policy.entry().columns;
    let (slurm, fair_tree) = (columns.effective_usage, columns.level_fs);
    let mut headers = vec![
        "Account / User",
        "RawShares",
        "NormShares",
        "RawUsage",
        "NormUsage",
    ];
    headers.extend(slurm.then_some("EffectvUsage"));
    headers.push("FairShare");
    headers.extend(fair_tree.then_some("LevelFS"));
    headers.push("rank");
    let rows: Vec<Vec<String>> = d
        .priorities
        .rows
        .iter()
        .map(|r| row(r, slurm, fair_tree))
        .collect();
    let headers: Vec<String> = headers.into_iter().map(String::from).collect();
    format!("{}\n\n{}", summary(d), table(&headers, &rows))
}

/// One association's cells.
fn row(r: &PriorityRow, slurm: bool, fair_tree: bool) -> Vec<String> {
    let s = &r.standing;
    let root = r.parent.is_none();
    let mut cells = vec![
        format!("{}{}", "  ".repeat(r.depth), r.name),
        match (root, r.raw_shares) {
            (true, _) => String::new(),
            (false, RawShares::Count(raw)) => fixed(raw, 0),
            (false, RawShares::Parent) => "parent".into(),
        },
        if root {
            String::new()
        } else {
            fixed(s.normalized_shares, 6)
        },
        fixed(s.raw_usage.floor(), 0),
        fixed(s.normalized_usage, 6),
    ];
    if slurm {
        cells.push(fixed(s.effective_usage, 6));
    }
    cells.push(if r.user || !fair_tree {
        factor(s.factor)
    } else {
        String::new()
    });
    if fair_tree {
        cells.push(match (root, s.level_fs.is_finite()) {
            (true, _) => String::new(),
            (false, true) => fixed(s.level_fs, 6),
            (false, false) => "inf".into(),
        });
    }
    cells.push(s.rank.map_or(String::new(), |k| k.to_string()));
    cells
}

/// A factor with sshare's six decimals, or four significant digits where that shows nothing
/// (MetaCentrum's are tiny: shares over usage).
fn factor(f: f64) -> String {
    if f != 0.0 && f.abs() < 1e-4 {
        format!("{f:.3e}")
    } else {
        format!("{f:.6}")
    }
}

/// The line above the table: the moment, what was charged and what was not.
fn summary(d: &PrioritiesDocument) -> String {
    let p = &d.priorities;
    let moment = if d.dated {
        format!(
            "at {}, {} s after the log's first event",
            utc_date(p.at_log_s),
            fixed(p.at_s, 0)
        )
    } else {
        format!("at {} s after the log's first event", fixed(p.at_s, 0))
    };
    let without_start = match p.jobs_without_start {
        0 => String::new(),
        n => format!(
            "; {n} jobs never started (cancelled while they waited, or still waiting) and are charged nothing"
        ),
    };
    let system_wide = match p.jobs_priced_system_wide {
        0 => String::new(),
        n => format!("; {n} priced with Maui's system-wide PE (no machine could run them)"),
    };
    format!(
        "{moment}: {} jobs charged ({} × seconds, decayed by {}){without_start}{system_wide}",
        p.jobs_charged,
        d.usage,
        decay_text(&d.decay)
    )
}

/// The decay as the summary names it.
fn decay_text(decay: &Decay) -> String {
    let span = |s: f64| humantime::format_duration(std::time::Duration::from_secs_f64(s));
    match *decay {
        Decay::Continuous { half_life_s } => format!("half-life {}", span(half_life_s)),
        Decay::Step { period_s, factor } => format!("× {factor} every {}", span(period_s)),
        Decay::Slurm {
            half_life_s,
            period_s,
            reset,
            ..
        } => {
            let half_life = match half_life_s {
                0.0 => "no decay".to_string(),
                h => format!("half-life {}", span(h)),
            };
            let reset = reset.map_or(String::new(), |r| format!(", usage reset {r}"));
            format!(
                "Slurm's ticks every {}, {half_life}{reset}; factors as computed at the last tick",
                span(period_s)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fairshare_core::priority::fairshare::FairshareFunction;
    use fairshare_core::priority::fairshare::Standing;
    use fairshare_core::usage::metric::{cpu, pe, UsageMetric};
    use fairshare_lab::Priorities;

    /// An association: name, parent, depth, whether a user, raw shares.
    type Association = (&'static str, Option<&'static str>, usize, bool, f64);

    /// Rows of associations with their standings: normalised shares, raw usage, normalised
    /// and effective usage, level fairshare and factor, and rank.
    fn rows(rows: &[(Association, [f64; 6], Option<usize>)]) -> Vec<PriorityRow> {
        rows.iter()
            .map(
                |&((name, parent, depth, user, raw_shares), s, rank)| PriorityRow {
                    name: name.into(),
                    parent: parent.map(String::from),
                    depth,
                    user,
                    raw_shares: RawShares::Count(raw_shares),
                    standing: Standing {
                        normalized_shares: s[0],
                        raw_usage: s[1],
                        normalized_usage: s[2],
                        effective_usage: s[3],
                        level_fs: s[4],
                        factor: s[5],
                        rank,
                    },
                },
            )
            .collect()
    }

    /// The standings `fairshare priorities` gave (`--json`) on one of two logs of the CLI's
    /// tests (crates/cli/tests/priorities.rs).
    fn document(
        policy: FairshareFunction,
        decay: Decay,
        (at_s, at_log_s, dated): (f64, f64, bool),
        (jobs_charged, jobs_without_start): (u64, u64),
        rows: Vec<PriorityRow>,
    ) -> PrioritiesDocument {
        PrioritiesDocument {
            schema_version: 1,
            trace: vec!["log".into()],
            policy,
            decay,
            usage: UsageMetric::new(&cpu::CPU),
            priorities: Priorities {
                at_s,
                at_log_s,
                jobs_charged,
                jobs_without_start,
                jobs_priced_system_wide: 0,
                rows,
            },
            dated,
        }
    }

    /// `fairshare priorities jobs.sacct --shares shares.toml --at 2h`: a Slurm dump (physics
    /// with alice and bob, chemistry with carol, one job pending) under Fair Tree. The
    /// expected table is what the command printed before the table moved here.
    #[test]
    fn a_slurm_dump_under_fair_tree_reads_as_sshare() {
        let rows = rows(&[
            (
                ("root", None, 0, false, 1.0),
                [1.0, 190088.6374950543, 1.0, 1.0, 1.0, 0.0],
                None,
            ),
            (
                ("chemistry", Some("root"), 1, false, 1.0),
                [
                    0.5,
                    14311.166429690822,
                    0.07528680629352802,
                    0.07528680629352802,
                    6.641269893301108,
                    0.0,
                ],
                None,
            ),
            (
                ("carol", Some("chemistry"), 2, true, 1.0),
                [1.0, 14311.166429690822, 0.07528680629352802, 1.0, 1.0, 1.0],
                Some(1),
            ),
            (
                ("physics", Some("root"), 1, false, 1.0),
                [
                    0.5,
                    175777.4710653635,
                    0.924713193706472,
                    0.924713193706472,
                    0.5407081929867144,
                    0.0,
                ],
                None,
            ),
            (
                ("alice", Some("physics"), 2, true, 1.0),
                [
                    0.5,
                    57363.0018693898,
                    0.30176975660042943,
                    0.3263387595789176,
                    1.5321502130030815,
                    0.6666666666666666,
                ],
                Some(2),
            ),
            (
                ("bob", Some("physics"), 2, true, 1.0),
                [
                    0.5,
                    118414.4691959737,
                    0.6229434371060426,
                    0.6736612404210824,
                    0.7422128066733767,
                    0.3333333333333333,
                ],
                Some(3),
            ),
        ]);
        let decay = Decay::Continuous {
            half_life_s: 604_800.0,
        };
        let d = document(
            FairshareFunction::FAIR_TREE,
            decay,
            (7200.0, 1_704_074_400.0, true),
            (4, 1),
            rows,
        );
        assert_eq!(
            priorities_table(&d),
            "at 2024-01-01T02:00:00Z, 7200 s after the log's first event: 4 jobs charged (cpu × seconds, decayed by half-life 7days); 1 jobs never started (cancelled while they waited, or still waiting) and are charged nothing

Account / User  RawShares  NormShares  RawUsage  NormUsage  EffectvUsage  FairShare   LevelFS  rank
──────────────  ─────────  ──────────  ────────  ─────────  ────────────  ─────────  ────────  ────
root                                     190088   1.000000      1.000000
  chemistry             1    0.500000     14311   0.075287      0.075287             6.641270
    carol               1    1.000000     14311   0.075287      1.000000   1.000000  1.000000     1
  physics               1    0.500000    175777   0.924713      0.924713             0.540708
    alice               1    0.500000     57363   0.301770      0.326339   0.666667  1.532150     2
    bob                 1    0.500000    118414   0.622943      0.673661   0.333333  0.742213     3
"
        );
    }

    /// `fairshare priorities usage.swf --at 15000 --function metacentrum --decay
    /// step:20000s:0.5`: an SWF log of seconds under MetaCentrum's function, whose tiny factors
    /// are written with four significant digits, without Slurm's columns. The expected table is
    /// what the command printed before the table moved here.
    #[test]
    fn metacentrum_on_a_log_of_seconds_shows_tiny_factors() {
        let rows = rows(&[
            (
                ("root", None, 0, false, 1.0),
                [1.0, 5000.0, 1.0, 1.0, 1.0, 0.0002],
                None,
            ),
            (
                ("1", Some("root"), 1, true, 1.0),
                [
                    0.3333333333333333,
                    1000.0,
                    0.2,
                    0.2,
                    1.6666666666666665,
                    0.0003333333333333333,
                ],
                Some(2),
            ),
            (
                ("2", Some("root"), 1, true, 1.0),
                [
                    0.3333333333333333,
                    4000.0,
                    0.8,
                    0.8,
                    0.41666666666666663,
                    8.333333333333333e-05,
                ],
                Some(3),
            ),
            (
                ("3", Some("root"), 1, true, 1.0),
                [
                    0.3333333333333333,
                    0.0,
                    0.0,
                    0.0,
                    f64::INFINITY,
                    0.3333333333333333,
                ],
                Some(1),
            ),
        ]);
        let decay = Decay::Step {
            period_s: 20_000.0,
            factor: 0.5,
        };
        let mut d = document(
            FairshareFunction::METACENTRUM,
            decay,
            (15_000.0, 15_000.0, false),
            (2, 0),
            rows,
        );
        assert_eq!(
            priorities_table(&d),
            "at 15000 s after the log's first event: 2 jobs charged (cpu × seconds, decayed by × 0.5 every 5h 33m 20s)

Account / User  RawShares  NormShares  RawUsage  NormUsage  FairShare  rank
──────────────  ─────────  ──────────  ────────  ─────────  ─────────  ────
root                                       5000   1.000000   0.000200
  1                     1    0.333333      1000   0.200000   0.000333     2
  2                     1    0.333333      4000   0.800000   8.333e-5     3
  3                     1    0.333333         0   0.000000   0.333333     1
"
        );
        // Jobs no machine could run are counted in the summary, as on wagap-2013 under the PE
        // (`--usage pe --function metacentrum --decay step:72h:0.5`).
        d.usage = UsageMetric::new(&pe::PE);
        d.decay = Decay::Step {
            period_s: 259_200.0,
            factor: 0.5,
        };
        d.priorities.at_s = 9_521_692.0;
        d.priorities.jobs_charged = 17_898;
        d.priorities.jobs_priced_system_wide = 1;
        let table = priorities_table(&d);
        assert_eq!(
            table.lines().next(),
            Some("at 9521692 s after the log's first event: 17898 jobs charged (pe × seconds, decayed by × 0.5 every 3days); 1 priced with Maui's system-wide PE (no machine could run them)")
        );
    }
}
