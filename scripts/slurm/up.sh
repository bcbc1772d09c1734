#!/usr/bin/env bash
# Brings up a one-host Slurm (Debian's slurm-wlm, slurmdbd, munge, MariaDB) on loopback, as
# root, for fairshare's tests against a real Slurm: priority/multifactor with a 10-minute
# half-life and a 1-minute calculation period, in one of two layouts, on one of two versions.
#
# Usage: scripts/slurm/up.sh [--fresh] [fair-tree|classic] [--layout one|many] [--version 22.05|24.11]
#   (idempotent; prints the state)
#   --fresh   stops the daemons and wipes the cluster's state and accounting first, so that
#             usage and jobs start from nothing (what a test that compares with sshare needs).
#             Switching from one layout to the other needs it: the script refuses otherwise.
#   fair-tree (the default) or classic (PriorityFlags=NO_FAIR_TREE).
#   --version 22.05 (the default): this Debian's (bookworm's) Slurm. 24.11: Debian trixie's, in
#             the root scripts/slurm/root.sh makes (its own munged and slurm.conf; the host's
#             MariaDB, in a database of its own). One version runs at a time: bringing one up
#             stops the other's daemons. Inside that root (scripts/slurm/in-root.sh bash
#             up.sh …), the script acts on the root's Slurm and takes its version by default.
#   --stop    stops this version's Slurm daemons (and the root's munged) and exits.
#   --layout one (the default): one node named after the host, 8 CPUs, partition `main`;
#             accounts `physics` (3 shares) and `chemistry` (1 share), users alice and bob under
#             physics, carol and dave under chemistry, erin (`parent`) under chemistry, frank
#             (0 shares) under physics. CR_CPU: only CPUs are allocated.
#   --layout many: 16 nodes on this host, each its own slurmd with its own port (`slurmd -N`):
#             n01-n12 (8 CPUs, 16000 MB) in partition `cpu` (the default), n13-n16 (8 CPUs,
#             32000 MB, 4 GPUs declared as GRES without devices) in partition `gpu`.
#             CR_CPU_Memory with DefMemPerCPU=1000; billing weights CPU=1.0,Mem=0.25G
#             (+GRES/gpu=4.0 on gpu); QOS `scavenger` (UsageFactor=0.5) open to every user.
#             Associations (shares in brackets):
#               root
#                ├ science (3)
#                │   ├ physics (2): alice (1), bob (1), frank (0)
#                │   └ chemistry (1): carol (1), dave (1), erin (parent)
#                └ engineering (1)
#                    ├ civil (parent): grace (1), heidi (1)
#                    └ mech (1): ivan (1)
#             Waits until all 16 nodes are idle.
# In both layouts Slurm's own root user stays under the root account, as on every real cluster.
# Environment: PRIORITY_WEIGHT_AGE, PRIORITY_MAX_AGE, PRIORITY_WEIGHT_JOB_SIZE,
# PRIORITY_WEIGHT_QOS, PRIORITY_WEIGHT_ASSOC and PRIORITY_WEIGHT_PARTITION set the multifactor
# weights other than fairshare's (default 0, 7-0, 0, 0, 0 and 0: the fairshare factor alone
# orders jobs), PRIORITY_WEIGHT_TRES the TRES weights (e.g.
# CPU=20000,Mem=10000; default none), PRIORITY_FAVOR_SMALL (YES or NO, default NO) the size
# factor's direction. SLURMCTLD_DEBUG sets slurmctld's log level (default info; debug logs
# every pass of the main scheduler, debug2 every node's epilog complete as well).
set -euo pipefail
usage() { sed -n '6p' "$0" | sed 's/^# *//' >&2; }
fresh=false
mode=fair-tree
layout=one
stop=false
# Inside a root of root.sh, its Slurm; on the host, this Debian's.
root_version=$(cat /etc/fairshare-slurm-root 2>/dev/null || true)
version=${root_version:-22.05}
args=("$@")
while [ $# -gt 0 ]; do
  case $1 in
    --fresh) fresh=true ;;
    --stop) stop=true ;;
    fair-tree | classic) mode=$1 ;;
    --layout)
      [ $# -ge 2 ] || { echo "up.sh: --layout needs one or many" >&2; usage; exit 2; }
      layout=$2; shift ;;
    --layout=*) layout=${1#--layout=} ;;
    --version)
      [ $# -ge 2 ] || { echo "up.sh: --version needs 22.05 or 24.11" >&2; usage; exit 2; }
      version=$2; shift ;;
    --version=*) version=${1#--version=} ;;
    *) echo "up.sh: unknown argument '$1'" >&2; usage; exit 2 ;;
  esac
  shift
done
case $layout in
  one | many) ;;
  *) echo "up.sh: --layout takes one or many, not '$layout'" >&2; usage; exit 2 ;;
esac
case $version in
  22.05 | 24.11) ;;
  *) echo "up.sh: --version takes 22.05 or 24.11, not '$version'" >&2; usage; exit 2 ;;
esac
if [ -n "$root_version" ] && [ "$version" != "$root_version" ]; then
  echo "up.sh: this root holds Slurm $root_version, not $version; run up.sh --version $version on the host" >&2
  exit 2
fi
host=$(hostname)
export DEBIAN_FRONTEND=noninteractive
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)
# Each version keeps its accounting in a database of its own: slurmdbd converts the tables of
# an older one, so that 22.05's could not be read by 22.05 again.
database=slurm_acct_db
[ "$version" = 22.05 ] || database=slurm_acct_db_${version/./_}

# The pid of a daemon (munged, a node's slurmd) from its pid file, if that process is still
# that daemon (a stale file may name a pid that now belongs to something else).
daemon_pid() { # pidfile name
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ "$(ps -o comm= -p "$pid" 2>/dev/null)" = "$2" ] && echo "$pid"
}

# The pids of the processes named NAME that run in this file system's root: the host's pgrep
# also lists a root's daemons (scripts/slurm/root.sh), and a root's the host's. A process is
# of this root when its /proc/PID/root is the same directory as / (device and inode: its
# readlink says / either way from inside a root). One name per call: pgrep -x matches nothing
# for a pattern longer than 15 characters, such as 'slurmctld|slurmd|slurmdbd'.
running_here() { # name
  local pid here
  here=$(stat -c %d:%i /)
  for pid in $(pgrep -x "$1" || true); do
    [ "$(stat -L -c %d:%i "/proc/$pid/root" 2>/dev/null)" = "$here" ] && echo "$pid"
  done
  return 0
}

# Whether any Slurm daemon of this root runs.
slurm_running() { [ -n "$(running_here slurmctld)$(running_here slurmd)$(running_here slurmdbd)" ]; }

# Stops slurmctld, every slurmd (one per node in the many-node layout) and slurmdbd: every one of
# this root's processes by that name, not the pid its file names (24.11's slurmctld re-executes
# itself on `scontrol reconfigure`, so a pid file may name the process it replaced).
stop_slurm() {
  local name pid
  for name in slurmctld slurmd slurmdbd; do
    for pid in $(running_here "$name"); do kill "$pid" 2>/dev/null || true; done
  done
  for _ in $(seq 30); do slurm_running || break; sleep 1; done
  if slurm_running; then
    echo "up.sh: Slurm daemons still running 30 s after SIGTERM:" >&2
    ps -o pid=,args= -p "$( (running_here slurmctld; running_here slurmd; running_here slurmdbd) | paste -sd,)" >&2
    exit 1
  fi
  rm -f /run/slurm/slurmctld.pid /run/slurm/slurmd.pid /run/slurm/slurmd-*.pid /run/slurm/slurmdbd.pid
  # The jobs of the cluster being wiped outlive slurmd: each slurmstepd (which ignores SIGTERM)
  # and its job script would run on, and report their end to the next slurmctld under job ids
  # the new cluster gives again. End each step with everything under it.
  local step
  for step in $(running_here slurmstepd); do
    # shellcheck disable=SC2046
    kill -KILL "$step" $(descendants "$step") 2>/dev/null || true
  done
  for _ in $(seq 10); do [ -n "$(running_here slurmstepd)" ] || break; sleep 1; done
}

# Every process under PID, each listed before its own children (by parent links).
descendants() {
  local child
  for child in $(pgrep -P "$1" || true); do
    echo "$child"
    descendants "$child"
  done
}

# MariaDB on the host with a database and a user for slurmdbd (a root reaches it by the socket
# root.sh binds in).
start_mariadb() {
  if ! command -v mariadbd >/dev/null; then
    apt-get update -qq || true
    apt-get install -y -qq mariadb-server >/dev/null
  fi
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
  if ! pgrep -x mariadbd >/dev/null; then
    (mysqld_safe --bind-address=127.0.0.1 >/dev/null 2>&1 &)
    for _ in $(seq 60); do mysqladmin ping >/dev/null 2>&1 && break; sleep 1; done
  fi
}

# Where the root of Slurm VERSION is (made or not).
version_root() { bash "$here/root.sh" --print "$1"; }

# Stops the daemons of the Slurm not asked for, so that one version runs at a time: the
# tests find the cluster's daemons by name.
stop_the_other() {
  [ -z "$root_version" ] || return 0
  local other
  other=$(version_root 24.11)
  if [ "$version" = 22.05 ]; then
    [ -e "$other/etc/fairshare-slurm-root" ] || return 0
    bash "$here/root.sh" 24.11
    chroot "$other" /usr/bin/env -C "$checkout" bash "$here/up.sh" --stop
  else
    stop_slurm
  fi
}

# On the host, 24.11 is brought up (or stopped) inside its root: made and mounted first, the
# host's MariaDB started and 22.05 stopped, then this script again in there.
if [ -z "$root_version" ] && [ "$version" != 22.05 ]; then
  if $stop; then
    [ -e "$(version_root "$version")/etc/fairshare-slurm-root" ] || exit 0
  else
    start_mariadb
    stop_the_other
  fi
  bash "$here/root.sh" "$version"
  exec chroot "$(version_root "$version")" /usr/bin/env -C "$checkout" bash "$here/up.sh" "${args[@]}"
fi

if $stop; then
  stop_slurm
  if [ -n "$root_version" ] && pid=$(daemon_pid /run/munge/munged.pid munged); then kill "$pid"; fi
  exit 0
fi
stop_the_other

# The layout the last run wrote (none if slurm.conf is not ours): the accounting, the saved
# state and the running slurmds belong to it, so changing layout needs --fresh.
previous=none
if grep -q '^ClusterName=fairshare$' /etc/slurm/slurm.conf 2>/dev/null; then
  if grep -q '^NodeName=n\[01-12\]' /etc/slurm/slurm.conf; then previous=many; else previous=one; fi
fi
if ! $fresh && [ "$previous" != none ] && [ "$previous" != "$layout" ]; then
  echo "up.sh: the cluster has the '$previous' layout; switching to '$layout' needs --fresh" >&2
  exit 2
fi

if [ -z "$root_version" ]; then
  if ! command -v slurmctld >/dev/null || ! command -v slurmdbd >/dev/null; then
    apt-get update -qq || true
    apt-get install -y -qq slurm-wlm slurmdbd munge >/dev/null
  fi
  start_mariadb
fi
mysqladmin ping >/dev/null 2>&1 || { echo "up.sh: MariaDB does not answer on /run/mysqld" >&2; exit 1; }
mysql -e "CREATE DATABASE IF NOT EXISTS $database; CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurm'; GRANT ALL ON $database.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"

# munge: a key owned by munge, mode 400; this Slurm's own munged (by its pid file: a root's
# munged and the host's both show in pgrep).
[ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
mkdir -p /run/munge && chown munge:munge /run/munge
daemon_pid /run/munge/munged.pid munged >/dev/null || su munge -s /bin/sh -c /usr/sbin/munged

if $fresh; then
  stop_slurm
  rm -rf /var/spool/slurmctld /var/spool/slurmd
  # A submit table left by an adapter would rank the new cluster's jobs.
  rm -f /run/fairshare-slurm/submit-factors.txt
  mysql -e "DROP DATABASE IF EXISTS $database; CREATE DATABASE $database;"
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
StorageLoc=$database
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurm/slurmdbd.pid
CONF
chown slurm:slurm /etc/slurm/slurmdbd.conf && chmod 600 /etc/slurm/slurmdbd.conf
# 24.11's slurmd loads a cgroup plugin whatever the proctrack and task plugins are, and this
# machine's cgroup v1 tree is not one it can use; 22.05's reads no cgroup.conf here.
if [ "$version" = 22.05 ]; then
  rm -f /etc/slurm/cgroup.conf
else
  echo CgroupPlugin=disabled > /etc/slurm/cgroup.conf
fi

flags=""
[ "$mode" = classic ] && flags="PriorityFlags=NO_FAIR_TREE"
ctld_debug=${SLURMCTLD_DEBUG:-info}
age_weight=${PRIORITY_WEIGHT_AGE:-0}
max_age=${PRIORITY_MAX_AGE:-7-0}
size_weight=${PRIORITY_WEIGHT_JOB_SIZE:-0}
favor_small=${PRIORITY_FAVOR_SMALL:-NO}
qos_weight=${PRIORITY_WEIGHT_QOS:-0}
assoc_weight=${PRIORITY_WEIGHT_ASSOC:-0}
partition_weight=${PRIORITY_WEIGHT_PARTITION:-0}
tres_weights=""
[ -n "${PRIORITY_WEIGHT_TRES:-}" ] && tres_weights="PriorityWeightTRES=$PRIORITY_WEIGHT_TRES"

# fairshare's submit script (deploy/job_submit.lua; JobSubmitPlugins=lua in both layouts): a
# new job gets its association's site factor from the table `fairshare slurm` rewrites in
# /run/fairshare-slurm, and nothing while the table is missing or stale.
install -m 644 "$(dirname "$0")/../../deploy/job_submit.lua" /etc/slurm/job_submit.lua
mkdir -p /run/fairshare-slurm && chmod 755 /run/fairshare-slurm

# ---------------------------------------------------------------------------------------------
# The one-node layout (the default; the tests' recorded data come from it).
# ---------------------------------------------------------------------------------------------
up_one() {
rm -f /etc/slurm/gres.conf
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
SlurmctldDebug=$ctld_debug
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobSubmitPlugins=lua
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageEnforce=associations,limits
PriorityType=priority/multifactor
PriorityDecayHalfLife=00:10:00
PriorityCalcPeriod=00:01:00
PriorityWeightFairshare=100000
PriorityWeightAge=$age_weight
PriorityMaxAge=$max_age
PriorityWeightJobSize=$size_weight
PriorityFavorSmall=$favor_small
PriorityWeightPartition=$partition_weight
PriorityWeightQOS=$qos_weight
PriorityWeightAssoc=$assoc_weight
$tres_weights
$flags
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=2000 State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

[ -n "$(running_here slurmdbd)" ] || slurmdbd
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

if [ -n "$(running_here slurmctld)" ]; then
  scontrol reconfigure
else
  slurmctld
fi
[ -n "$(running_here slurmd)" ] || slurmd -N "$host"
for _ in $(seq 30); do scontrol ping 2>/dev/null | grep -q UP && sinfo -h -o %T | grep -qE 'idle|mixed|alloc' && break; sleep 1; done
scontrol ping
sinfo
}

# ---------------------------------------------------------------------------------------------
# The many-node layout: 16 slurmds on loopback, two partitions, a three-level tree, a QOS.
# ---------------------------------------------------------------------------------------------
cpu_nodes=$(printf 'n%02d ' $(seq 1 12))
gpu_nodes=$(printf 'n%02d ' $(seq 13 16))

# Runs sacctmgr to add something, showing what it says only when it fails.
sacctmgr_add() {
  local out
  if ! out=$(sacctmgr -i add "$@" 2>&1); then
    echo "up.sh: sacctmgr add $* failed:" >&2
    echo "$out" >&2
    exit 1
  fi
}

up_many() {
# GPUs without devices. Slurm 22.05 drops a gpu line without File= ("Removing file-less GPU
# gpu:(null) from final GRES list", at debug level), so each node reports 0 GPUs and slurmctld
# drains it ("gres/gpu count reported lower than configured (0 < 4)"); a File= that does not
# exist is fatal ("can't stat gres.conf file"), a regular file an error ("is not a valid
# character or block device"). Symbolic links to /dev/null pass: one per GPU, shared by the
# four nodes (they are all on this host; jobs never open them).
mkdir -p /run/slurm/fake-gpu
for i in 0 1 2 3; do ln -sfn /dev/null "/run/slurm/fake-gpu/gpu$i"; done
cat > /etc/slurm/gres.conf <<CONF
NodeName=n[13-16] Name=gpu File=/run/slurm/fake-gpu/gpu[0-3] Count=4
CONF
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=fairshare
SlurmctldHost=$host(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd/%n
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd-%n.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmctldDebug=$ctld_debug
SlurmdLogFile=/var/log/slurm/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
DefMemPerCPU=1000
SchedulerType=sched/backfill
JobSubmitPlugins=lua
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageTRES=gres/gpu
AccountingStorageEnforce=associations,limits,qos
PriorityType=priority/multifactor
PriorityDecayHalfLife=00:10:00
PriorityCalcPeriod=00:01:00
PriorityWeightFairshare=100000
PriorityWeightAge=$age_weight
PriorityMaxAge=$max_age
PriorityWeightJobSize=$size_weight
PriorityFavorSmall=$favor_small
PriorityWeightPartition=$partition_weight
PriorityWeightQOS=$qos_weight
PriorityWeightAssoc=$assoc_weight
$tres_weights
$flags
ReturnToService=2
NodeName=n[01-12] NodeHostname=$host NodeAddr=127.0.0.1 Port=[17001-17012] CPUs=8 RealMemory=16000 State=UNKNOWN
NodeName=n[13-16] NodeHostname=$host NodeAddr=127.0.0.1 Port=[17013-17016] CPUs=8 RealMemory=32000 Gres=gpu:4 State=UNKNOWN
PartitionName=cpu Nodes=n[01-12] Default=YES MaxTime=INFINITE State=UP TRESBillingWeights="CPU=1.0,Mem=0.25G"
PartitionName=gpu Nodes=n[13-16] MaxTime=INFINITE State=UP TRESBillingWeights="CPU=1.0,Mem=0.25G,GRES/gpu=4.0"
CONF

[ -n "$(running_here slurmdbd)" ] || slurmdbd
for _ in $(seq 30); do sacctmgr -n show cluster >/dev/null 2>&1 && break; sleep 1; done
sacctmgr -n -P show cluster format=Cluster | grep -qx fairshare || sacctmgr_add cluster fairshare
sacctmgr -n -P show qos format=Name | grep -qx scavenger || sacctmgr_add qos scavenger UsageFactor=0.5

# Accounts, parents before children: account:parent:shares.
for triple in science:root:3 engineering:root:1 physics:science:2 chemistry:science:1 \
  civil:engineering:parent mech:engineering:1; do
  IFS=: read -r account parent share <<<"$triple"
  sacctmgr -n -P show account where name="$account" format=Account | grep -qx "$account" ||
    sacctmgr_add account "$account" parent="$parent" fairshare="$share"
done
# Users: user:account:shares, each allowed QOS normal (the default) and scavenger.
for triple in alice:physics:1 bob:physics:1 frank:physics:0 carol:chemistry:1 \
  dave:chemistry:1 erin:chemistry:parent grace:civil:1 heidi:civil:1 ivan:mech:1; do
  IFS=: read -r user account share <<<"$triple"
  id "$user" >/dev/null 2>&1 || useradd -m "$user"
  sacctmgr -n -P show assoc where user="$user" account="$account" format=User | grep -qx "$user" ||
    sacctmgr_add user "$user" account="$account" fairshare="$share" qos=normal,scavenger defaultqos=normal
done

if [ -n "$(running_here slurmctld)" ]; then
  scontrol reconfigure
else
  slurmctld
fi
# One slurmd per node, each with the port its NodeName line gives it.
local node
for node in $cpu_nodes $gpu_nodes; do
  mkdir -p "/var/spool/slurmd/$node"
  daemon_pid "/run/slurm/slurmd-$node.pid" slurmd >/dev/null || slurmd -N "$node"
done
local idle=0
for _ in $(seq 90); do
  if scontrol ping 2>/dev/null | grep -q UP; then
    idle=$(sinfo -h -N -o '%N %t' | awk '$2 == "idle"' | sort -u | wc -l)
    [ "$idle" -ge 16 ] && break
  fi
  sleep 1
done
scontrol ping
sinfo
if [ "$idle" -lt 16 ]; then
  echo "up.sh: only $idle of 16 nodes idle after 90 s (see /var/log/slurm/slurmd-n*.log)" >&2
  exit 1
fi
}

"up_$layout"
