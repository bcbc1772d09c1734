#!/usr/bin/env bash
# Submits fairshare's test workload to the one-host Slurm of up.sh: a job cancelled while it
# waits (the log's first event), then jobs of alice, bob, carol and dave of different sizes and
# lengths, some still running when the accounting is dumped. Prints the job ids.
set -euo pipefail
submit() { # user cpus seconds limit-minutes
  su "$1" -c "sbatch --parsable --chdir=/tmp -o /dev/null -n $2 -t $4 --wrap 'sleep $3'"
}
held=$(su dave -c "sbatch --parsable --chdir=/tmp -o /dev/null -n 1 -t 5 --begin=now+1hour --wrap 'sleep 1'")
sleep 2
scancel "$held"
echo "$held"
submit alice 4 420 10
submit bob 2 100 5
submit carol 2 230 5
sleep 5
submit dave 1 30 1
submit carol 4 200 10
submit bob 1 600 15
