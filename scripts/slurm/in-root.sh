#!/usr/bin/env bash
# Runs a command inside the root of Slurm VERSION (scripts/slurm/root.sh), in the directory it
# was called from, with the environment it was called with: the root's Slurm commands, config
# and spool are then where a test or fairshare looks for them, at their usual paths.
#
# Usage: scripts/slurm/in-root.sh VERSION COMMAND [ARGS…]
# As Cargo's runner, a test binary runs against 24.11 unchanged:
#   CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="scripts/slurm/in-root.sh 24.11" cargo test …
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: in-root.sh VERSION COMMAND [ARGS…]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
version=$1
shift
bash "$here/root.sh" "$version" >&2
root=$(bash "$here/root.sh" --print "$version")
if [ ! -e "$root$(cd "$PWD" && pwd)" ]; then
  echo "in-root.sh: $PWD is not seen inside $root (only this checkout is bound in)" >&2
  exit 2
fi
exec chroot "$root" /usr/bin/env -C "$PWD" "$@"
