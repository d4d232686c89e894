#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each one.
#   scripts/fuzz.sh --bounded      make check: a fixed number of executions per target
#                                  (about a minute each here), with a fixed seed and the
#                                  seed corpus only, so every run repeats the same inputs
#   scripts/fuzz.sh --seconds N    each target for N seconds, growing the corpus
#   scripts/fuzz.sh --runs N       each target for N executions (make fuzz: the campaign)
# Corpora grow in $FUZZ_BUILD_DIR/corpus/<target> (default build-fuzz/); a
# crash stops the script with its input in $FUZZ_BUILD_DIR/artifacts/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
mode=${1:---seconds}
amount=${2:-60}
case "$mode" in
  --bounded) limit="" ;;
  --seconds) limit="-max_total_time=$amount" ;;
  --runs) limit="-runs=$amount" ;;
  *) echo "usage: scripts/fuzz.sh --bounded | --seconds N | --runs N" >&2; exit 2 ;;
esac
# --bounded: executions per target, sized to about a minute each on this
# 2-core machine (the targets' speeds differ by 300x: a run directory is
# files, threads and hwloc; an event-log line is a few microseconds).
bounded_runs() {
  case "$1" in
    fuzz_cpuset) echo 120000 ;;
    fuzz_hwloc_xml) echo 6000 ;;
    fuzz_model_json) echo 15000 ;;
    fuzz_snapshot) echo 200000 ;;
    fuzz_event_log_line) echo 1800000 ;;
    fuzz_event_log_file) echo 100000 ;;
    fuzz_sample_file) echo 280000 ;;
    fuzz_run_directory) echo 10000 ;;
    fuzz_fabric) echo 400000 ;;
    fuzz_node_file) echo 200000 ;;
    *) echo 10000 ;;
  esac
}

cmake -S "$root" -B "$build" -DSTACKSAGE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build "$build" -j "$(nproc)"

corpus=$build/corpus
# A bounded run starts from the seeds alone, so that it is the same run
# everywhere; the campaign's corpus lives on in corpus/.
[ "$mode" = --bounded ] && corpus=$build/corpus-bounded && rm -rf "$corpus"
mkdir -p "$corpus" "$build/artifacts"
# Seeds: the real topologies and what our writers make of them; the real
# runs of tests/fuzz/seeds (event logs, their lines, torn and zero-filled
# copies, packed run directories) and the perf rings and sample files of
# each layout the recorder opens (fuzz_make_seeds writes them all).
mkdir -p "$corpus/fuzz_hwloc_xml" "$corpus/fuzz_cpuset"
cp "$root"/tests/data/hwloc-xml/*.xml "$corpus/fuzz_hwloc_xml/"
cp "$root"/tests/data/network/hwloc-netloc-plafrim2/hwloc/miriel03*.xml "$corpus/fuzz_hwloc_xml/"
printf '0-7,16-23' > "$corpus/fuzz_cpuset/list"
printf '0x00000003,0xffffffff' > "$corpus/fuzz_cpuset/mask"
# The fabric readers: the head of each real ports report, an ibroute table.
mkdir -p "$corpus/fuzz_fabric"
for c in plafrim plafrim2 avakas; do
  head -c 6000 "$root/tests/data/network/hwloc-netloc-$c/ib-raw/ib-subnet-fe80:0000:0000:0000.txt" > "$corpus/fuzz_fabric/$c-ports"
done
head -c 3000 "$root/tests/data/network/hwloc-netloc-plafrim/ib-raw/ibroutes-fe80:0000:0000:0000/ibroute-fe80:0000:0000:0000-2.txt" > "$corpus/fuzz_fabric/ibroute"
"$build/tests/fuzz/fuzz_make_seeds" "$root/tests/data" "$corpus" >/dev/null

# Leaks inside libhwloc are hwloc's, not ours: see the comments in the file.
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"

# fuzz_run_directory writes every input's files into a scratch directory
# under $TMPDIR: on a tmpfs it runs 17% faster than on this machine's disk.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi

status=0
passed=0
failed=0
for target in "$build"/tests/fuzz/fuzz_*; do
  name=$(basename "$target")
  [ "$name" = fuzz_make_seeds ] && continue
  [ -x "$target" ] || continue
  mkdir -p "$corpus/$name"
  this_limit=$limit
  [ "$mode" = --bounded ] && this_limit="-runs=$(bounded_runs "$name") -seed=1"
  # hwloc leaks on some malformed files (suppressed, see lsan.supp), and
  # after every such input LeakSanitizer scans the whole heap again: half
  # of these targets' time. The campaign checks leaks once, at exit; the
  # bounded run keeps checking after every input.
  case "$mode:$name" in
    --bounded:*) ;;
    *:fuzz_hwloc_xml | *:fuzz_run_directory) this_limit="$this_limit -detect_leaks=0" ;;
    # The real models' documents (100-228 KB) cost 2-4 ms an execution;
    # every feature of the format fits in 16 KB (docs/RELIABILITY.md).
    *:fuzz_model_json) this_limit="$this_limit -max_len=16384" ;;
  esac
  echo "== $name (${this_limit:-$mode $amount})"
  started=$SECONDS
  # hwloc may print its own complaints about broken XML on stderr; the
  # fuzzer's final statistics are what we keep.
  if ! "$target" "$corpus/$name" $this_limit -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$name-" > "$build/$name.log" 2>&1; then
    echo "   CRASH: see $build/$name.log and $build/artifacts/" >&2
    tail -40 "$build/$name.log" >&2
    status=1
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov: " "$build/$name.log" | tail -3 | sed 's/^/   /'
  echo "   $((SECONDS - started)) s"
done
echo "fuzz: $passed passed, $failed failed"
exit $status
