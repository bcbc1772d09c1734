#!/usr/bin/env bash
# Runs every fuzz target of fairshare for a bounded time, one after another, and prints how many
# inputs each tried and what it found.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 600 s, every target)
#
# Needs `cargo install cargo-fuzz`. Targets are built without a sanitizer (`-s none`: the code
# fuzzed is safe Rust, and the machine's stable toolchain cannot build AddressSanitizer), with
# optimisations and debug assertions. Each target starts from the project's own seeds
# (fuzz/seeds/<target>, the example instances and scenarios, a sweep shard made here) and keeps
# what it learns in fuzz/corpus/<target>. A crash is saved under fuzz/artifacts/<target>/;
# reproduce it with `cargo fuzz run -O -s none <target> <file>` and keep it as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-600}"
shift || true
# Every target there is: the files of fuzz/fuzz_targets, so none is left out by a list.
mapfile -t all < <(find fuzz/fuzz_targets -name '*.rs' -printf '%f\n' | sed 's/\.rs$//' | sort)
targets=("${@:-${all[@]}}")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

cargo build --release --quiet -p fairshare
(cd fuzz && cargo fuzz build -O -s none)

# Seeds the project makes itself.
seed_dirs() {
  local target=$1
  [ -d "fuzz/seeds/$target" ] && echo "fuzz/seeds/$target"
  case "$target" in
    instance) echo examples/allocate ;;
    scenario) echo examples/bottleneck ;;
    runtime) echo examples/runtime ;;
    service_config) echo deploy ;;
    # Grid Engine's measured outputs, read where they are kept (never copied here).
    gridengine_*) [ -d ../shared/spec/gridengine-samples ] && echo ../shared/spec/gridengine-samples ;;
    program) echo examples/bottleneck ;;
    shard)
      local dir=fuzz/corpus/shard-seed
      mkdir -p "$dir"
      target/release/fairshare sweep fuzz/seeds/swf/standard.swf --fractions 0.5,1 --nines 1,3 \
        --shard 0/2 --json "$dir/shard-0.json" >/dev/null
      echo "$dir"
      ;;
  esac
}

summary=()
for target in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$target" "fuzz/artifacts/$target" fuzz/logs
  log="fuzz/logs/$target.log"
  seeds=$(seed_dirs "$target" | sed 's|^|../|')
  echo "== $target: ${seconds} s"
  status=0
  # shellcheck disable=SC2086 # the seed folders are separate words
  (cd fuzz && cargo fuzz run -O -s none "$target" "corpus/$target" $seeds -- \
      -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1) \
      >"$log" 2>&1 || status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  found=$(find "fuzz/artifacts/$target" -type f | wc -l)
  corpus=$(find "fuzz/corpus/$target" -type f | wc -l)
  line="$target: ${runs:-?} executions in ${seconds} s, corpus $corpus, exit $status, $found crash/timeout/oom files"
  echo "$line"
  summary+=("$line")
done
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
