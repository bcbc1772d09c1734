#!/usr/bin/env bash
# Runs the same commands with two `fairshare` binaries and compares their outputs byte for
# byte: the check a restructuring must pass (every shared trace and example, JSON documents,
# tables and reports). Usage: scripts/same-outputs.sh OLD_BIN NEW_BIN [TRACES]
set -uo pipefail
old=$1 new=$2 traces=${3:-../shared/traces}
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
swf=$traces/swf
runs=(
  "replay $swf/wagap-2013.swf --machines $swf/wagap-2013.swf.machines --scheduler easy --policy fifo --policy drf --policy sdrf:delta=0.999999 --policy fairshare --policy fairshare:function=pbs,usage=pe --policy fairshare:function=metacentrum --policy kueue-afs --queues examples/wagap-2013.queues --json - --jobs JOBS"
  "replay $swf/wagap-2013.swf --capacity-fraction 0.7 --shares examples/shares.toml --policy fairshare --policy fairshare:function=slurm-classic --horizon 30d --json -"
  "replay $swf/METACENTRUM-2009-2.swf.gz --policy fifo --policy drf --policy fairshare --policy decayed-usage:half-life=1d --scheduler conservative --horizon 60d --json -"
  "replay $swf/KTH-SP2-1996-2.1-cln.swf.gz --policy drf --policy smallest-first --policy sdrf:delta=0.9999 --json -"
  "replay $traces/google-2011/task_events/part-00000-of-00500.csv.gz --capacity-fraction 0.5 --policy drf --policy sdrf:delta=0.999999 --json -"
  "replay $swf/wagap-2013.swf --policy drf --policy fairshare --horizon 10d"
  "sweep $swf/KTH-SP2-1996-2.1-cln.swf.gz --fractions 0.5,1 --nines 3,6 --json -"
  "priorities $swf/wagap-2013.swf --shares examples/shares.toml --at 40d --policy fair-tree --json -"
  "priorities $swf/wagap-2013.swf --shares examples/shares.toml --at 40d --policy slurm-classic"
  "priorities $swf/METACENTRUM-2009-2.swf.gz --policy metacentrum --decay step:72h:0.5 --json -"
  "penalty --machines examples/catalogue.toml --cpus 4 --mem 8G --json -"
  "baa timeline examples/baa/late-joiner.toml --json -"
)
for file in examples/allocate/*.json; do runs+=("allocate $file --json"); done
for file in examples/bottleneck/fig0[1-5]*.toml; do runs+=("simulate $file --json -"); done
for file in examples/runtime/*.toml; do runs+=("simulate $file --json -"); done
same=0 differ=0
for run in "${runs[@]}"; do
  for side in old new; do
    bin=${!side}
    args=${run//JOBS/$out/$side.jobs.csv}
    # shellcheck disable=SC2086
    # The terminal tables' wall-clock column is the one figure that may differ.
    "$bin" $args 2> "$out/$side.err" | sed -E 's/ +[0-9]+\.[0-9]+ s$//' > "$out/$side.out"
    echo "exit ${PIPESTATUS[0]}" >> "$out/$side.out"
  done
  [ "$(tail -1 "$out/new.out")" = "exit 0" ] || echo "note: fairshare $run: $(tail -1 "$out/new.out"): $(head -c 200 "$out/new.err")"
  if cmp -s "$out/old.out" "$out/new.out" && { [ ! -e "$out/old.jobs.csv" ] || cmp -s "$out/old.jobs.csv" "$out/new.jobs.csv"; }; then
    same=$((same + 1))
  else
    differ=$((differ + 1))
    echo "DIFFERENT: fairshare $run"
    diff "$out/old.out" "$out/new.out" | head -5
  fi
  rm -f "$out"/*.jobs.csv
done
echo "$same commands gave the same output byte for byte, $differ did not"
[ "$differ" -eq 0 ]
