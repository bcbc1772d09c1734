#!/usr/bin/env bash
# Writes every user-visible output of one `fairshare` binary into a folder, so two builds can be
# compared byte for byte (`diff -r`): replay and sweep of every shared trace (text, JSON, HTML),
# every shipped scenario under every process policy, every allocate example under both rules.
# Wall-clock figures (run time, events per second) are the only values that differ between two
# identical runs; they are masked as "WALL" so the rest must match exactly.
#
#   scripts/outputs.sh target/release/fairshare /tmp/outputs-after
#   diff -r /tmp/outputs-before /tmp/outputs-after
set -euo pipefail
bin=$(realpath "$1")
out=$(realpath -m "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
traces=$root/../shared/traces
mkdir -p "$out"
cd "$root"

# Masks what a clock decides: "wall_s"/"events_per_s" values in JSON and the run-time cells of
# the tables and reports.
mask() {
  sed -E -e 's/"(wall_s|events_per_s)": ?[-0-9.e+]+/"\1":WALL/g' \
         -e 's/( (–|[0-9]+) +)[0-9]+\.[0-9]{2} s$/\1WALL s/' \
         -e 's#(<td>(–|[0-9]+)</td><td>)[0-9]+\.[0-9]{2} s</td></tr>#\1WALL s</td></tr>#' \
         -e 's#in [0-9.]+ s wall \([^)]*\)#in WALL s wall (WALL/s)#'
}

# run NAME ARGS...: text to NAME.txt, JSON to NAME.json, HTML to NAME.html, exit status kept.
run() {
  local name=$1; shift
  local status=0
  "$bin" "$@" --json "$out/$name.json" --report "$out/$name.html" >"$out/$name.txt" 2>"$out/$name.err" || status=$?
  echo "$status" >"$out/$name.status"
  for f in "$out/$name".{txt,json,html,err}; do
    [ -f "$f" ] && mask <"$f" >"$f.masked" && mv "$f.masked" "$f"
  done
  # Progress bars go to standard error only on a terminal; keep the messages, not the bars.
  return 0
}

if [ -d "$traces" ]; then
  G=$(ls "$traces"/google-2011/task_events/*.csv.gz)
  S=$traces/swf
  A=$traces/alibaba-gpu-2023
  # shellcheck disable=SC2086
  run replay-google replay $G --capacity-fraction 0.5 --policy fifo --policy drf --policy asset \
      --policy sdrf:delta=0.9999 --policy sdrf:delta=0.9999,form=max-of-sums
  # shellcheck disable=SC2086
  run replay-google-skip replay $G --capacity-fraction 0.7 --rule skip --drain --policy drf --policy sdrf:delta=0.999
  run replay-kth replay "$S/KTH-SP2-1996-2.1-cln.swf.gz" --capacity cpu=100 --drain --policy fifo --policy drf
  run replay-metacentrum replay "$S/METACENTRUM-2009-2.swf.gz" --policy drf --policy sdrf:delta=0.99999
  run replay-wagap replay "$S/wagap-2013.swf" --policy fifo --policy drf
  run replay-wagap-machines replay "$S/wagap-2013.swf" --machines "$S/wagap-2013.swf.machines" --policy drf --policy sdrf
  run replay-alibaba replay "$A/openb_pod_list_default.csv" --policy drf --policy sdrf:delta=0.999
  run replay-alibaba-nodes replay "$A/openb_pod_list_default.csv" --machines "$A/openb_node_list_all_node.csv" --policy drf
  # shellcheck disable=SC2086
  run sweep-google sweep $G --drain
  run sweep-kth sweep "$S/KTH-SP2-1996-2.1-cln.swf.gz" --fractions 0.5,1.0 --nines 3,5
  # shellcheck disable=SC2086
  "$bin" sweep $G --shard 1/3 --json "$out/shard1.json" >/dev/null 2>&1 || true
  # shellcheck disable=SC2086
  "$bin" sweep $G --shard 0/3 --json "$out/shard0.json" >/dev/null 2>&1 || true
  # shellcheck disable=SC2086
  "$bin" sweep $G --shard 2/3 --json "$out/shard2.json" >/dev/null 2>&1 || true
  run replay-wagap-fairshare replay "$S/wagap-2013.swf" --machines "$S/wagap-2013.swf.machines" \
      --queues examples/wagap-2013.queues --scheduler easy --policy fairshare \
      --policy fairshare:function=slurm-classic,usage=pe --policy fairshare:function=pbs,decay=step:259200:0.5,charge=finish \
      --policy fairshare:function=metacentrum,usage=maui-pe --policy kueue-afs --policy decayed-usage \
      --policy decayed-usage:half-life=3600
  run replay-kth-shares replay "$S/KTH-SP2-1996-2.1-cln.swf.gz" --shares examples/shares.toml --capacity cpu=100 \
      --scheduler conservative --policy fairshare --policy weighted-drf --policy sdrf
  for function in fair-tree slurm-classic pbs metacentrum; do
    "$bin" priorities "$S/KTH-SP2-1996-2.1-cln.swf.gz" --shares examples/shares.toml --policy "$function" \
        >"$out/priorities-kth-$function.txt" 2>&1 || echo "exit $?" >>"$out/priorities-kth-$function.txt"
    "$bin" priorities "$S/KTH-SP2-1996-2.1-cln.swf.gz" --shares examples/shares.toml --policy "$function" \
        --at 30d --json - >"$out/priorities-kth-$function.json" 2>&1 || echo "exit $?" >>"$out/priorities-kth-$function.json"
  done
  "$bin" priorities "$S/wagap-2013.swf" --usage pe --machines "$S/wagap-2013.swf.machines" \
      >"$out/priorities-wagap-pe.txt" 2>&1 || echo "exit $?" >>"$out/priorities-wagap-pe.txt"
  for request in "--cpus 1 --mem 150GiB" "--cpus 4 --mem 64GiB --walltime 2h --nodes 2" "--cpus 100" "--cpus 2 --exclusive"; do
    name=$(echo "$request" | tr -c 'a-zA-Z0-9\n' '_')
    # shellcheck disable=SC2086
    "$bin" penalty --machines "$S/wagap-2013.swf.machines" $request >"$out/penalty-wagap-$name.txt" 2>&1 || echo "exit $?" >>"$out/penalty-wagap-$name.txt"
    # shellcheck disable=SC2086
    "$bin" penalty --machines examples/catalogue.toml $request --gpus 1 --json - >"$out/penalty-catalogue-$name.json" 2>&1 || echo "exit $?" >>"$out/penalty-catalogue-$name.json"
    # shellcheck disable=SC2086
    "$bin" penalty --machines "$A/openb_node_list_all_node.csv" $request >"$out/penalty-alibaba-$name.txt" 2>&1 || echo "exit $?" >>"$out/penalty-alibaba-$name.txt"
  done
  # The Slurm model: its timing (spaced passes, drawn turns, backfill cycles, completing nodes,
  # kills at the limit, will-run planning), on an SWF trace and on a dump with its controller's
  # log. The dump and the log are made from KTH's first 2,000 jobs here, each run, and named
  # relative to the output folder, so that two folders' outputs compare equal.
  K=$S/KTH-SP2-1996-2.1-cln.swf.gz
  conf=slurm-conf.txt
  printf '%s\n' 'SchedulerParameters=bf_interval=45,bf_resolution=120,bf_window=1440,bf_max_job_test=50,default_queue_depth=30,sched_interval=50' \
    'OverTimeLimit=1' 'PriorityWeightAge=1000' 'PriorityWeightJobSize=500' 'PriorityWeightFairshare=10000' >"$out/$conf"
  zcat "$K" | awk -v dump="$out/kth.sacct" -v events="$out/kth-slurmctld.unsorted" '
    BEGIN { print "JobID|User|Account|Partition|Submit|Start|End|Timelimit|AllocTRES|ReqNodes|State" > dump; n = 0 }
    /^;/ || NF < 12 || $4 < 0 || $5 < 1 || $2 < 0 || $3 < 0 { next }
    n++ >= 2000 { next }
    function at(t) { return strftime("%Y-%m-%dT%H:%M:%S", 1767225600 + t, 1) }
    function ms(t, id, k) { return sprintf("[%s.%03d]", at(t), (id * 37 + k * 211) % 1000) }
    {
      s = $2; b = $2 + $3; e = b + $4; lim = ($9 > 0 ? int(($9 + 59) / 60) : 60)
      h = int(lim / 60); m = lim % 60
      printf "%d|u%d|g%d|cpu|%s|%s|%s|%02d:%02d:00|cpu=%d,node=1|1|COMPLETED\n", $1, $12, $12 % 5, at(s), at(b), at(e), h, m, $5 > dump
      printf "%.0f %s _slurm_rpc_submit_batch_job: JobId=%d InitPrio=1 usec=300\n", s * 1000 + (($1 * 37) % 1000), ms(s, $1, 0), $1 > events
      started = ($1 % 3 ? "sched: Allocate JobId=%d NodeList=n1 #CPUs=%d Partition=cpu" : "sched/backfill: _start_job: Started JobId=%d in cpu on n1 %d")
      printf "%.0f %s " started "\n", b * 1000 + (($1 * 37 + 211) % 1000), ms(b, $1, 1), $1, $5 > events
      printf "%.0f %s _job_complete: JobId=%d done\n", e * 1000 + (($1 * 37 + 422) % 1000), ms(e, $1, 2), $1 > events
    }'
  { echo "[$(date -u -d @1767225570 +%Y-%m-%dT%H:%M:%S).400] Running as primary controller"
    sort -n -s -k1,1 "$out/kth-slurmctld.unsorted" | cut -d' ' -f2-; } >"$out/kth-slurmctld.log"
  rm -f "$out/kth-slurmctld.unsorted"
  fair_tree=fairshare:function=fair-tree,decay=half-life:600,refresh=60,usage=billing
  cd "$out"
  run slurm-kth replay "$K" --capacity cpu=100 --drain --scheduler slurm --policy "$fair_tree" --policy sdrf:delta=0.9999
  run slurm-kth-conf replay "$K" --capacity cpu=100 --drain --scheduler slurm --slurm-conf "$conf" --policy "$fair_tree"
  run slurm-kth-seed replay "$K" --capacity cpu=100 --drain --scheduler slurm --turn-seed 3 --policy sdrf:delta=0.9999
  run slurm-wagap replay "$S/wagap-2013.swf" --machines "$S/wagap-2013.swf.machines" --scheduler slurm \
      --placement slurm --policy "$fair_tree" --policy drf
  run slurm-dump replay kth.sacct --machines "$root/examples/catalogue.toml" --drain --scheduler slurm --placement slurm \
      --slurm-conf "$conf" --policy "$fair_tree,refresh-offset=17"
  run slurm-dump-log replay kth.sacct --capacity cpu=100 --drain --scheduler slurm \
      --slurmctld-log kth-slurmctld.log --policy "$fair_tree"
  run slurm-dump-site replay kth.sacct --capacity cpu=100 --drain --scheduler slurm \
      --slurmctld-log kth-slurmctld.log --site-weight 1000 --site-interval 30s --policy sdrf:delta=0.998845
  run slurm-dump-easy replay kth.sacct --capacity cpu=100 --drain --scheduler easy --policy "$fair_tree"
  cd "$root"
  run sweep-merged sweep merge "$out"/shard?.json
  for f in "$out"/shard?.json; do mask <"$f" >"$f.m" && mv "$f.m" "$f"; done
else
  echo "outputs.sh: ../shared/traces absent; traces skipped" >&2
fi

for scenario in examples/bottleneck/*.toml; do
  base=$(basename "$scenario" .toml)
  for policy in bottleneck per-resource drf fifo; do
    run "simulate-$base-$policy" simulate "$scenario" --policy "$policy"
  done
done

for instance in examples/allocate/*.json; do
  base=$(basename "$instance" .json)
  for rule in head-of-line skip; do
    "$bin" allocate "$instance" --rule "$rule" >"$out/allocate-$base-$rule.txt" 2>&1 || echo "exit $?" >>"$out/allocate-$base-$rule.txt"
    "$bin" allocate "$instance" --rule "$rule" --json >"$out/allocate-$base-$rule.json" 2>&1 || echo "exit $?" >>"$out/allocate-$base-$rule.json"
  done
done
for command in "" allocate replay sweep "sweep merge" simulate; do
  # shellcheck disable=SC2086
  "$bin" $command --help >"$out/help-${command// /-}.txt" 2>&1 || true
done
echo "outputs written to $out ($(ls "$out" | wc -l) files)"
