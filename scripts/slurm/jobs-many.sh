#!/usr/bin/env bash
# Submits fairshare's workload for the many-node layout of up.sh (`up.sh --fresh --layout many`):
# jobs from all nine users (alice, bob, frank under physics; carol, dave, erin under
# chemistry; grace, heidi under civil; ivan under mech) on both partitions: multi-node jobs
# (`-N 2 -n 16` and larger), GPU jobs (`-p gpu --gres=gpu:N`), jobs under QOS scavenger
# (UsageFactor 0.5), jobs asking for memory (`--mem`, billed at 0.25 per GB), 60 s to 600 s
# long. The cluster is contended: the cpu partition's jobs ask for about 180 CPUs of its 96,
# the gpu partition's for 21 GPUs of its 16, so some jobs wait; a few still run after 150 s.
# Prints the job ids, one a line, in submission order.
#
# The workload starts just after a decay tick, so that no job ends in the same second as a
# tick: the accounting dates ends to the second, and which of the two slurmctld saw first
# decides whether that tick decays the job's last charge (one tick's decay, 6.7 % here).
#
# Usage: scripts/slurm/jobs-many.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/after-tick.sh"

submit() { # user seconds limit-minutes sbatch-options...
  local user=$1 seconds=$2 limit=$3
  shift 3
  su "$user" -c "sbatch --parsable --chdir=/tmp -o /dev/null -t $limit $* --wrap 'sleep $seconds'"
}

# The cpu partition (the default): 12 nodes of 8 CPUs and 16000 MB.
submit alice 420 10 -N 2 -n 16
submit bob 300 8 -n 8 --mem=12G
submit carol 500 10 -N 3 -n 24
submit dave 120 3 -n 4 --mem=8G
submit erin 90 2 -n 4 --qos=scavenger
submit frank 60 2 -n 2
submit grace 600 12 -N 2 -n 16
submit heidi 240 5 -n 8 --mem=16000
submit ivan 300 6 -N 4 -n 32
# The gpu partition: 4 nodes of 8 CPUs, 32000 MB and 4 GPUs (--gres counts GPUs per node).
submit alice 300 6 -p gpu -n 4 --gres=gpu:2
submit ivan 400 8 -p gpu -N 2 -n 8 --gres=gpu:4 --mem=24G
submit carol 180 4 -p gpu -n 2 --gres=gpu:2 --qos=scavenger
submit bob 600 12 -p gpu -n 8 --gres=gpu:4
sleep 5
# A second wave, which mostly waits for the first.
submit alice 200 5 -N 3 -n 24 --qos=scavenger
submit grace 150 4 -N 2 -n 16 --qos=scavenger
submit dave 180 4 -N 2 -n 16 --mem=10G
submit bob 360 8 -n 8 --qos=scavenger
submit heidi 120 3 -p gpu -n 4 --gres=gpu:2 --mem=20G
submit erin 60 2 -p gpu -n 1 --gres=gpu:1
submit frank 240 5 -p gpu -n 2 --gres=gpu:2 --qos=scavenger
