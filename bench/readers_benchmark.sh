#!/bin/sh
# Our readers against the libraries (docs/PERFORMANCE.md, section "Readers
# against the libraries (issue 19)"): every candidate in one process, rows
# interleaved at random, medians of the repetitions.
#   bench/readers_benchmark.sh BUILD_DIR [WORK_DIR] [REPETITIONS]
# JSON: the reference runs' logs (/work/ref/run-*/vm/*.jsonl, or $REF_RUNS)
# and a synthetic run of 8 nodes x 64 ranks x 16 threads; XML: every file in
# tests/data/hwloc-xml. Each binary first checks that the candidates read the
# same fields (JSON) or attributes (XML); --check lists what each refuses.
set -eu
build=${1:?usage: readers_benchmark.sh BUILD_DIR [WORK_DIR] [REPETITIONS]}
work=${2:-/tmp/stacksage-readers-bench}
reps=${3:-15}
ref=${REF_RUNS:-/work/ref}
mkdir -p "$work"
flags="--benchmark_repetitions=$reps --benchmark_enable_random_interleaving=true --benchmark_min_time=0.05"
flags="$flags --benchmark_report_aggregates_only=true"
median='grep -E "_median|Benchmark|^-|agree|DIFFER|^simdjson|files"'
if [ -x "$build/bench/bench_json_readers" ]; then
    "$build/bench/stacksage_synthetic_run" "$work/synthetic" --nodes 8 --ranks 64 --threads 16 --bound --per-process-logs >/dev/null
    inputs="synthetic=$work/synthetic"
    [ -d "$ref" ] && inputs="ref=$ref $inputs"
    echo "== bench_json_readers"
    # shellcheck disable=SC2086
    "$build/bench/bench_json_readers" $flags $inputs 2>&1 | eval "$median"
    echo "== bench_json_readers --check"
    "$build/bench/bench_json_readers" --check
else
    echo "bench_json_readers not built (libsimdjson-dev missing)"
fi
if [ -x "$build/bench/bench_xml_readers" ]; then
    echo "== bench_xml_readers"
    # shellcheck disable=SC2086
    "$build/bench/bench_xml_readers" $flags 2>&1 | eval "$median"
    echo "== bench_xml_readers --check"
    "$build/bench/bench_xml_readers" --check
else
    echo "bench_xml_readers not built (libxml2-dev missing)"
fi
