#!/usr/bin/env bash
# Takes what Slurm says at one moment into DIR: the accounting dump (sacct, UTC), the
# standings (sshare -a -l), the moment, the time of the last decay tick, the priority settings,
# the partitions (with their billing weights), the QOS (with their usage factors) and the
# association tree (shares and parents).
#
# Usage: scripts/slurm/snapshot.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
TZ=UTC sacct --allusers --parsable2 --starttime=now-1days --endtime=now+1days \
  --format=JobID,User,Account,Submit,Start,End,Elapsed,Timelimit,AllocTRES,Partition,State,QOS > "$dir/sacct.txt"
sshare -a -l -P > "$dir/sshare.txt"
date -u +%Y-%m-%dT%H:%M:%S > "$dir/moment.txt"
TZ=UTC date -u -r /var/spool/slurmctld/priority_last_decay_ran +%Y-%m-%dT%H:%M:%S > "$dir/last-tick.txt"
scontrol show config | grep -E 'PriorityDecayHalfLife|PriorityCalcPeriod|PriorityFlags' > "$dir/config.txt"
scontrol --oneliner show partition > "$dir/partitions.txt"
sacctmgr show qos --parsable2 --noheader format=Name,UsageFactor > "$dir/qos.txt"
sacctmgr show assoc --parsable2 --noheader format=Cluster,Account,User,Partition,Share,ParentName,Priority > "$dir/assoc.txt"
