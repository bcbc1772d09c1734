#!/usr/bin/env bash
# The Slurm adapter's experiment (issues 29 and 47): the same workload on the real one-host
# Slurm of scripts/slurm/up.sh, once per run —
#
#   slurm  Slurm's own Fair Tree (PriorityWeightFairshare=100000), no adapter;
#   sdrf   `fairshare slurm watch --interval 5s` with policy sdrf:delta=0.998845
#          (1 − δ = ln 2 / 600: commitments halve in 10 minutes, like Slurm's half-life);
#   pe     the same watch with fairshare:usage=pe,decay=half-life:600,refresh=5;
#
# the two watch runs with PriorityWeightFairshare=0 (mapping `replace`, weight 10000), so that a
# pending job's priority is its site factor alone. Each run starts from a fresh cluster
# (`up.sh --fresh fair-tree`: no jobs, no usage), submits the workload, waits until every job
# has ended, stops the watcher with SIGTERM (it must exit 0 and log its stop line) and dumps
# `sacct` in the format `fairshare replay` reads. Then each dump is replayed under the run's
# policy (`fairshare replay --scheduler easy --gantt …`, which lists every job's predicted
# start), and crates/report/examples/slurm_experiment/ writes the tables and plots.
#
# The workload (deterministic; t in seconds from the run's start):
#   t = 0        alice fills the machine: 2 jobs × 4 CPUs × 120 s (--mem=250M each);
#   t = 30…170   alice, bob and carol each submit one 2-CPU, 20-s job (--mem=1000M) every 10 s,
#                15 jobs each; within a tick the order of the three rotates, so no user is
#                always first among equal priorities.
# The stream asks for 1.5 times the machine (3 × 2 CPUs × 20 s every 10 s, on 8 CPUs), so a
# backlog of about ten jobs per user builds while alice's fill runs and keeps growing until the
# stream stops: who goes first decides every wait, and the last jobs end near t = 370 s.
# The stream's jobs ask for half the node's memory per quarter of its CPUs, so a Processor
# Equivalent that saw memory would charge them twice their CPUs; under the cluster's
# SelectTypeParameters=CR_CPU, though, Slurm allocates and records no memory (sacct's AllocTRES
# is `billing=2,cpu=2,node=1`), so `pe` prices CPUs alone here (see docs/slurm-experiment.md).
#
# Scaled down from a production cluster: minutes instead of days, a 10-minute half-life instead
# of a week (PriorityCalcPeriod 1 minute), one 8-CPU node, three users in two accounts
# (physics 3 shares: alice, bob; chemistry 1 share: carol), a watch every 5 s.
#
# LAYOUT=many runs it on up.sh's many-node layout (16 nodes; the workload uses the 12 nodes,
# 96 CPUs, of partition cpu) with a workload drawn from a real log by `fairshare slurm draw`
# (see docs/slurm-experiment.md): 300 jobs of wagap-2013 after its first 12,000, dealt to the
# layout's nine users, runs mapped onto 10..60 s on a log scale, at most 16 CPUs, submissions
# compressed to offer 1.5 times the partition; saved in OUT_DIR/plan.txt and reused by later
# runs. Its runs are slurm, slurm2 (the slurm run again: how far two real runs of one
# workload differ, the floor a prediction cannot beat), sdrf and pe; the watcher's policies
# are as above, the replay of the slurm runs charges usage=billing (the layout bills memory),
# and every replay runs on the 12 nodes.
#
# Usage: scripts/slurm-experiment.sh [OUT_DIR]      (default /tmp/fairshare-slurm-experiment)
#   LAYOUT=one|many        the cluster and workload (default one)
#   RUNS="slurm sdrf pe"   the runs to make (default all of the layout's; others already in
#                          OUT_DIR are kept and analysed too); `sdrf-limits` is `sdrf` with
#                          the watcher's ends_at_limits = true
#   TRACE=…                LAYOUT=many: the log to draw from (default ../shared/traces/swf/
#                          wagap-2013.swf beside the project)
#   SKIP=…                 LAYOUT=many: the log's jobs passed over before the 300 drawn
#                          (default 12000)
#   PARTITIONS=…           LAYOUT=many: every job in partition cpu (default), or one job in
#                          four (the plan's 4th, 8th, … job) in partition gpu (its 4 nodes, 32
#                          CPUs, no GRES asked) and the load offered over all 128 CPUs;
#                          or, with tiers, one job in four in partition high, made for the
#                          run over n[09-16] with PriorityTier=2 (it shares n09-n12 with
#                          cpu, whose jobs the main scheduler keeps off them while a high
#                          job waits), the load offered over all 128 CPUs; or, with
#                          factors, the same partition high in cpu's tier with
#                          PriorityJobFactor=100 (cpu's is 1), which orders jobs only with
#                          PRIORITY_WEIGHT_PARTITION set; or, with exclusive, one job in four
#                          in partition whole, made for the run over the four gpu nodes with
#                          OverSubscribe=EXCLUSIVE (each of its jobs holds its nodes whole),
#                          the load offered over all 128 CPUs
#   QOS=none|mixed         LAYOUT=many: every job in QOS normal (default), or, with mixed, QOS
#                          high (Priority=100) for the plan's every 3rd job and low
#                          (Priority=20) for every 5th of the rest, both made for the run;
#                          they order jobs only with PRIORITY_WEIGHT_QOS set (scripts/slurm/
#                          up.sh reads it and the other PRIORITY_* weights from the
#                          environment)
#   ASSOC=none|mixed       LAYOUT=many: no association priority (default), or, with mixed,
#                          Priority=50 on account engineering (its users inherit it),
#                          100 on bob's association and 20 on carol's; they order jobs only
#                          with PRIORITY_WEIGHT_ASSOC set
#   FEATURES=none|fast     LAYOUT=many: no node features (default), or, with fast, feature
#                          fast on n01-n04 (32 of cpu's 96 CPUs, set for the run) and
#                          --constraint=fast on the plan's every 3rd job, which may then run
#                          on those nodes only
#   CANCEL=N               LAYOUT=many: every Nth job of the plan (the Nth, 2Nth, …) is
#                          cancelled by its user CANCEL_AFTER seconds (default 30) after its
#                          submission, whether it waits or runs by then (default 0: none)
#   LIMITS=none|capped     LAYOUT=many: no limits (default), or, with capped, account physics
#                          GrpTRES=cpu=48 and user alice MaxJobs=3 (set for the run, before
#                          the workload; AccountingStorageEnforce has limits), alice's raised
#                          to MaxJobs=5 LIMITS_CHANGE_AT seconds into the workload (default
#                          200), as a site raises a limit during a month
#   NODES=none|drained|reserved
#                          LAYOUT=many: every node up (default); or, with drained, n05-n08
#                          (32 of cpu's 96 CPUs) drained NODES_AT seconds into the workload
#                          (default 120) and resumed NODES_FOR seconds later (default 150),
#                          their running jobs left to finish, as a site drains nodes for
#                          maintenance; or, with reserved, a maintenance reservation
#                          (Flags=MAINT, for root) on n05-n08 from NODES_AT seconds into the
#                          workload for NODES_FOR seconds, made before the workload, which no
#                          job may cross
#   WINDOW_AFTER=N         also collect RUN/bundle-window, a bundle whose window opens N
#                          seconds into the run (default 0: none), as `collect --since` cuts
#                          a window from a site's life: the machine busy when it opens
#   FAIRSHARE=…            the fairshare binary (default $CARGO_TARGET_DIR or target/, debug)
#   CARGO=…                how cargo is run for the analysis (default cargo; cbuild here)
# Takes about 6.5 minutes per run (a fresh cluster, 6¼ minutes of workload, the dump), 20
# minutes in all with the replays and the analysis (measured: 19.5); LAYOUT=many about 9
# minutes per run. Safe to rerun: each run's
# folder is rewritten and the cluster's jobs and accounting are wiped at each run's start; at
# the end (also on failure or Ctrl-C) the watcher is stopped, the users' jobs are cancelled and
# PriorityWeightFairshare is back at 100000. Needs root (it submits as the users with su and
# edits slurm.conf).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mkdir -p "${1:-/tmp/fairshare-slurm-experiment}" && cd "${1:-/tmp/fairshare-slurm-experiment}" && pwd)
layout=${LAYOUT:-one}
fairshare=${FAIRSHARE:-${CARGO_TARGET_DIR:-$root/target}/debug/fairshare}
cargo=${CARGO:-cargo}
conf=/etc/slurm/slurm.conf
case $layout in
  one)
    runs=${RUNS:-slurm sdrf pe}
    users=(alice bob carol)
    everyone=alice,bob,carol,dave
    usage=""
    ;;
  many)
    runs=${RUNS:-slurm slurm2 sdrf pe}
    users=(alice bob carol dave erin frank grace heidi ivan)
    everyone=alice,bob,carol,dave,erin,frank,grace,heidi,ivan
    usage=",usage=billing"
    trace=${TRACE:-$root/../shared/traces/swf/wagap-2013.swf}
    skip=${SKIP:-12000}
    partitions=${PARTITIONS:-one}
    qos=${QOS:-none}
    case $qos in
      none | mixed) ;;
      *) echo "QOS is none or mixed, not '$qos'" >&2; exit 2 ;;
    esac
    cancel=${CANCEL:-0}
    window_after=${WINDOW_AFTER:-0}
    limits=${LIMITS:-none}
    limits_change_at=${LIMITS_CHANGE_AT:-200}
    case $limits in
      none | capped) ;;
      *) echo "LIMITS is none or capped, not '$limits'" >&2; exit 2 ;;
    esac
    nodes=${NODES:-none}
    nodes_at=${NODES_AT:-120}
    nodes_for=${NODES_FOR:-150}
    case $nodes in
      none | drained | reserved) ;;
      *) echo "NODES is none, drained or reserved, not '$nodes'" >&2; exit 2 ;;
    esac
    [[ $nodes_at =~ ^[0-9]+$ && $nodes_for =~ ^[0-9]+$ ]] \
      || { echo "NODES_AT and NODES_FOR are whole numbers of seconds, not '$nodes_at' and '$nodes_for'" >&2; exit 2; }
    [[ $window_after =~ ^[0-9]+$ ]] || { echo "WINDOW_AFTER is a whole number of seconds, not '$window_after'" >&2; exit 2; }
    cancel_after=${CANCEL_AFTER:-30}
    [[ $cancel =~ ^[0-9]+$ && $cancel_after =~ ^[0-9]+$ ]] \
      || { echo "CANCEL and CANCEL_AFTER are whole numbers, not '$cancel' and '$cancel_after'" >&2; exit 2; }
    features=${FEATURES:-none}
    case $features in
      none | fast) ;;
      *) echo "FEATURES is none or fast, not '$features'" >&2; exit 2 ;;
    esac
    assoc=${ASSOC:-none}
    case $assoc in
      none | mixed) ;;
      *) echo "ASSOC is none or mixed, not '$assoc'" >&2; exit 2 ;;
    esac
    case $partitions in
      one) plan_cpus=96 ;;
      two | tiers | factors | exclusive) plan_cpus=128 ;;
      *) echo "PARTITIONS is one, two, tiers, factors or exclusive, not '$partitions'" >&2; exit 2 ;;
    esac
    ;;
  *) echo "LAYOUT is one or many, not '$layout'" >&2; exit 2 ;;
esac

# The policies, as the watcher runs them and as the replay predicts each run.
sdrf_policy="sdrf:delta=0.998845"
pe_policy="fairshare:usage=pe,decay=half-life:600,refresh=5"
slurm_policy="fairshare:function=fair-tree,decay=half-life:600,refresh=60$usage"

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
now_ms() { date +%s%3N; }

[ -x "$fairshare" ] || { log "no fairshare binary at $fairshare (build it, or set FAIRSHARE)"; exit 1; }
[ "$(id -u)" = 0 ] || { log "run as root: it submits as the test users and edits $conf"; exit 1; }

# Sets PriorityWeightFairshare and waits until slurmctld uses it.
set_weight() {
  sed -i "s/^PriorityWeightFairshare=.*/PriorityWeightFairshare=$1/" "$conf"
  scontrol reconfigure
  for _ in $(seq 60); do
    scontrol show config | grep -Eq "^PriorityWeightFairShare += $1\$" && return 0
    sleep 0.5
  done
  log "slurmctld did not take PriorityWeightFairshare=$1"
  return 1
}

watcher=""
sampler=""
changer=""
drainer=""
# Whatever happens: the watcher and sampler stopped, the queue emptied, the weight restored.
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ -n "$watcher" ] && kill -TERM "$watcher" 2>/dev/null && wait "$watcher" 2>/dev/null || true
  rm -f /run/fairshare-slurm/submit-factors.txt
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null && wait "$sampler" 2>/dev/null || true
  [ -n "$changer" ] && kill "$changer" 2>/dev/null && wait "$changer" 2>/dev/null || true
  [ -n "$drainer" ] && kill "$drainer" 2>/dev/null && wait "$drainer" 2>/dev/null || true
  if [ "${nodes:-none}" != none ] && scontrol ping >/dev/null 2>&1; then
    scontrol delete ReservationName=maintenance 2>/dev/null || true
    scontrol update NodeName=n[05-08] State=RESUME 2>/dev/null || true
  fi
  for u in ${everyone//,/ }; do scancel -u "$u" 2>/dev/null || true; done
  if scontrol ping >/dev/null 2>&1; then
    set_weight 100000 || rc=1
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Submits, as $1, a job of $2 CPUs and $4 of memory sleeping $3 seconds, named $5.
submit() {
  su "$1" -c "sbatch --parsable --chdir=/tmp -o /dev/null -J $5 -n $2 --mem=$4 -t 3 --wrap 'sleep $3'" >/dev/null
}

# Sleeps until $1 seconds (to the millisecond) after the run's start ($t0, milliseconds).
at() {
  local wait_ms=$((t0 + $(awk -v s="$1" 'BEGIN { printf "%.0f", s * 1000 }') - $(now_ms)))
  if [ "$wait_ms" -gt 0 ]; then sleep "$((wait_ms / 1000)).$(printf %03d $((wait_ms % 1000)))"; fi
}

# The workload, from t = 0.
workload() {
  [ "$layout" = many ] && { workload_many; return; }
  at 0
  submit alice 4 120 250M fill
  submit alice 4 120 250M fill
  for tick in $(seq 0 14); do
    at $((30 + 10 * tick))
    for k in 0 1 2; do
      local u=${users[$(((tick + k) % 3))]}
      submit "$u" 2 20 1000M "s$tick"
    done
  done
}

# The drawn plan, from t = 0: each line's job as its user, at its time (with PARTITIONS=two,
# every 4th in partition gpu; with PARTITIONS=tiers or factors, in partition high;
# with PARTITIONS=exclusive, in partition whole; with QOS=mixed, every
# 3rd in QOS high and every 5th of the rest in QOS low; with FEATURES=fast, every 3rd asks
# for feature fast).
workload_many() {
  local at_s user cpus mem run limit rest memory partition job_qos constraint id n=0
  while IFS='|' read -r at_s user cpus mem run limit rest; do
    at "$at_s"
    memory=""
    [ "$mem" != 0 ] && memory="--mem-per-cpu=$mem"
    n=$((n + 1))
    partition=""
    if [ $((n % 4)) = 0 ]; then
      case $partitions in
        two) partition="-p gpu" ;;
        exclusive) partition="-p whole" ;;
        tiers | factors) partition="-p high" ;;
      esac
    fi
    job_qos=""
    if [ "${qos:-none}" = mixed ]; then
      if [ $((n % 3)) = 0 ]; then job_qos="--qos=high"; elif [ $((n % 5)) = 0 ]; then job_qos="--qos=low"; fi
    fi
    constraint=""
    [ "${features:-none}" = fast ] && [ $((n % 3)) = 0 ] && constraint="--constraint=fast"
    id=$(su "$user" -c "sbatch --parsable --chdir=/tmp -o /dev/null -J d -n $cpus $memory $partition $job_qos $constraint -t $limit --wrap 'sleep $run'")
    if [ "$cancel" -gt 0 ] && [ $((n % cancel)) = 0 ]; then
      (sleep "$cancel_after" && su "$user" -c "scancel $id" 2>/dev/null || true) &
    fi
  done < <(grep -v '^#' "$out/plan.txt")
}

# Every 2 s while the run lasts: every pending job's priority and site factor (sprio).
sample() {
  while true; do
    printf '# %s\n' "$(date -u +%Y-%m-%dT%H:%M:%S)"
    sprio --noheader -o '%i|%u|%Y|%F|%S' 2>/dev/null || true
    sleep 2
  done
}

# One run: $1 its name, $2 the policy the watcher runs (empty: Slurm alone).
run() {
  local name=$1 policy=$2 dir="$out/$1" fresh_s
  fresh_s=$(date +%s)
  rm -rf "$dir" && mkdir -p "$dir"
  log "$name: fresh cluster"
  # Where this run's lines of slurmctld's log begin (kept with the run: their milliseconds
  # say when each job was submitted and started within its second, and the controller's
  # start, before the workload, when its background loop's passes down the whole queue fall).
  local log_from
  log_from=$(stat -c %s /var/log/slurm/slurmctld.log 2>/dev/null || echo 0)
  bash "$root/scripts/slurm/up.sh" --fresh fair-tree --layout "$layout" >"$dir/up.log" 2>&1
  if [ -n "$policy" ]; then set_weight 0; else set_weight 100000; fi
  if [ "${partitions:-one}" = tiers ]; then
    # A partition of a higher tier over four of cpu's nodes (n09-n12) and the four gpu
    # nodes; a fresh cluster forgets it.
    scontrol create PartitionName=high Nodes=n[09-16] PriorityTier=2 MaxTime=INFINITE \
      State=UP TRESBillingWeights=CPU=1.0,Mem=0.25G
  fi
  if [ "${partitions:-one}" = factors ]; then
    # The same nodes in the same tier as cpu's, with a partition factor 100 times cpu's
    # (PriorityJobFactor 100 against 1); it orders jobs only with PRIORITY_WEIGHT_PARTITION.
    scontrol create PartitionName=high Nodes=n[09-16] PriorityJobFactor=100 MaxTime=INFINITE \
      State=UP TRESBillingWeights=CPU=1.0,Mem=0.25G
  fi
  if [ "${partitions:-one}" = exclusive ]; then
    # A partition over the four gpu nodes whose jobs hold their nodes whole; a fresh cluster
    # forgets it.
    scontrol create PartitionName=whole Nodes=n[13-16] OverSubscribe=EXCLUSIVE \
      MaxTime=INFINITE State=UP TRESBillingWeights=CPU=1.0,Mem=0.25G
  fi
  if [ "${qos:-none}" = mixed ]; then
    # Two QOS of different priorities open to every user; a fresh cluster forgets them.
    sacctmgr -i add qos high Priority=100 >/dev/null
    sacctmgr -i add qos low Priority=20 >/dev/null
    sacctmgr -i modify user where name="$everyone" set qos+=high,low >/dev/null
  fi
  if [ "${features:-none}" = fast ]; then
    # Feature fast on four of cpu's nodes; a fresh cluster forgets it.
    scontrol update NodeName=n[01-04] AvailableFeatures=fast ActiveFeatures=fast
  fi
  if [ "${assoc:-none}" = mixed ]; then
    # Association priorities: an account's (inherited by the associations under it that set
    # none) and two users'; a fresh cluster forgets them.
    sacctmgr -i modify account where name=engineering set priority=50 >/dev/null
    sacctmgr -i modify user where name=bob set priority=100 >/dev/null
    sacctmgr -i modify user where name=carol set priority=20 >/dev/null
  fi
  if [ "${limits:-none}" = capped ]; then
    # A group's processors and a user's jobs capped; a fresh cluster forgets them.
    sacctmgr -i modify account where name=physics set GrpTRES=cpu=48 >/dev/null
    sacctmgr -i modify user where name=alice set MaxJobs=3 >/dev/null
  fi
  sleep 2
  local began_utc began_s
  began_utc=$(TZ=UTC date -u -d "-5 seconds" +%Y-%m-%dT%H:%M:%S)
  began_s=$(date +%s)
  if [ -n "$policy" ]; then
    cat >"$dir/slurm.toml" <<TOML
# fairshare slurm watch's configuration for the experiment's $name run.
policy = "$policy"
weight = 10000
mapping = "replace"
interval_s = 5
window_s = 3600
submit_table = "/run/fairshare-slurm/submit-factors.txt"
ends_at_limits = $([ "${name%-limits}" != "$name" ] && echo true || echo false)
TOML
    "$fairshare" slurm watch --config "$dir/slurm.toml" --interval 5s >"$dir/watch.log" 2>&1 &
    watcher=$!
    sleep 3
    kill -0 "$watcher" || { log "$name: the watcher did not start"; cat "$dir/watch.log" >&2; return 1; }
  fi
  if [ "${nodes:-none}" = reserved ]; then
    # A maintenance window announced before the workload: no job may run across it there.
    scontrol delete ReservationName=maintenance 2>/dev/null || true
    scontrol create ReservationName=maintenance Users=root Flags=MAINT Nodes=n[05-08] \
      StartTime="now+$((nodes_at + 3))" EndTime="now+$((nodes_at + 3 + nodes_for))" >/dev/null
  fi
  sample >"$dir/sprio.log" &
  sampler=$!
  t0=$(now_ms)
  log "$name: workload from $(date -u +%H:%M:%S)"
  if [ "${limits:-none}" = capped ]; then
    (sleep "$limits_change_at" && sacctmgr -i modify user where name=alice set MaxJobs=5 >/dev/null) &
    changer=$!
  fi
  if [ "${nodes:-none}" = drained ]; then
    # Four nodes drained for maintenance and back: their running jobs finish, no job starts.
    (sleep "$nodes_at" && scontrol update NodeName=n[05-08] State=DRAIN Reason=maintenance \
      && sleep "$nodes_for" && scontrol update NodeName=n[05-08] State=RESUME) &
    drainer=$!
  fi
  workload
  log "$name: all submitted; waiting for the queue to empty"
  local deadline=$(($(date +%s) + 900))
  while [ -n "$(squeue -h -u "$everyone")" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || { log "$name: jobs still queued after 15 minutes"; return 1; }
    sleep 2
  done
  kill "$sampler" && wait "$sampler" 2>/dev/null || true
  sampler=""
  if [ -n "$changer" ]; then
    wait "$changer" || { log "$name: the limit was not raised"; return 1; }
    changer=""
  fi
  if [ -n "$drainer" ]; then
    wait "$drainer" || { log "$name: the nodes were not drained and resumed"; return 1; }
    drainer=""
  fi
  tail -c +$((log_from + 1)) /var/log/slurm/slurmctld.log >"$dir/slurmctld.log" 2>/dev/null || true
  if [ -n "$watcher" ]; then
    local rc=0
    kill -TERM "$watcher"
    wait "$watcher" || rc=$?
    watcher=""
    [ "$rc" = 0 ] || { log "$name: the watcher exited $rc"; return 1; }
    grep -q "stopped; the site factors keep their last values" "$dir/watch.log" \
      || { log "$name: the watcher logged no stop line"; return 1; }
    log "$name: watcher stopped (exit 0, stop line logged); $(grep -c 'pending jobs of' "$dir/watch.log") passes"
    # Its submit table would rank the next run's jobs until it went stale.
    rm -f /run/fairshare-slurm/submit-factors.txt
  fi
  # Jobs reach the accounting database a moment after they leave the queue.
  sleep 3
  TZ=UTC sacct --allusers --parsable2 \
    --format=JobID,User,Account,Submit,Eligible,Start,End,Elapsed,Timelimit,AllocTRES,ReqTRES,Partition,State,QOS,Flags,ReqNodes,Constraints \
    -S "$began_utc" -E now >"$dir/sacct.txt"
  scontrol --oneliner show partition >"$dir/partitions.txt"
  # The configuration, the nodes and the partitions, as --slurm-conf and --machines read them.
  { scontrol show config; scontrol show node; scontrol show partition; } >"$dir/config.txt"
  sacctmgr -P -n show qos format=Name,UsageFactor,Priority >"$dir/qos.txt"
  sacctmgr -P -n show assoc format=Cluster,Account,User,Partition,Share,ParentName,Priority >"$dir/assoc.txt"
  # The site bundle `fairshare slurm what-if` predicts the run from with no other option.
  rm -rf "$dir/bundle"
  # A run under the watcher is a site that runs the adapter: its configuration goes in too.
  local adapter=()
  [ -n "$policy" ] && adapter=(--adapter-config "$dir/slurm.toml")
  "$fairshare" slurm collect "$dir/bundle" --since "$began_utc" --until now "${adapter[@]}" 2>>"$dir/collect.log"
  # A window cut from the run's middle, as a site's month opens on a busy machine: the jobs
  # started before it held their nodes, those waiting then wait, the run's start is history.
  if [ "${window_after:-0}" -gt 0 ]; then
    rm -rf "$dir/bundle-window"
    "$fairshare" slurm collect "$dir/bundle-window" --until now "${adapter[@]}" \
      --since "$(date -u -d "@$((began_s + window_after))" +%Y-%m-%dT%H:%M:%S)" 2>>"$dir/collect.log"
  fi
  local jobs
  jobs=$(grep -cE '^[0-9]+\|' "$dir/sacct.txt")
  [ "$jobs" = "$expected" ] || { log "$name: sacct lists $jobs jobs, not $expected"; return 1; }
  echo "$about" >"$dir/about"
  echo "$(($(date +%s) - began_s))" >"$dir/seconds"
  echo "$(($(date +%s) - fresh_s))" >"$dir/took"
  log "$name: done in $(cat "$dir/took") s ($(cat "$dir/seconds") s from the workload's start); $jobs jobs in $dir/sacct.txt"
}

# The replay of a run's dump under its policy: every job's predicted start in the JSON.
replay() {
  local name=$1 policy=$2 dir="$out/$1" cluster
  if [ "$layout" = many ]; then
    # With more than one partition or with features, the nodes and partitions as the run's
    # Slurm listed them.
    local machines="$out/machines.toml"
    if [ "$partitions" != one ] || [ "$features" != none ]; then machines="$dir/config.txt"; fi
    cluster=(--machines "$machines" --shares "$dir/assoc.txt"
      --partitions "$dir/partitions.txt" --qos "$dir/qos.txt")
  else
    cluster=(--capacity cpu=8,mem=2048000,gpu=0 --shares "$out/shares.toml")
  fi
  "$fairshare" replay "$dir/sacct.txt" --format sacct --policy "$policy" "${cluster[@]}" \
    --scheduler easy --drain --gantt 0s+2h --json "$dir/replay.json" >"$dir/replay.txt" 2>&1
}

cat >"$out/shares.toml" <<'TOML'
# The association tree of scripts/slurm/up.sh's one-node layout.
[accounts]
physics = { shares = 3 }
chemistry = { shares = 1 }

[users]
alice = { account = "physics" }
bob = { account = "physics" }
carol = { account = "chemistry" }
dave = { account = "chemistry" }
TOML

cat >"$out/machines.toml" <<'TOML'
# Partition cpu of scripts/slurm/up.sh's many-node layout, where the drawn workload runs.
[[machine]]
name = "cpu"
count = 12
cpus = 8
memory = "16000MiB"
TOML

# The policy the replay predicts a run under.
policy_of() {
  case $1 in
    slurm | slurm2) echo "$slurm_policy" ;;
    sdrf | sdrf-limits) echo "$sdrf_policy" ;;
    pe) echo "$pe_policy" ;;
    *) log "unknown run $1"; return 1 ;;
  esac
}

# What a run is, for the tables.
about_of() {
  local via="through \`fairshare slurm watch --interval 5s\`"
  case $1 in
    slurm) echo "Slurm's own Fair Tree (PriorityWeightFairshare=100000, no adapter)" ;;
    slurm2) echo "Slurm's own Fair Tree again: the floor, how far two real runs differ" ;;
    sdrf) echo "fairshare \`$sdrf_policy\` $via" ;;
    sdrf-limits) echo "fairshare \`$sdrf_policy\` $via, with \`ends_at_limits = true\`" ;;
    pe) echo "fairshare \`$pe_policy\` $via" ;;
  esac
}

if [ "$layout" = many ]; then
  if [ ! -s "$out/plan.txt" ]; then
    [ -r "$trace" ] || { log "no trace at $trace (set TRACE)"; exit 1; }
    "$fairshare" slurm draw "$trace" --skip "$skip" --jobs 300 --cpus "$plan_cpus" --max-cpus 16 \
      --load 1.5 --min-run 10s --max-run 60s --users "$everyone" >"$out/plan.txt" 2>"$out/plan.log"
    log "plan: $(head -1 "$out/plan.log")"
  fi
  expected=$(grep -cv '^#' "$out/plan.txt")
  cpus=$plan_cpus stream=null floor='["slurm", "slurm2"]' all="slurm slurm2 sdrf sdrf-limits pe"
else
  expected=47 cpus=8 stream=2 floor=null all="slurm sdrf sdrf-limits pe"
fi
users_json=$(printf '"%s", ' "${users[@]}")
cat >"$out/experiment.json" <<JSON
{"layout": "$layout", "cpus": $cpus, "stream_cpus": $stream, "floor": $floor,
 "users": [${users_json%, }], "runs": ["${all// /\", \"}"]}
JSON

for name in $runs; do
  case $name in
    slurm | slurm2) about=$(about_of "$name") run "$name" "" ;;
    sdrf | sdrf-limits) about=$(about_of "$name") run "$name" "$sdrf_policy" ;;
    pe) about=$(about_of pe) run pe "$pe_policy" ;;
    *) log "unknown run $name (slurm, slurm2, sdrf, sdrf-limits, pe)"; exit 1 ;;
  esac
done

for name in $all; do
  [ -s "$out/$name/sacct.txt" ] || continue
  replay "$name" "$(policy_of "$name")"
  log "$name: replayed under $(policy_of "$name")"
done

(cd "$root" && "$cargo" run -q -p fairshare-report --features adapters \
  --example slurm_experiment -- "$out")
log "results: $out/results.md and $out/*.svg"
