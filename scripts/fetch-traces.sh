#!/usr/bin/env bash
# Fetches the public traces the docs and the shared-trace tests read, into DIR (the layout of
# ../shared/traces: swf/, google-2011/task_events/, alibaba-gpu-2023/), and checks every file
# against the size and SHA-256 of the copies the project was measured on. Files already there
# are checked, not fetched again; a file that differs is an error, never silently used.
#
# Usage: scripts/fetch-traces.sh [--check] [DIR]     (DIR default: ../shared/traces)
#   --check   fetch nothing: check what DIR holds and say what is missing
# Fails when a file differs from the manifest or a fetch fails; files to be put there by hand
# are listed as missing without failing.
#
# The traces are not the project's: each has its owners' terms (the Parallel Workloads Archive
# asks that the archive and each log's donor be acknowledged; Google's cluster data is CC-BY
# 4.0; the Alibaba GPU trace is for research, citing its paper; the wagap log comes with the
# Alea simulator's data sets). The wagap log and its .machines file have no fixed public
# address the script knows: put them in DIR/swf by hand and the check verifies them.
set -euo pipefail

check_only=false
if [ "${1:-}" = "--check" ]; then
  check_only=true
  shift
fi
dir=${1:-"$(dirname "$0")/../../shared/traces"}

pwa=https://www.cs.huji.ac.il/labs/parallel/workload
google=https://storage.googleapis.com/clusterdata-2011-2/task_events
alibaba=https://raw.githubusercontent.com/alibaba/clusterdata/master/cluster-trace-gpu-v2023/csv

# path | bytes | sha256 | where it is published ("-": by hand)
manifest="\
swf/KTH-SP2-1996-2.1-cln.swf.gz|404417|c8c1a8db8b99cce4aa8d823a769280debca90485e30758ba35a76b17ac5485bb|$pwa/l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz
swf/METACENTRUM-2009-2.swf.gz|1514544|7c0b347e77fc7a9aafe91f96a20186a8dd16c11a51e5f19c692a93d11a64893c|$pwa/l_metacentrum/METACENTRUM-2009-2.swf.gz
swf/wagap-2013.swf|2418846|bf5c1cc69915f2d5d26c579f69e206513ceff9bd60e6c4b112182da0c6183ed7|-
swf/wagap-2013.swf.machines|52|ffa1b0338b9e826a04993dc00acff1003743c56ea171a64d0e5febc7687b3674|-
google-2011/task_events/part-00000-of-00500.csv.gz|4139742|eae977d521bc6ed5d8deef56f1e06009d41844d4eb9a7e308e610d68e1b10f18|$google/part-00000-of-00500.csv.gz
google-2011/task_events/part-00001-of-00500.csv.gz|924634|c122f250cf1f9817dc722a5b7457eb5caf122619accfada078de66d40f311501|$google/part-00001-of-00500.csv.gz
google-2011/task_events/part-00002-of-00500.csv.gz|1821031|3534b71a7c6a3952f192485c4726119ff8d904fc2d7b828b8d96987db4aab767|$google/part-00002-of-00500.csv.gz
google-2011/task_events/part-00003-of-00500.csv.gz|1335641|23b3df1b0e6c06d56c0cb28359635931bd0bbb7e584423537e23104580c56740|$google/part-00003-of-00500.csv.gz
google-2011/task_events/part-00004-of-00500.csv.gz|1367039|84f2198e7a083021294ce9c764ba4dcbed6baad30746f257b3580874f802e88e|$google/part-00004-of-00500.csv.gz
google-2011/task_events/part-00005-of-00500.csv.gz|1849244|44dc8e710448bc35a1cb51bbb0b34a8cdf58284606b6038d6e4a016aeee03cfa|$google/part-00005-of-00500.csv.gz
google-2011/task_events/part-00006-of-00500.csv.gz|1798429|39de1a6b85a1f6709b254f94aa46b3c9c2e06c0c6400ec33ce58a66877932cb3|$google/part-00006-of-00500.csv.gz
alibaba-gpu-2023/openb_pod_list_default.csv|575468|1ee7ed79c27a3b0861cda8ddba86a004c6aba904caafa329a76ae93ca63834a8|$alibaba/openb_pod_list_default.csv
alibaba-gpu-2023/openb_node_list_all_node.csv|52287|5a85c2af79c66a1efff8bbcbda430400aae56d8431370d738480967e1a9c6b15|$alibaba/openb_node_list_all_node.csv"

# Checks one file: prints "ok", and fails naming what differs.
verify() {
  local path=$1 bytes=$2 sha=$3
  local size
  size=$(stat -c %s "$path")
  if [ "$size" != "$bytes" ]; then
    echo "$path: $size bytes, expected $bytes" >&2
    return 1
  fi
  if [ "$(sha256sum "$path" | cut -d' ' -f1)" != "$sha" ]; then
    echo "$path: SHA-256 differs from the copy the project was measured on" >&2
    return 1
  fi
}

bad=0 missing=0 failed=0
while IFS='|' read -r path bytes sha url; do
  target="$dir/$path"
  if [ ! -f "$target" ] && ! $check_only && [ "$url" != "-" ]; then
    mkdir -p "$(dirname "$target")"
    echo "fetching $url" >&2
    if ! curl -fsSL --retry 2 -o "$target.part" "$url"; then
      echo "$path: could not fetch $url" >&2
      rm -f "$target.part"
      failed=$((failed + 1))
    else
      mv "$target.part" "$target"
    fi
  fi
  if [ ! -f "$target" ]; then
    how=$([ "$url" = "-" ] && echo "by hand (no fixed public address)" || echo "from $url")
    echo "missing: $path ($bytes bytes; $how)"
    missing=$((missing + 1))
  elif verify "$target" "$bytes" "$sha"; then
    echo "ok: $path"
  else
    bad=$((bad + 1))
  fi
done <<<"$manifest"
echo "$(wc -l <<<"$manifest") files: $bad differ, $missing missing, $failed could not be fetched"
[ "$bad" -eq 0 ] && [ "$failed" -eq 0 ]
