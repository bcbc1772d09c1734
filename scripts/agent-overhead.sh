#!/usr/bin/env bash
# CPU time of one `fairshare agent` cycle over N workloads on this machine's real cgroup v1
# tree (root, with cpu, cpuacct, memory and blkio mounted under /sys/fs/cgroup): makes N idle
# child cgroups under a fresh parent, runs the agent standalone at μ = 0.1 s for SECONDS, and
# divides the agent's user+system time (/proc/PID/stat) by the cycles run. Cleans up on exit.
# Usage: scripts/agent-overhead.sh [N=200] [SECONDS=10]
set -euo pipefail
N=${1:-200}
SECONDS_RUN=${2:-10}
BIN=${FAIRSHARE_BIN:-target/release/fairshare}
P=fairshare-overhead-$$
ROOT=/sys/fs/cgroup
H=(cpu cpuacct memory blkio)
[ -x "$BIN" ] || { echo "build first: cargo build --release -p fairshare" >&2; exit 1; }
cleanup() {
  [ -n "${AG:-}" ] && kill "$AG" 2>/dev/null && wait "$AG" 2>/dev/null || true
  for h in "${H[@]}"; do
    [ -d "$ROOT/$h/$P" ] || continue
    find "$ROOT/$h/$P" -mindepth 1 -maxdepth 1 -type d -exec rmdir {} +
    rmdir "$ROOT/$h/$P"
  done
  rm -f "$CONF"
}
CONF=$(mktemp)
trap cleanup EXIT
for h in "${H[@]}"; do
  mkdir "$ROOT/$h/$P"
  for i in $(seq 0 $((N - 1))); do mkdir "$ROOT/$h/$P/user-u$((i % 20)).w$i"; done
done
printf 'node = "overhead"\ninterval_s = 0.1\nparents = ["%s"]\n' "$P" > "$CONF"
"$BIN" agent --config "$CONF" --log warn &
AG=$!
sleep 2
t0=$(awk '{print $14 + $15}' /proc/$AG/stat)
sleep "$SECONDS_RUN"
t1=$(awk '{print $14 + $15}' /proc/$AG/stat)
tck=$(getconf CLK_TCK)
cycles=$((SECONDS_RUN * 10))
awk -v d=$((t1 - t0)) -v tck="$tck" -v c="$cycles" -v n="$N" \
  'BEGIN { printf "%d workloads: %.2f s of CPU over %d cycles = %.2f ms per cycle\n", n, d / tck, c, 1000 * d / tck / c }'
