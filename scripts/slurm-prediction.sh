#!/usr/bin/env bash
# How well `fairshare replay` predicts what a real Slurm did (issue 50): every run of the
# experiments of scripts/slurm-experiment.sh (LAYOUT=many) replayed from its own sacct dump by
#
#   replay.json          --scheduler slurm, Fair Tree's recomputations at the run's own phase
#                        (below): the prediction docs/slurm-prediction.md reports;
#   replay-nophase.json  --scheduler slurm with recomputations on the minute (phase unknown);
#   replay-easy.json     --scheduler easy, the replay as it was before the Slurm model;
#   replay-noconf.json   for a run with RUN/config.txt, --scheduler slurm at the run's phase
#                        without it: Slurm's defaults, so no job priority terms besides the
#                        policy's (what modelling them buys);
#   replay-turns-K.json  with TURN_SEEDS="1 2 …": as replay.json with --turn-seed K, the
#                        background loop's turns within each second drawn with seed K (what a
#                        dump of whole seconds cannot tell; results.md then says how far it
#                        moves each prediction);
#   replay-log.json      for a run that kept its RUN/slurmctld.log: as replay.json with
#                        --slurmctld-log, every job's submission, start and end to the
#                        millisecond, the background loop's turns and the backfill's cycles
#                        read from the log instead of assumed;
#
# then crates/report/examples/slurm_experiment/ writes OUT_DIR/results.md (and the plots),
# results-replay-nophase.md and results-replay-easy.md (and -noconf, -log) for each experiment
# folder.
#
# The phase: Slurm's decay thread recomputes the fairshare factors PriorityCalcPeriod (here
# 60 s) apart, counted from whenever slurmctld started. The run's sprio.log (pending jobs'
# priorities every 2 s) shows when the priorities changed; the most common second of the
# minute at which they did is the phase given to the replay as `refresh-offset=`. Only Slurm's
# own Fair Tree runs (slurm, slurm2) need it: the adapter's runs are ordered by the site factors
# it wrote, which the replay's policy computes itself.
#
# The Slurm configuration: RUN/config.txt (`scontrol show config` and `scontrol show node`,
# saved by the experiment script since the runs with job priorities, and `scontrol show
# partition` since the runs with two partitions) is given to the slurm replays as
# --slurm-conf; runs without it replay with Slurm's defaults, which were theirs. When it holds
# the partitions, it is every replay's --machines too: all 16 nodes, each job on its
# partition's. An adapter run's site factors weigh in at the weight its watcher wrote them
# with (`weight` of RUN/slurm.toml, given as --site-weight), every `interval_s` at the phase
# its passes fell at in RUN/watch.log (--site-interval INTERVAL@PHASE).
#
# Node counts: every job of these experiments was submitted with `sbatch -n CPUS` and no `-N`,
# which sacct records as ReqNodes 1: Slurm may spread it over as many nodes as it likes. Dumps
# taken before the experiment script asked for ReqNodes lack the column; for them this script
# writes RUN/sacct-reqnodes.txt, the dump with ReqNodes 1 added to every job, and replays that
# (the replay otherwise holds each job to the nodes it was given, and says so).
#
# Usage: scripts/slurm-prediction.sh OUT_DIR...   (folders written by slurm-experiment.sh)
#   FAIRSHARE=…   the fairshare binary (default target/release/fairshare)
#   CARGO=…       how cargo is run for the analysis (default cargo)
#   PLACEMENT=…   the slurm replays' --placement (default slurm, Slurm's cons_tres node
#                 selection; first for the tables measured before 2026-11-27)
#   TURN_SEEDS=…  seeds for the replays with the loop's turns drawn (default none)
# Takes seconds per folder besides the analysis' build; needs no Slurm.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fairshare=${FAIRSHARE:-$root/target/release/fairshare}
cargo=${CARGO:-cargo}
[ -x "$fairshare" ] || { echo "no fairshare binary at $fairshare (cargo build --release, or set FAIRSHARE)" >&2; exit 1; }
[ $# -gt 0 ] || { sed -n 's/^# Usage: /usage: /p' "$0" >&2; exit 2; }

fair_tree="fairshare:function=fair-tree,decay=half-life:600,refresh=60,usage=billing"

# The second of the minute at which a run's pending priorities most often changed.
phase() {
  awk -F'|' '
    /^# / { t = substr($0, 3); next }
    NF >= 3 { if (($1 in last) && last[$1] != $3 && !(t in seen)) { seen[t] = 1; n[substr(t, 18, 2) + 0]++ } last[$1] = $3 }
    END { best = -1; for (s in n) if (n[s] > best || (n[s] == best && s + 0 < pick)) { best = n[s]; pick = s + 0 } print (best < 0 ? 0 : pick) }
  ' "$1"
}

# How far past each multiple of INTERVAL seconds since the epoch the watcher's passes fell:
# the median, around the first, of the times its log ends a pass at ("N pending jobs of …");
# nothing when the log is missing or holds no pass.
watch_phase() {
  [ -s "$1" ] || return 0
  python3 - "$1" "$2" <<'PY'
import datetime, statistics, sys
interval = float(sys.argv[2])
phases = []
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    if " pending jobs of " in line:
        stamp = line.split()[0].replace("Z", "+00:00")
        phases.append(datetime.datetime.fromisoformat(stamp).timestamp() % interval)
if phases:
    first = phases[0]
    around = [(p - first + interval / 2) % interval - interval / 2 for p in phases]
    print(f"{(first + statistics.median(around)) % interval:.2f}")
PY
}

policy_of() {
  case $1 in
    slurm | slurm2) echo "$fair_tree" ;;
    sdrf | sdrf-limits) echo "sdrf:delta=0.998845" ;;
    pe) echo "fairshare:usage=pe,decay=half-life:600,refresh=5" ;;
    *) return 1 ;;
  esac
}

for out in "$@"; do
  for dir in "$out"/*/; do
    name=$(basename "$dir")
    [ -s "$dir/sacct.txt" ] || continue
    policy=$(policy_of "$name") || { echo "$name: not a run this script knows; passed over" >&2; continue; }
    phased=$policy
    if [ "$policy" = "$fair_tree" ] && [ -s "$dir/sprio.log" ]; then
      phased="$policy,refresh-offset=$(phase "$dir/sprio.log")"
    fi
    dump=$dir/sacct.txt
    if ! head -1 "$dump" | tr '|' '\n' | grep -qx ReqNodes; then
      dump=$dir/sacct-reqnodes.txt
      awk -F'|' -v OFS='|' 'NR == 1 { print $0, "ReqNodes"; next } { print $0, ($1 ~ /\./ ? "" : 1) }' \
        "$dir/sacct.txt" >"$dump"
    fi
    # The run's own nodes and partitions when it saved them (each job on its partition's
    # nodes), else the experiment's machines.toml (partition cpu's 12 nodes).
    machines=$out/machines.toml
    grep -q '^PartitionName=' "$dir/config.txt" 2>/dev/null && machines=$dir/config.txt
    cluster=(--machines "$machines" --shares "$dir/assoc.txt"
      --partitions "$dir/partitions.txt" --qos "$dir/qos.txt" --drain --gantt 0s+2h)
    slurm=(--scheduler slurm)
    slurm+=(--placement "${PLACEMENT:-slurm}")
    [ -s "$dir/config.txt" ] && slurm+=(--slurm-conf "$dir/config.txt")
    # The weight the watcher wrote its site factors with, beside Slurm's other terms.
    weight=$(sed -n 's/^weight = \([0-9]*\)$/\1/p' "$dir/slurm.toml" 2>/dev/null || true)
    [ -n "$weight" ] && slurm+=(--site-weight "$weight")
    # How often the watcher wrote them, and when: its passes' phase, read from its log.
    interval=$(sed -n 's/^interval_s = \([0-9.]*\)$/\1/p' "$dir/slurm.toml" 2>/dev/null || true)
    if [ -n "$interval" ]; then
      offset=$(watch_phase "$dir/watch.log" "$interval")
      slurm+=(--site-interval "${interval}s${offset:+@${offset}s}")
    fi
    "$fairshare" replay "$dump" --policy "$phased" "${cluster[@]}" "${slurm[@]}" \
      --json "$dir/replay.json" --jobs "$dir/jobs.csv" >"$dir/replay.txt" 2>&1
    "$fairshare" replay "$dump" --policy "$policy" "${cluster[@]}" "${slurm[@]}" \
      --json "$dir/replay-nophase.json" >/dev/null 2>&1
    "$fairshare" replay "$dump" --policy "$policy" "${cluster[@]}" --scheduler easy \
      --json "$dir/replay-easy.json" >/dev/null 2>&1
    if [ -s "$dir/config.txt" ]; then
      "$fairshare" replay "$dump" --policy "$phased" "${cluster[@]}" --scheduler slurm \
        --json "$dir/replay-noconf.json" >/dev/null 2>&1
    fi
    # Timed by the run's own slurmctld log, where the experiment kept it: each job's
    # submission, start and end to the millisecond, the background loop's turns and the
    # backfill's cycles.
    rm -f "$dir/replay-log.json"
    if [ -s "$dir/slurmctld.log" ]; then
      "$fairshare" replay "$dump" --policy "$phased" "${cluster[@]}" "${slurm[@]}" \
        --slurmctld-log "$dir/slurmctld.log" --json "$dir/replay-log.json" >/dev/null 2>&1
    fi
    rm -f "$dir"/replay-turns-*.json
    for seed in ${TURN_SEEDS:-}; do
      "$fairshare" replay "$dump" --policy "$phased" "${cluster[@]}" "${slurm[@]}" \
        --turn-seed "$seed" --json "$dir/replay-turns-$seed.json" >/dev/null 2>&1
    done
    echo "$out/$name: replayed under $phased" >&2
  done
  replays=(replay.json replay-nophase.json replay-easy.json)
  ls "$out"/*/replay-noconf.json >/dev/null 2>&1 && replays+=(replay-noconf.json)
  ls "$out"/*/replay-log.json >/dev/null 2>&1 && replays+=(replay-log.json)
  for replay in "${replays[@]}"; do
    (cd "$root" && "$cargo" run --release -q -p fairshare-report --features adapters \
      --example slurm_experiment -- "$out" "$replay" >/dev/null)
  done
  echo "$out: results.md, results-replay-nophase.md, results-replay-easy.md (and -noconf, -log)" >&2
done
