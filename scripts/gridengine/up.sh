#!/usr/bin/env bash
# Brings up a one-host Grid Engine 8.1.9 (Debian's gridengine-master, -exec and -client) as
# root, for fairshare's tests against a real Grid Engine: queue all.q with 8 slots on this host,
# users gea, geb and gec (uid >= 1000: Grid Engine's min_uid keeps root from submitting), and a
# scheduler configured for fairshare's lever: weight_priority 1, weight_urgency 0,
# weight_ticket 0, so that a job's POSIX priority (`qalter -p`) alone orders the queue.
#
# Usage: scripts/gridengine/up.sh [--fresh] [lever|share-tree]
#   (idempotent; prints the state)
#   --fresh     deletes every job, empties the accounting file and clears the share tree's
#               usage first, so that usage and jobs start from nothing.
#   lever       (the default) the scheduler's weights above; no share tree.
#   share-tree  Grid Engine's own fair share instead: share tree Root / ge (100) / gea 50,
#               geb 30, gec 20; weight_tickets_share 10000, halftime 1 h, weight_ticket 1,
#               weight_urgency 0, weight_priority 0 (what `fairshare priorities --ge`
#               compares with).
# Facts and the reasons for each setting: ../shared/spec/gridengine.md.
set -euo pipefail
usage() { sed -n '8p' "$0" | sed 's/^# *//' >&2; }
fresh=false
mode=lever
while [ $# -gt 0 ]; do
  case $1 in
    --fresh) fresh=true ;;
    lever | share-tree) mode=$1 ;;
    *) echo "up.sh: unknown argument '$1'" >&2; usage; exit 2 ;;
  esac
  shift
done
host=$(hostname)
export DEBIAN_FRONTEND=noninteractive
common=/var/lib/gridengine/default/common
qmaster_spool=/var/spool/gridengine/qmaster

if ! command -v qconf >/dev/null || ! command -v sge_execd >/dev/null; then
  debconf-set-selections <<EOF
gridengine-common shared/gridengineconfig boolean true
gridengine-common shared/gridenginecell string default
gridengine-common shared/gridenginemaster string $host
EOF
  apt-get update -qq || true
  apt-get install -y -qq gridengine-master gridengine-exec gridengine-client >/dev/null
fi

# The reverse lookup of 127.0.0.1 answers `localhost`, not this host's name, and qmaster then
# refuses every client: Grid Engine's own alias file makes the two one host.
aliases="$host localhost"
if [ "$(cat $common/host_aliases 2>/dev/null)" != "$aliases" ]; then
  echo "$aliases" >$common/host_aliases
  chown sgeadmin: $common/host_aliases && chmod 644 $common/host_aliases
  pkill -x sge_qmaster 2>/dev/null && sleep 2 || true
fi
echo "$host" >$common/act_qmaster

running() { pgrep -x "$1" >/dev/null; }
running sge_qmaster || /usr/sbin/sge_qmaster
for _ in $(seq 1 60); do qstat >/dev/null 2>&1 && break; sleep 0.5; done
qstat >/dev/null

# The configuration, each object written from a file (qconf -A… adds, -M… modifies).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
qconf -ss 2>/dev/null | grep -qx "$host" || qconf -as "$host" >/dev/null 2>&1
if ! qconf -sel 2>/dev/null | grep -qx "$host"; then
  printf 'hostname %s\nload_scaling NONE\ncomplex_values NONE\nuser_lists NONE\nxuser_lists NONE\nprojects NONE\nxprojects NONE\nusage_scaling NONE\nreport_variables NONE\n' "$host" >"$work/exec"
  qconf -Ae "$work/exec" >/dev/null 2>&1
fi
mkdir -p /var/run/gridengine
running sge_execd || SGE_EXECD_PIDFILE=/var/run/gridengine/execd.pid /usr/sbin/sge_execd

# Global: usage as slots × wall-clock (sleep jobs build usage), users kept for the share tree,
# each job's record written to the accounting file as it ends. `qconf -Mconf FILE` names the
# configuration after the file, hence a file called `global`; continued lines are joined first.
mkdir -p "$work/conf"
qconf -sconf global | sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' >"$work/conf/global"
sed -i -e 's/^execd_params .*/execd_params SHARETREE_RESERVED_USAGE=true/' \
  -e 's/^auto_user_delete_time .*/auto_user_delete_time 0/' \
  -e 's/^reporting_params .*/reporting_params accounting=true reporting=false flush_time=00:00:15 joblog=false sharelog=00:00:00 accounting_flush_time=00:00:00/' \
  "$work/conf/global"
qconf -Mconf "$work/conf/global" >/dev/null 2>&1

cat >"$work/queue" <<EOF
qname                 all.q
hostlist              $host
seq_no                0
load_thresholds       NONE
suspend_thresholds    NONE
nsuspend              1
suspend_interval      00:05:00
priority              0
min_cpu_interval      00:05:00
processors            UNDEFINED
qtype                 BATCH INTERACTIVE
ckpt_list             NONE
pe_list               NONE
rerun                 FALSE
slots                 8
tmpdir                /tmp
shell                 /bin/sh
prolog                NONE
epilog                NONE
shell_start_mode      posix_compliant
starter_method        NONE
suspend_method        NONE
resume_method         NONE
terminate_method      NONE
notify                00:00:60
owner_list            NONE
user_lists            NONE
xuser_lists           NONE
subordinate_list      NONE
complex_values        NONE
projects              NONE
xprojects             NONE
calendar              NONE
initial_state         default
s_rt                  INFINITY
h_rt                  INFINITY
s_cpu                 INFINITY
h_cpu                 INFINITY
s_fsize               INFINITY
h_fsize               INFINITY
s_data                INFINITY
h_data                INFINITY
s_stack               INFINITY
h_stack               INFINITY
s_core                INFINITY
h_core                INFINITY
s_rss                 INFINITY
h_rss                 INFINITY
s_vmem                INFINITY
h_vmem                INFINITY
EOF
if qconf -sql 2>/dev/null | grep -qx all.q; then
  qconf -Mq "$work/queue" >/dev/null 2>&1
else
  qconf -Aq "$work/queue" >/dev/null 2>&1
fi

for user in gea geb gec; do
  id "$user" >/dev/null 2>&1 || useradd -m -s /bin/bash "$user"
  if ! qconf -suserl 2>/dev/null | grep -qx "$user"; then
    printf 'name %s\noticket 0\nfshare 0\ndelete_time 0\ndefault_project NONE\n' "$user" >"$work/user"
    qconf -Auser "$work/user" >/dev/null 2>&1
  fi
done

# A queue a test disabled and left so is enabled again (a state, not part of its configuration).
qmod -e all.q >/dev/null 2>&1 || true

if $fresh; then
  qdel -f -u '*' >/dev/null 2>&1 || true
  for _ in $(seq 1 60); do [ -z "$(qstat -u '*')" ] && break; sleep 0.5; done
  # Keep the accounting file's header, drop its records.
  if [ -f $common/accounting ]; then
    grep '^#' $common/accounting >"$work/accounting" || true
    cat "$work/accounting" >$common/accounting
  fi
  qconf -clearusage >/dev/null 2>&1 || true
fi

# The scheduler: Debian's defaults, with the weights of the mode.
qconf -ssconf >"$work/sched"
set_sched() { sed -i "s/^$1 .*/$1 $2/" "$work/sched"; }
set_sched schedule_interval 0:0:15
# A scheduler run a second after a job ends, so that a test's queue drains without waiting 15 s
# a start.
set_sched flush_finish_sec 1
if [ "$mode" = lever ]; then
  set_sched weight_priority 1.000000
  set_sched weight_urgency 0.000000
  set_sched weight_ticket 0.000000
  set_sched weight_tickets_share 0
  set_sched halftime 168
  qconf -dstree >/dev/null 2>&1 || true
else
  set_sched weight_priority 0.000000
  set_sched weight_urgency 0.000000
  set_sched weight_ticket 1.000000
  set_sched weight_tickets_share 10000
  set_sched halftime 1
  set_sched policy_hierarchy OFS
  cat >"$work/stree" <<EOF
id=0
name=Root
type=0
shares=1
childnodes=1
id=1
name=ge
type=0
shares=100
childnodes=2,3,4
id=2
name=gea
type=0
shares=50
childnodes=NONE
id=3
name=geb
type=0
shares=30
childnodes=NONE
id=4
name=gec
type=0
shares=20
childnodes=NONE
EOF
  if qconf -sstree >/dev/null 2>&1; then
    qconf -Mstree "$work/stree" >/dev/null
  else
    qconf -Astree "$work/stree" >/dev/null
  fi
fi
qconf -Msconf "$work/sched" >/dev/null 2>&1

for _ in $(seq 1 60); do
  qstat -f 2>/dev/null | grep -q "^all.q@" && ! qstat -f | grep "^all.q@" | grep -qE ' (au|u|E|d)$' && break
  sleep 0.5
done
echo "== Grid Engine on $host ($mode)"
qstat -f
qconf -ssconf | grep -E '^(weight_priority|weight_urgency|weight_ticket|weight_tickets_share|halftime) '
qconf -sst 2>/dev/null || echo "(no share tree)"
