#!/usr/bin/env bash
# CPU time of one `fairshare agent` cycle over N workloads on this machine's real cgroup v1
# tree (root, with cpu, cpuacct, memory and blkio mounted under /sys/fs/cgroup): makes N idle
# child cgroups under a fresh parent, runs the agent standalone at μ = 0.1 s for SECONDS, and
# divides the agent's user+system time (/proc/PID/stat) by the cycles run (each part too, at
# the kernel's tick resolution: the split is sampled and moves between runs), and its run time
# to the nanosecond (/proc/PID/schedstat) likewise. It also says how many files the agent holds
# open, its peak resident memory (VmHWM) and, from its per-cycle log lines, that every cycle
# found and measured all N workloads and that no knob write was refused. NOFILE=1024 runs it under that soft limit on open files
# (the agent raises it to the hard one; NOFILE_HARD=1024 caps that too, as a unit without
# LimitNOFILE would). Cleans up on exit.
# Usage: [NOFILE=…] [NOFILE_HARD=…] scripts/agent-overhead.sh [N=200] [SECONDS=10]
set -euo pipefail
N=${1:-200}
SECONDS_RUN=${2:-10}
BIN=${FAIRSHARE_BIN:-target/release/fairshare}
P=fairshare-overhead-$$
ROOT=/sys/fs/cgroup
H=(cpu cpuacct memory blkio)
[ -x "$BIN" ] || { echo "build first: cargo build --release -p fairshare" >&2; exit 1; }
CONF=$(mktemp)
LOG=$(mktemp)
cleanup() {
  if [ -n "${AG:-}" ]; then kill "$AG" 2>/dev/null || true; wait "$AG" 2>/dev/null || true; fi
  for h in "${H[@]}"; do
    [ -d "$ROOT/$h/$P" ] || continue
    find "$ROOT/$h/$P" -mindepth 1 -maxdepth 1 -type d -print0 | xargs -0 -r rmdir
    rmdir "$ROOT/$h/$P"
  done
  rm -f "$CONF" "$LOG"
}
trap cleanup EXIT
for h in "${H[@]}"; do
  mkdir "$ROOT/$h/$P"
  for i in $(seq 0 $((N - 1))); do echo "$ROOT/$h/$P/user-u$((i % 20)).w$i"; done | xargs mkdir
done
printf 'node = "overhead"\ninterval_s = 0.1\nparents = ["%s"]\n' "$P" > "$CONF"
(
  if [ -n "${NOFILE:-}" ]; then ulimit -Sn "$NOFILE"; fi
  if [ -n "${NOFILE_HARD:-}" ]; then ulimit -Hn "$NOFILE_HARD"; fi
  exec "$BIN" agent --config "$CONF" --log info --log-json
) 2> "$LOG" &
AG=$!
sleep 3
read -r u0 s0 < <(awk '{print $14, $15}' /proc/$AG/stat)
read -r r0 _ < "/proc/$AG/schedstat"
c0=$(grep -c '"message":"cycle"' "$LOG" || true)
sleep "$SECONDS_RUN"
read -r u1 s1 < <(awk '{print $14, $15}' /proc/$AG/stat)
read -r r1 _ < "/proc/$AG/schedstat"
c1=$(grep -c '"message":"cycle"' "$LOG" || true)
fds=$(ls /proc/$AG/fd | wc -l)
peak=$(awk '/^VmHWM/ {printf "%.1f MiB", $2 / 1024}' /proc/$AG/status)
limit=$(awk '/Max open files/ {print $4 " soft, " $5 " hard"}' /proc/$AG/limits)
tck=$(getconf CLK_TCK)
cycles=$((c1 - c0))
awk -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v tck="$tck" -v c="$cycles" -v n="$N" \
  'BEGIN { d = u + s; printf "%d workloads: %.2f s of CPU over %d cycles = %.2f ms per cycle (user %.2f ms, system %.2f ms)\n", n, d / tck, c, 1000 * d / tck / c, 1000 * u / tck / c, 1000 * s / tck / c }'
awk -v r=$((r1 - r0)) -v c="$cycles" 'BEGIN { printf "run time (schedstat): %.2f ms per cycle\n", r / 1e6 / c }'
echo "open files: $fds (limit $limit); peak resident memory: $peak"
grep '"message":"cycle"' "$LOG" | python3 -c '
import json, sys
n = int(sys.argv[1])
cycles = [json.loads(l)["fields"] for l in sys.stdin]
full = sum(1 for c in cycles if c["workloads"] == n)
measured = sum(1 for c in cycles[1:] if c["measured"] == n)
written = sum(c["written"] for c in cycles)
refused = sum(c["refused"] for c in cycles)
first = cycles[0]["written"]
print(f"cycles logged: {len(cycles)}; with all {n} workloads: {full}; all measured: {measured} of {len(cycles) - 1};"
      f" knobs written {written} (first cycle {first}), refused {refused}")
' "$N"
