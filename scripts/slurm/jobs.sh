#!/usr/bin/env bash
# Submits fairshare's test workload to the one-host Slurm of up.sh: a job cancelled while it
# waits (the log's first event), then jobs of alice, bob, carol, dave, erin (`parent` shares)
# and frank (0 shares) of different sizes and lengths, some still running when the accounting
# is dumped. Prints the job ids.
#
# The workload starts just after a decay tick, so that no job ends in the same second as a
# tick: the accounting dates ends to the second, and which of the two slurmctld saw first
# decides whether that tick decays the job's last charge (one tick's decay, 6.7 % here).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/after-tick.sh"
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
submit erin 1 60 2
submit carol 4 200 10
submit frank 1 90 2
submit bob 1 600 15
