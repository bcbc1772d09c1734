#!/usr/bin/env bash
# Builds the Debian package of fairshare (deploy/INSTALL.md installs it): the binary in the
# cargo profile `deb` (release, no debug information, stripped), its manual pages and shell
# completions made by that binary from its own clap definitions (`fairshare generate`), then
# `cargo deb` with the metadata of crates/cli/Cargo.toml. Prints how long the build took, the
# package's path, its size and its installed size; the last line is the path alone.
#
# Usage: scripts/deb.sh      CARGO_TARGET_DIR is honoured; CARGO names the cargo to run (a
#                            wrapper such as a build lock); cargo-deb is installed if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo=${CARGO:-cargo}
cargo_deb_version=3.8.0
target=${CARGO_TARGET_DIR:-target}

if [ "$(cargo-deb --version 2>/dev/null)" != "cargo-deb $cargo_deb_version" ]; then
  echo "== installing cargo-deb $cargo_deb_version" >&2
  $cargo install --locked --version "$cargo_deb_version" cargo-deb >&2
fi

echo "== building fairshare (profile deb)" >&2
start=$(date +%s)
$cargo build --locked --profile deb -p fairshare >&2
echo "build: $(($(date +%s) - start)) s" >&2

echo "== manual pages and completions from the clap definitions" >&2
bin=$target/deb/fairshare
generated=$target/deb/generated
rm -rf "$generated"
"$bin" generate man "$generated/man" >/dev/null
gzip -9n "$generated"/man/*.1
"$bin" generate completions "$generated/completions" >/dev/null
echo "$(ls "$generated/man" | wc -l) manual pages, $(ls "$generated/completions" | wc -l) completion scripts" >&2

echo "== cargo deb" >&2
deb=$($cargo deb --locked --no-build -p fairshare | tail -1)
[ -f "$deb" ] || { echo "cargo deb printed no package path (got: $deb)" >&2; exit 1; }
version=$(dpkg-deb --field "$deb" Version)
logged=$(sed -n '1s/^fairshare (\([^)]*\)).*/\1/p' deploy/debian/changelog)
[ "$logged" = "$version" ] || {
  echo "deploy/debian/changelog's last entry is $logged, the package is $version: add an entry" >&2
  exit 1
}
size=$(stat -c %s "$deb")
installed_kib=$(dpkg-deb --field "$deb" Installed-Size)
echo "package: $deb" >&2
echo "size: $size bytes ($((size / 1024)) KiB); installed size: $installed_kib KiB" >&2
echo "$deb"
