#!/bin/sh
# How the cost of a run's analysis grows with its ranks: synthetic runs in the
# node layout (one OUT/<host>/node.events per node) of NODES nodes x 16 ranks x
# 4 threads, each rank bound to 4 cores of a 64-core node; node 7 and nodes
# 100-110 over-subscribed (twice the threads), node 50 half idle, node 60 odd
# (its threads pin themselves); each given to `stacksage report` (text, JSON,
# HTML) and `stacksage check`, timed with /usr/bin/time (wall, CPU, peak RSS).
#   bench/rank_scaling_benchmark.sh BUILD_DIR [WORK_DIR] [NODES...]
# NODES defaults to 62 625 6250 (1,000, 10,000 and 100,000 ranks); 62500
# gives 1,000,000 ranks (about 4.5 GB of node files under WORK_DIR: the run
# is removed after it is measured). STACKSAGE_BENCH_MEMORY_KIB, when set,
# caps each command's address space (ulimit -v) on a shared machine.
set -eu
build=${1:?usage: rank_scaling_benchmark.sh BUILD_DIR [WORK_DIR] [NODES...]}
work=${2:-/tmp/stacksage-rank-scaling}
shift $(( $# >= 2 ? 2 : 1 ))
[ $# -gt 0 ] || set -- 62 625 6250
mkdir -p "$work"
timed() {
    label=$1
    shift
    (
        [ -z "${STACKSAGE_BENCH_MEMORY_KIB:-}" ] || ulimit -v "$STACKSAGE_BENCH_MEMORY_KIB"
        /usr/bin/time -f "$label: wall %e s, user %U s, sys %S s, peak RSS %M KiB, exit %x" "$@" >/dev/null 2>"$work/stderr"
    ) || true
    grep -E "^$label: |stacksage report: " "$work/stderr" | sed "s/^/$ranks ranks: /"
}
for nodes in "$@"; do
    ranks=$((nodes * 16))
    out="$work/run-$ranks"
    rm -rf "$out"
    gen_start=$(date +%s.%N)
    "$build/bench/stacksage_synthetic_run" "$out" --nodes "$nodes" --ranks 16 --threads 4 --cores 64 --cores-per-rank 4 \
        --overloaded-nodes 7,100-110 --idle-nodes 50 --odd-nodes 60 >/dev/null
    gen_end=$(date +%s.%N)
    files=$(find "$out" -type f | wc -l)
    bytes=$(du -sb "$out" | cut -f1)
    echo "$ranks ranks: $nodes nodes, $files files, $bytes bytes, generated in $(echo "$gen_end - $gen_start" | bc) s"
    # The page cache warm, as right after a job.
    find "$out" -type f -exec cat {} + >/dev/null
    timed text "$build/cli/stacksage" report "$out" --timings -o "$work/report-$ranks.txt"
    timed json "$build/cli/stacksage" report "$out" --format json --timings -o "$work/report-$ranks.json"
    timed html "$build/cli/stacksage" report "$out" --html "$work/report-$ranks.html" --timings
    timed check "$build/cli/stacksage" check "$out"
    ls -l "$work/report-$ranks.txt" "$work/report-$ranks.json" "$work/report-$ranks.html" 2>/dev/null |
        awk -v r="$ranks" '{print r " ranks: " $9 " " $5 " bytes"}'
    rm -rf "$out"
done
