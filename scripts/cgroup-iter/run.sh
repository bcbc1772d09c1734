#!/usr/bin/env bash
# What a BPF cgroup iterator would give the agent (measurement only, not built by CI): makes N
# idle child cgroups under a fresh parent in the memory and cpuacct v1 hierarchies, builds
# counters.bpf.c against this kernel's BTF and the probe against libbpf, and for each counter
# checks the iterator's values against the files and times one iterator read against N preads,
# both after the same pause. Needs root, clang, bpftool and libbpf-dev. Cleans up on exit.
# Usage: scripts/cgroup-iter/run.sh [N=1000] [PAUSE_MS=100] [ROUNDS=50]
set -euo pipefail
N=${1:-1000}
PAUSE=${2:-100}
ROUNDS=${3:-50}
HERE=$(cd "$(dirname "$0")" && pwd)
P=fairshare-iter-$$
ROOT=/sys/fs/cgroup
H=(memory cpuacct)
BUILD=$(mktemp -d)
cleanup() {
  for h in "${H[@]}"; do
    [ -d "$ROOT/$h/$P" ] || continue
    find "$ROOT/$h/$P" -mindepth 1 -maxdepth 1 -type d -print0 | xargs -0 -r rmdir
    rmdir "$ROOT/$h/$P"
  done
  rm -rf "$BUILD" /dev/shm/$P-*
}
trap cleanup EXIT
bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$BUILD/vmlinux.h"
clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$BUILD" -c "$HERE/counters.bpf.c" -o "$BUILD/counters.bpf.o"
gcc -O2 -Wall "$HERE/probe.c" -o "$BUILD/probe" -lbpf
for h in "${H[@]}"; do
  mkdir "$ROOT/$h/$P"
  for i in $(seq 0 $((N - 1))); do echo "$ROOT/$h/$P/w$i"; done | xargs mkdir
done
# Three children hold 1, 2 and 3 MiB of shared memory, charged to them, so the check compares
# values that are not all zero.
for i in 1 2 3; do
  sh -c "echo \$\$ > $ROOT/memory/$P/w$i/cgroup.procs; head -c ${i}M /dev/zero > /dev/shm/$P-$i"
done
cd "$BUILD"
./probe memory "$ROOT/memory/$P" "$PAUSE" "$ROUNDS"
./probe cpu "$ROOT/cpuacct/$P" "$PAUSE" "$ROUNDS" || echo "cpu: not measurable on this kernel (above)"
