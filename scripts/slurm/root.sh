#!/usr/bin/env bash
# Makes, and mounts, the root file system in which a Slurm other than this Debian's runs: Debian
# trixie's Slurm 24.11 beside bookworm's 22.05. Debian packages one Slurm per release, and two
# releases' slurm-wlm cannot be installed side by side, so 24.11 lives in a minimal trixie root
# (debootstrap) with its own slurm-wlm, slurmdbd, munge and MariaDB client; the rest of the
# machine is untouched. The root shares the host's processes (/proc), devices, /sys, network
# and MariaDB (its socket is bound in), and sees this checkout at the same path, so that a test
# binary built here runs inside it unchanged (scripts/slurm/in-root.sh).
#
# Usage: scripts/slurm/root.sh [--print|--remove] VERSION
#   VERSION   24.11 (the only one kept in a root; 22.05 is the host's own).
#   --print   only prints the root's path (nothing is made or mounted).
#   --remove  unmounts everything under the root, then deletes it. Never delete a root with
#             rm -rf alone: /dev, /sys and this checkout are mounted in it.
# The roots live under $FAIRSHARE_SLURM_ROOTS (default /var/lib/fairshare-slurm-roots, apart
# from the Debian package's state in /var/lib/fairshare); making one takes a minute and some
# 400 MB, and is done once. Idempotent: mounts missing after a reboot are made again, and a
# directory bound in that has since been replaced (a fresh checkout, new traces) is bound again.
set -euo pipefail
print=false
remove=false
version=
for arg in "$@"; do
  case $arg in
    --print) print=true ;;
    --remove) remove=true ;;
    24.11) version=$arg ;;
    *) echo "root.sh: unknown argument '$arg' (a root exists for Slurm 24.11 only)" >&2; exit 2 ;;
  esac
done
[ -n "$version" ] || { echo "root.sh: which Slurm? (24.11)" >&2; exit 2; }
suite=trixie
root=${FAIRSHARE_SLURM_ROOTS:-/var/lib/fairshare-slurm-roots}/slurm-$version
if $print; then echo "$root"; exit 0; fi
if $remove; then
  [ -d "$root" ] || exit 0
  # Deepest first; a lazy unmount of whatever a running daemon still holds.
  findmnt -rn -o TARGET | grep -F "$root/" | sort -r | while read -r mount; do
    umount "$mount" 2>/dev/null || umount -l "$mount"
  done
  if findmnt -rn -o TARGET | grep -qF "$root/"; then
    echo "root.sh: $root still has mounts; not deleted" >&2
    exit 1
  fi
  rm -rf "$root"
  exit 0
fi
checkout=$(cd "$(dirname "$0")/../.." && pwd)

# The users the tests' jobs run as, with the host's ids where the host has them.
users="alice bob carol dave erin frank grace heidi ivan"

if [ ! -e "$root/etc/fairshare-slurm-root" ]; then
  echo "root.sh: making a Debian $suite root with Slurm $version at $root"
  export DEBIAN_FRONTEND=noninteractive
  command -v debootstrap >/dev/null || { apt-get update -qq || true; apt-get install -y -qq debootstrap >/dev/null; }
  rm -rf "$root.partial"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase "$suite" "$root.partial" http://deb.debian.org/debian >/dev/null
  # No service starts while packages install (there is no init in the root).
  printf '#!/bin/sh\nexit 101\n' > "$root.partial/usr/sbin/policy-rc.d"
  chmod 755 "$root.partial/usr/sbin/policy-rc.d"
  mount -t proc proc "$root.partial/proc"
  trap 'umount "$root.partial/proc" 2>/dev/null || true' EXIT
  chroot "$root.partial" apt-get install -y -qq --no-install-recommends \
    slurm-wlm slurmdbd munge mariadb-client lua5.1 >/dev/null
  chroot "$root.partial" apt-get clean
  umount "$root.partial/proc"
  trap - EXIT
  echo "$version" > "$root.partial/etc/fairshare-slurm-root"
  mv "$root.partial" "$root"
fi

# Debian runs the daemons as slurmctld-wlm, slurmd-wlm and slurmstepd-wlm behind alternatives
# links, and 24.11's daemons re-execute their own file, so their process names would be those:
# a hard link under the plain name keeps `pgrep -x slurmctld` and the pid files' checks true.
for daemon in slurmctld slurmd slurmstepd; do
  if [ -L "$root/usr/sbin/$daemon" ]; then ln -f "$root/usr/sbin/$daemon-wlm" "$root/usr/sbin/$daemon"; fi
done
# The host's name and addresses.
cp /etc/hosts "$root/etc/hosts"
# trixie's MariaDB clients ask for TLS by default; bookworm's server, reached by its socket,
# offers none.
printf '[client]\nskip-ssl\n' > "$root/etc/mysql/mariadb.conf.d/90-fairshare.cnf"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
for user in $users; do
  chroot "$root" id "$user" >/dev/null 2>&1 && continue
  if uid=$(id -u "$user" 2>/dev/null); then
    chroot "$root" useradd -m -u "$uid" "$user"
  else
    chroot "$root" useradd -m "$user"
  fi
done

# Mounts: processes, devices and /sys of the host; MariaDB's socket; this checkout, and the
# shared traces beside it (read-only) where they are.
bound() { mountpoint -q "$root$1"; }
# bind_dir DIR [ro]: DIR bound in at its own path, the one there now: a mount of a directory since
# replaced still shows the old, deleted one, so it is unmounted and bound again.
bind_dir() {
  if bound "$1" && [ "$(stat -c %d:%i "$1")" != "$(stat -c %d:%i "$root$1")" ]; then
    umount "$root$1" 2>/dev/null || umount -l "$root$1"
  fi
  bound "$1" && return 0
  mkdir -p "$root$1"
  mount --bind "$1" "$root$1"
  [ "${2:-}" != ro ] || mount -o remount,bind,ro "$root$1"
}
bound /proc || mount -t proc proc "$root/proc"
bound /sys || mount --rbind /sys "$root/sys"
bound /dev || mount --rbind /dev "$root/dev"
mkdir -p /run/mysqld
bind_dir /run/mysqld
bind_dir "$checkout"
shared=$(cd "$checkout/.." && pwd)/shared
[ ! -d "$shared" ] || bind_dir "$shared" ro
