#!/bin/sh
# Times `stacksage report --format json` on synthetic runs of 10,000,
# 100,000 and 1,000,000 flows (nodes x 64 ranks x 16 threads), with the
# stages the report itself measures (--timings) and the peak memory.
#   bench/analyzer_benchmark.sh BUILD_DIR [WORK_DIR] [NODES...]
set -eu
build=${1:?usage: analyzer_benchmark.sh BUILD_DIR [WORK_DIR] [NODES...]}
work=${2:-/tmp/stacksage-analyzer-bench}
shift $(( $# >= 2 ? 2 : 1 ))
[ $# -gt 0 ] || set -- 10 100 1024
mkdir -p "$work"
for nodes in "$@"; do
    out="$work/run-$nodes"
    "$build/bench/stacksage_synthetic_run" "$out" --nodes "$nodes" --ranks 64 --threads 16 --bound >/dev/null
    sync
    # Warm the page cache once, as a report run right after a job would find it.
    find "$out" -type f -exec cat {} + >/dev/null
    /usr/bin/time -f "wall %e s, user %U s, sys %S s, peak RSS %M KiB" \
        "$build/cli/stacksage" report "$out" --format json --timings -o "$work/report-$nodes.json" 2>&1 |
        sed "s/^/$nodes nodes: /"
    ls -l "$work/report-$nodes.json" | awk -v n="$nodes" '{print n " nodes: report " $5 " bytes"}'
done
