#!/usr/bin/env bash
# Records what fairshare reads from the Slurm it runs on, as the readers' test samples: every
# command `fairshare slurm status` and `fairshare slurm collect` run, each output in a file
# named after the command, listed in commands.tsv (file, then the command line with its times
# written `*`); collect's bundle as it wrote it; and the JSON that version prints and the
# adapter does not read (sinfo --json where it groups nodes, scontrol show nodes --json,
# sshare --json), to set beside the text. crates/slurm/tests/versions.rs reads them.
#
# Usage: scripts/slurm/samples.sh [--version 22.05|24.11] DIR
#   On the many-node cluster of up.sh --layout many, with jobs-many.sh's workload under way
#   (some jobs running, some waiting, some done). DIR is made; a file already there is kept.
#   FAIRSHARE: the fairshare binary (default target/debug/fairshare of this checkout).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../.." && pwd)
version=$(cat /etc/fairshare-slurm-root 2>/dev/null || echo 22.05)
if [ "${1:-}" = --version ]; then version=$2; shift 2; fi
[ $# -eq 1 ] || { echo "usage: samples.sh [--version 22.05|24.11] DIR" >&2; exit 2; }
mkdir -p "$1"
dir=$(cd "$1" && pwd)
fairshare=${FAIRSHARE:-$checkout/target/debug/fairshare}
if [ ! -e /etc/fairshare-slurm-root ] && [ "$version" != 22.05 ]; then
  exec bash "$here/in-root.sh" "$version" env FAIRSHARE="$fairshare" bash "$here/samples.sh" "$dir"
fi

# A folder of Slurm's commands, each recording its output and its command line.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
for command in sacct sacctmgr scontrol sinfo sprio squeue sshare; do
  cat > "$bin/$command" <<SCRIPT
#!/usr/bin/env bash
set -o pipefail
line=\$(printf '%s\n' $command "\$@" | sed -E 's/^(--starttime|--endtime|Start|End)=.*/\1=*/' | paste -sd' ')
name=$command-\$(printf '%s' "\$line" | md5sum | cut -c1-8).txt
/usr/bin/$command "\$@" | tee "$dir/\$name.part" || { rm -f "$dir/\$name.part"; exit 1; }
mv "$dir/\$name.part" "$dir/\$name"
grep -qxF "\$name	\$line" "$dir/commands.tsv" 2>/dev/null || printf '%s\t%s\n' "\$name" "\$line" >> "$dir/commands.tsv"
SCRIPT
  chmod 755 "$bin/$command"
done

date +%s > "$dir/moment.txt"
config=$bin/slurm.toml
printf 'bin = "%s"\nlock = "%s/lock"\n' "$bin" "$bin" > "$config"
"$fairshare" slurm status --config "$config" > "$dir/status.txt"
rm -rf "$dir/bundle"
"$fairshare" slurm collect "$dir/bundle" --since now-1hours --bin "$bin" > /dev/null
# The forms the adapter does not read, where this version prints them.
PATH=$bin:$PATH
sinfo --json > /dev/null
scontrol show nodes --json > /dev/null 2>&1 || echo "samples.sh: Slurm $version has no scontrol show nodes --json" >&2
sshare --json > /dev/null 2>&1 || echo "samples.sh: Slurm $version has no sshare --json" >&2
sort -o "$dir/commands.tsv" "$dir/commands.tsv"
echo "samples.sh: $(wc -l < "$dir/commands.tsv") outputs of Slurm $version in $dir"
