#!/usr/bin/env bash
# Builds the Python package (python/, PyO3 + maturin) into a wheel, installs it, and runs its
# tests with pytest against the `fairshare` binary (FAIRSHARE_BIN, default the workspace's debug
# build); also formats and lints its crate, which sits outside the workspace. Prints the wheel's
# size. Usage: scripts/python-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check "maturin>=1.7,<2" pytest
out=target/wheels
rm -f "$out"/fairshare-*.whl
(cd python && maturin build --release -q -o "../$out")
wheel=$(ls "$out"/fairshare-*.whl)
echo "wheel: $wheel ($(stat -c %s "$wheel") bytes)"
python3 -m pip install -q --disable-pip-version-check --force-reinstall "$wheel"
export FAIRSHARE_BIN=${FAIRSHARE_BIN:-$PWD/target/debug/fairshare}
[ -x "$FAIRSHARE_BIN" ] || cargo build -q -p fairshare
# From outside the source tree, so that the installed wheel is what is imported.
(cd /tmp && python3 -m pytest -q "$OLDPWD/python/tests")
cargo fmt --manifest-path python/Cargo.toml --check
cargo clippy -q --manifest-path python/Cargo.toml --all-targets -- -D warnings
