#!/usr/bin/env bash
# Builds the Python package (python/, PyO3 + maturin) into a wheel, installs it with what its
# tables, bars and example need, runs its tests with pytest against the `fairshare` binary
# (FAIRSHARE_BIN, default the workspace's debug build), executes the example notebook, and
# formats and lints its crate, which sits outside the workspace. Prints the wheel's size; pytest
# lists every skipped test with its reason (-rs), so that a skip is never read as a pass.
# Usage: scripts/python-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# As environment, not options: `pip wheel` takes no --root-user-action, and pip ignores
# variables for options a command does not have.
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
python3 -m pip install -q "maturin>=1.7,<2"
out=target/wheels
rm -f "$out"/fairshare-*.whl
# What `pip install ./python` does: a PEP 517 build with maturin, in release mode.
python3 -m pip wheel -q --no-deps ./python -w "$out"
wheel=$(ls "$out"/fairshare-*.whl)
echo "wheel: $wheel ($(stat -c %s "$wheel") bytes)"
python3 -m pip install -q --force-reinstall --no-deps "$wheel"
python3 -m pip install -q "$wheel[examples,test]"
export FAIRSHARE_BIN=${FAIRSHARE_BIN:-$PWD/target/debug/fairshare}
[ -x "$FAIRSHARE_BIN" ] || cargo build -q -p fairshare
# From outside the source tree, so that the installed wheel is what is imported.
(cd /tmp && python3 -m pytest -q -rs "$OLDPWD/python/tests")
# The notebook runs in a scratch copy, so that what it writes stays out of the tree.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp python/examples/compare-policies.ipynb "$scratch/"
FAIRSHARE_TRACE=${FAIRSHARE_TRACE:-$PWD/../shared/traces/swf/wagap-2013.swf} \
    python3 -m jupyter nbconvert --to notebook --execute --log-level=ERROR \
    --output executed.ipynb "$scratch/compare-policies.ipynb"
echo "notebook: python/examples/compare-policies.ipynb executed"
cargo fmt --manifest-path python/Cargo.toml --check
cargo clippy -q --manifest-path python/Cargo.toml --all-targets -- -D warnings
