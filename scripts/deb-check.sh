#!/usr/bin/env bash
# Installs the Debian package of scripts/deb.sh on this machine with `dpkg -i` and checks what
# an administrator relies on: the version and commit, the manual pages, the bash, zsh and fish
# completions, the systemd units, the example configurations read by the services' own checks,
# the fairshare user and group, the state folder and the conffiles' owners and modes. Then it
# purges the package and checks that nothing of it is left but /var/lib/fairshare (the state,
# kept on purge with the user that owns it), and removes those two if it made them. Every failed
# check prints what was wrong; the script exits 1 if any failed. Needs root; refuses to run
# where fairshare is installed.
#
# Usage: scripts/deb-check.sh [PACKAGE.deb]   (default: the newest fairshare_*.deb of
#                                             $CARGO_TARGET_DIR/debian, else target/debian)
set -uo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
skip() { echo "skipped: $*"; }

deb=${1:-$(ls -t "${CARGO_TARGET_DIR:-target}"/debian/fairshare_*.deb 2>/dev/null | head -1)}
[ -n "$deb" ] && [ -f "$deb" ] || { echo "no package: run scripts/deb.sh first" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "deb-check.sh installs a package: run it as root" >&2; exit 1; }
if dpkg-query -W -f='${Status}' fairshare 2>/dev/null | grep -q installed; then
  echo "fairshare is already installed here; purge it first (dpkg --purge fairshare)" >&2
  exit 1
fi
# What the machine had before, so that the check leaves it as it found it.
had_user=$(getent passwd fairshare)
had_state=$([ -e /var/lib/fairshare ] && echo yes)
echo "== package $deb: $(stat -c %s "$deb") bytes, installed size $(dpkg-deb --field "$deb" Installed-Size) KiB"

# Tools the checks use, from Debian's packages when missing (shells only if they install).
apt_install() {
  [ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v lock)" ] || apt-get update -qq || true
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
command -v man >/dev/null || apt_install man-db || fail "man-db could not be installed"
for shell in zsh fish; do
  command -v "$shell" >/dev/null || apt_install "$shell" ||
    echo "note: $shell could not be installed; its completions are only checked to exist"
done

echo "== dpkg -i"
dpkg -i "$deb" || { echo "FAIL: dpkg -i $deb" >&2; exit 1; }
trap 'dpkg-query -W fairshare >/dev/null 2>&1 && dpkg --purge fairshare >/dev/null 2>&1' EXIT

echo "== the binary"
version=$(fairshare --version) || fail "fairshare --version failed"
upstream=$(dpkg-deb --field "$deb" Version | sed 's/-[^-]*$//')
if [[ "$version" =~ ^fairshare\ ${upstream//./\\.}\ \(commit\ ([0-9a-f]{7,})\)$ ]]; then
  commit=${BASH_REMATCH[1]}
  head=$(git rev-parse --short=7 HEAD 2>/dev/null || true)
  if [ -n "$head" ] && [ "$commit" != "$head" ]; then
    fail "fairshare --version names commit $commit, the checkout is at $head (a stale build?)"
  else
    pass "fairshare --version: $version"
  fi
else
  fail "fairshare --version printed '$version', not 'fairshare $upstream (commit HASH)'"
fi
[ "$(command -v fairshare)" = /usr/bin/fairshare ] || fail "fairshare on PATH is $(command -v fairshare), not /usr/bin/fairshare"

echo "== manual pages"
for page in fairshare fairshare-serve fairshare-agent fairshare-slurm-sync; do
  path=$(man -w "$page" 2>&1) || { fail "man -w $page: $path"; continue; }
  pass "man -w $page: $path"
done
first=$(MANWIDTH=80 man fairshare 2>&1 | head -5)
if grep -q "fairshare" <<<"$first" && grep -q "NAME" <<<"$first"; then
  pass "man fairshare renders:"; sed 's/^/    /' <<<"$first"
else
  fail "man fairshare does not render a page: $first"
fi

echo "== completions"
bash_file=/usr/share/bash-completion/completions/fairshare
if out=$(bash -c "source $bash_file && complete -p fairshare" 2>&1); then
  pass "bash: $out"
else
  fail "bash: sourcing $bash_file and complete -p fairshare: $out"
fi
zsh_file=/usr/share/zsh/vendor-completions/_fairshare
if [ ! -s "$zsh_file" ]; then
  fail "zsh: $zsh_file is missing or empty"
elif command -v zsh >/dev/null; then
  # compinit scans fpath (Debian's zsh has vendor-completions on it) and registers #compdef files.
  out=$(HOME=$(mktemp -d) zsh -fc 'zsh -n '"$zsh_file"' && autoload -Uz compinit && compinit -u -D && print -r -- ${_comps[fairshare]}' 2>&1)
  [ "$out" = _fairshare ] && pass "zsh: compinit registers _fairshare" || fail "zsh: compinit did not register _fairshare: $out"
else
  pass "zsh: $zsh_file exists (zsh not installed, not loaded)"
fi
fish_file=/usr/share/fish/vendor_completions.d/fairshare.fish
if [ ! -s "$fish_file" ]; then
  fail "fish: $fish_file is missing or empty"
elif command -v fish >/dev/null; then
  out=$(HOME=$(mktemp -d) fish -c 'complete -C "fairshare se"' 2>&1)
  grep -q '^serve' <<<"$out" && pass "fish: 'fairshare se<TAB>' offers serve" || fail "fish: 'fairshare se<TAB>' offers: $out"
else
  pass "fish: $fish_file exists (fish not installed, not loaded)"
fi

echo "== systemd units"
for unit in fairshare fairshare-agent fairshare-slurm fairshare-gridengine; do
  file=/usr/lib/systemd/system/$unit.service
  [ -f "$file" ] || { fail "$file is not installed"; continue; }
  grep -q '^ExecStart=/usr/bin/fairshare ' "$file" || fail "$file: ExecStart is not /usr/bin/fairshare"
  if out=$(systemd-analyze verify "$file" 2>&1); then pass "systemd-analyze verify $unit.service"; else fail "systemd-analyze verify $file: $out"; fi
  enabled=$(find /etc/systemd/system -name "$unit.service" 2>/dev/null)
  [ -z "$enabled" ] || fail "$unit.service was enabled on install: $enabled"
done

echo "== the fairshare user, the state folder, the configurations"
IFS=: read -r _ _ uid _ _ home shell <<<"$(getent passwd fairshare)"
if [ -z "${uid:-}" ]; then
  fail "no user fairshare"
else
  [ "$uid" -lt 1000 ] || fail "user fairshare has uid $uid, not a system uid"
  [ "$home" = /var/lib/fairshare ] || fail "user fairshare's home is $home"
  [ "$shell" = /usr/sbin/nologin ] || fail "user fairshare's shell is $shell, not /usr/sbin/nologin"
  [ "$(id -gn fairshare)" = fairshare ] || fail "user fairshare's group is $(id -gn fairshare)"
  pass "user fairshare: uid $uid, group $(id -gn fairshare), home $home, shell $shell"
fi
state=$(stat -c '%U:%G %a' /var/lib/fairshare 2>&1)
[ "$state" = "fairshare:fairshare 750" ] && pass "/var/lib/fairshare: $state" || fail "/var/lib/fairshare is '$state', not 'fairshare:fairshare 750'"
conffiles=$(dpkg-query -W -f='${Conffiles}\n' fairshare | awk 'NF {print $1}')
for name in fairshare.toml agent.toml slurm.toml gridengine.toml; do
  file=/etc/fairshare/$name
  grep -qx "$file" <<<"$conffiles" || fail "$file is not a conffile of the package"
  mode=$(stat -c '%U:%G %a' "$file" 2>&1)
  [ "$mode" = "root:fairshare 640" ] && pass "$file: conffile, $mode" || fail "$file is '$mode', not 'root:fairshare 640'"
done

# The fairness service reads its file as the user fairshare, as its unit runs it.
if out=$(runuser -u fairshare -- fairshare serve --check --config /etc/fairshare/fairshare.toml 2>&1); then
  pass "fairshare serve --check --config /etc/fairshare/fairshare.toml (as fairshare):"
  sed 's/^/    /' <<<"$out" | head -8
else
  fail "fairshare serve --check --config /etc/fairshare/fairshare.toml (as fairshare): $out"
fi

echo "== the fairness service, started from its unit"
# With systemd, `systemctl start`; without it (a container), the unit's own ExecStart as its User
# and Group in its WorkingDirectory, which is what systemd would run. Either way the daemon
# must answer /healthz on the configured address, create its database in the state folder as
# the user fairshare, and stop cleanly on SIGTERM.
unit_file=/usr/lib/systemd/system/fairshare.service
unit_key() { sed -n "s/^$1=//p" "$unit_file" | head -1; }
listen=$(sed -n 's/^listen = "\(.*\)"$/\1/p' /etc/fairshare/fairshare.toml)
service_log=$(mktemp)
if [ "$(ps -p 1 -o comm=)" = systemd ]; then
  systemctl start fairshare || fail "systemctl start fairshare"
  how="systemctl start fairshare"
else
  read -r -a exec_start <<<"$(unit_key ExecStart)"
  (cd "$(unit_key WorkingDirectory)" &&
    exec setpriv --reuid "$(unit_key User)" --regid "$(unit_key Group)" --init-groups "${exec_start[@]}") \
    >"$service_log" 2>&1 &
  service_pid=$!
  how="its ExecStart as $(unit_key User):$(unit_key Group) in $(unit_key WorkingDirectory) (no systemd here)"
fi
health=""
for _ in $(seq 1 100); do
  health=$(curl -fsS "http://$listen/healthz" 2>/dev/null) && break
  sleep 0.1
done
if [ -n "$health" ]; then
  pass "fairshare.service started by $how; GET http://$listen/healthz: $(head -c 80 <<<"$health")"
else
  fail "fairshare.service started by $how did not answer http://$listen/healthz within 10 s: $(tail -5 "$service_log")"
fi
database=/var/lib/fairshare/fairshare.db
owner=$(stat -c %U "$database" 2>&1)
[ "$owner" = fairshare ] && pass "$database created, owned by fairshare" || fail "$database: '$owner', not a file owned by fairshare"
if [ -n "${service_pid:-}" ]; then
  kill -TERM "$service_pid"
  wait "$service_pid"
  status=$?
  [ $status = 0 ] && pass "stopped by SIGTERM (the unit's KillSignal): exit 0" || fail "after SIGTERM the service exited with $status: $(tail -5 "$service_log")"
else
  systemctl stop fairshare || fail "systemctl stop fairshare"
fi
rm -f "$service_log"

# The agent's check also asks the example's daemon (fairshare.example.org) and this host's
# cgroups, so the node need not be ready here: the check must run (the file loads, every item
# is checked) and end in success or "not ready", never in an error about the file.
out=$(FAIRSHARE_TOKEN=deb-check timeout 120 fairshare agent --config /etc/fairshare/agent.toml --check 2>&1)
status=$?
if [ $status = 0 ] || { [ $status = 1 ] && grep -q "is not ready" <<<"$out"; }; then
  pass "fairshare agent --config /etc/fairshare/agent.toml --check ran (status $status):"
  sed 's/^/    /' <<<"$out" | cut -c1-110
else
  fail "fairshare agent --config /etc/fairshare/agent.toml --check (status $status): $out"
fi

# The Slurm adapter has no check without Slurm: `fairshare slurm status` (read-only) runs a
# whole pass with the installed example, as the user fairshare, against stand-ins for Slurm's
# commands that print the outputs recorded on the tests' Slurm 22.05 (crates/slurm/tests/data).
stand_ins=$(mktemp -d)
chmod 755 "$stand_ins"
stand_in() { printf '#!/bin/sh\n%s\n' "$2" >"$stand_ins/$1" && chmod 755 "$stand_ins/$1"; }
for cmd in squeue:squeue.json sprio:sprio.txt sacctmgr:sacctmgr.txt sinfo:sinfo.json sacct:sacct.txt sshare:sshare.txt; do
  install -m 644 "crates/slurm/tests/data/${cmd#*:}" "$stand_ins/"
  stand_in "${cmd%%:*}" "cat $stand_ins/${cmd#*:}"
done
# sacctmgr also answers `show qos` (the usage factors): one QOS, Slurm's default.
stand_in sacctmgr "[ \"\$2\" = qos ] && { echo 'normal|1.000000'; exit 0; }; cat $stand_ins/sacctmgr.txt"
stand_in scontrol '[ "$1" = show ] && printf "PriorityType = priority/multifactor\nPriorityWeightFairShare = 0\n"; exit 0'
if out=$(runuser -u fairshare -- env PATH="$stand_ins:$PATH" fairshare slurm status --config /etc/fairshare/slurm.toml 2>&1); then
  pass "fairshare slurm status --config /etc/fairshare/slurm.toml (as fairshare, recorded Slurm outputs):"
  sed 's/^/    /' <<<"$out" | head -3
else
  fail "fairshare slurm status --config /etc/fairshare/slurm.toml: $out"
fi
rm -rf "$stand_ins"
lua=/usr/share/fairshare/slurm/job_submit.lua
if grep -q '^function slurm_job_submit' "$lua" 2>/dev/null && grep -q "$(sed -n 's/^submit_table = "\(.*\)"$/\1/p' /etc/fairshare/slurm.toml)" "$lua"; then
  pass "$lua: the submit script, reading the table slurm.toml's submit_table names"
else
  fail "$lua is missing, or does not read slurm.toml's submit_table"
fi

# The Grid Engine adapter reads a live Grid Engine where one runs (CI brings one up before
# this check): a whole pass with the installed example, as the user fairshare, read-only.
if command -v qstat >/dev/null && qstat >/dev/null 2>&1; then
  if out=$(runuser -u fairshare -- fairshare gridengine status --config /etc/fairshare/gridengine.toml 2>&1); then
    pass "fairshare gridengine status --config /etc/fairshare/gridengine.toml (as fairshare, the live Grid Engine):"
    sed 's/^/    /' <<<"$out" | head -3
  else
    fail "fairshare gridengine status --config /etc/fairshare/gridengine.toml: $out"
  fi
else
  pass "fairshare gridengine status not run: no Grid Engine answers on this machine"
fi

echo "== dpkg --purge"
files=$(dpkg -L fairshare)
dpkg --purge fairshare || fail "dpkg --purge fairshare"
trap - EXIT
! dpkg-query -W -f='${Status}' fairshare 2>/dev/null | grep -q installed || fail "fairshare is still installed"
left=0
while read -r path; do
  [ -e "$path" ] || [ -L "$path" ] || continue
  if [ -d "$path" ] && [ ! -L "$path" ]; then
    # A folder stays when another package owns it or files of others are in it.
    [ -n "$(ls -A "$path")" ] || dpkg -S "$path" >/dev/null 2>&1 || { fail "empty folder left: $path"; left=$((left + 1)); }
  else
    fail "file left: $path"; left=$((left + 1))
  fi
done <<<"$files"
[ ! -e /etc/fairshare ] || { fail "/etc/fairshare is left: $(ls -A /etc/fairshare)"; left=$((left + 1)); }
leftover=$(find /etc/systemd/system /var/lib/systemd -name '*fairshare*' 2>/dev/null)
[ -z "$leftover" ] || { fail "systemd state left: $leftover"; left=$((left + 1)); }
[ $left = 0 ] && pass "purged: none of the package's $(wc -l <<<"$files") paths is left"
[ -d /var/lib/fairshare ] && pass "/var/lib/fairshare is kept (with the user fairshare that owns it)" ||
  fail "/var/lib/fairshare was removed by the purge"

# Leave the machine as it was: the state folder, user and group the package made go too.
[ -n "$had_state" ] || rm -rf /var/lib/fairshare
[ -n "$had_user" ] || { userdel fairshare 2>/dev/null; groupdel fairshare 2>/dev/null; true; }

if [ $failures = 0 ]; then
  echo "deb-check: every check passed"
else
  echo "deb-check: $failures check(s) failed" >&2
  exit 1
fi
