#!/usr/bin/env bash
# Brings up a one-host Slurm 22.05 (Debian's slurm-wlm, slurmdbd, munge, MariaDB) on loopback,
# as root, for fairshare's tests against a real Slurm: priority/multifactor with a 10-minute
# half-life and a 1-minute calculation period, accounts `physics` (3 shares) and `chemistry`
# (1 share), users alice and bob under physics, carol and dave under chemistry.
#
# Usage: scripts/slurm/up.sh [--fresh] [fair-tree|classic]   (idempotent; prints the state)
#   --fresh  stops the daemons and wipes the cluster's state and accounting first, so that
#            usage and jobs start from nothing (what a test that compares with sshare needs).
set -euo pipefail
fresh=false
if [ "${1:-}" = --fresh ]; then fresh=true; shift; fi
mode=${1:-fair-tree}
host=$(hostname)
export DEBIAN_FRONTEND=noninteractive

if ! command -v slurmctld >/dev/null || ! command -v slurmdbd >/dev/null || ! command -v mariadbd >/dev/null; then
  apt-get update -qq || true
  apt-get install -y -qq slurm-wlm slurmdbd munge mariadb-server >/dev/null
fi

# munge: a key owned by munge, mode 400.
[ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
mkdir -p /run/munge && chown munge:munge /run/munge
pgrep -x munged >/dev/null || su munge -s /bin/sh -c /usr/sbin/munged

# MariaDB with a database and a user for slurmdbd.
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
if ! pgrep -x mariadbd >/dev/null; then
  (mysqld_safe --bind-address=127.0.0.1 >/dev/null 2>&1 &)
  for _ in $(seq 60); do mysqladmin ping >/dev/null 2>&1 && break; sleep 1; done
fi
mysql -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db; CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurm'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"

if $fresh; then
  pkill -x slurmctld || true
  pkill -x slurmd || true
  pkill -x slurmdbd || true
  for _ in $(seq 30); do pgrep -x 'slurmctld|slurmd|slurmdbd' >/dev/null || break; sleep 1; done
  rm -rf /var/spool/slurmctld /var/spool/slurmd
  mysql -e "DROP DATABASE IF EXISTS slurm_acct_db; CREATE DATABASE slurm_acct_db;"
fi
mkdir -p /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/slurm
chown slurm:slurm /var/spool/slurmctld /var/log/slurm /run/slurm

cat > /etc/slurm/slurmdbd.conf <<CONF
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
SlurmUser=slurm
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurm/slurmdbd.pid
CONF
chown slurm:slurm /etc/slurm/slurmdbd.conf && chmod 600 /etc/slurm/slurmdbd.conf

flags=""
[ "$mode" = classic ] && flags="PriorityFlags=NO_FAIR_TREE"
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=fairshare
SlurmctldHost=$host(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageEnforce=associations,limits
PriorityType=priority/multifactor
PriorityDecayHalfLife=00:10:00
PriorityCalcPeriod=00:01:00
PriorityWeightFairshare=100000
PriorityWeightAge=0
PriorityWeightJobSize=0
PriorityWeightPartition=0
PriorityWeightQOS=0
$flags
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=2000 State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

pgrep -x slurmdbd >/dev/null || slurmdbd
for _ in $(seq 30); do sacctmgr -n show cluster >/dev/null 2>&1 && break; sleep 1; done
sacctmgr -i add cluster fairshare >/dev/null 2>&1 || true
sacctmgr -i add account physics fairshare=3 >/dev/null 2>&1 || true
sacctmgr -i add account chemistry fairshare=1 >/dev/null 2>&1 || true
# erin competes as chemistry does (Fairshare=parent); frank is entitled to nothing. Slurm's own
# root user stays under the root account, as on every real cluster.
for triple in alice:physics:1 bob:physics:1 carol:chemistry:1 dave:chemistry:1 \
  erin:chemistry:parent frank:physics:0; do
  IFS=: read -r user account share <<<"$triple"
  id "$user" >/dev/null 2>&1 || useradd -m "$user"
  sacctmgr -i add user "$user" account="$account" fairshare="$share" >/dev/null 2>&1 || true
done

if pgrep -x slurmctld >/dev/null; then
  scontrol reconfigure
else
  slurmctld
fi
pgrep -x slurmd >/dev/null || slurmd -N "$host"
for _ in $(seq 30); do scontrol ping 2>/dev/null | grep -q UP && sinfo -h -o %T | grep -qE 'idle|mixed|alloc' && break; sleep 1; done
scontrol ping
sinfo
