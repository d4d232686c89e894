#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each one.
#   scripts/fuzz.sh --seconds N    each target for N seconds (make test: a bounded run)
#   scripts/fuzz.sh --runs N       each target for N executions (make fuzz: the campaign)
# Corpora grow in $FUZZ_BUILD_DIR/corpus/<target> (default build-fuzz/); a
# crash stops the script with its input in $FUZZ_BUILD_DIR/artifacts/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
mode=${1:---seconds}
amount=${2:-60}
case "$mode" in
  --seconds) limit="-max_total_time=$amount" ;;
  --runs) limit="-runs=$amount" ;;
  *) echo "usage: scripts/fuzz.sh --seconds N | --runs N" >&2; exit 2 ;;
esac

cmake -S "$root" -B "$build" -DSTACKSAGE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build "$build" -j "$(nproc)"

corpus=$build/corpus
mkdir -p "$corpus" "$build/artifacts"
# Seeds: the real topologies and what our writers make of them.
mkdir -p "$corpus/fuzz_hwloc_xml" "$corpus/fuzz_cpuset"
cp "$root"/tests/data/hwloc-xml/*.xml "$corpus/fuzz_hwloc_xml/"
cp "$root"/tests/data/network/hwloc-netloc-plafrim2/hwloc/miriel03*.xml "$corpus/fuzz_hwloc_xml/"
printf '0-7,16-23' > "$corpus/fuzz_cpuset/list"
printf '0x00000003,0xffffffff' > "$corpus/fuzz_cpuset/mask"
"$build/tests/fuzz/fuzz_make_seeds" "$root/tests/data" "$corpus" >/dev/null

# Leaks inside libhwloc are hwloc's, not ours: see the comments in the file.
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0"

status=0
for target in "$build"/tests/fuzz/fuzz_*; do
  name=$(basename "$target")
  [ "$name" = fuzz_make_seeds ] && continue
  [ -x "$target" ] || continue
  mkdir -p "$corpus/$name"
  echo "== $name ($mode $amount)"
  # hwloc may print its own complaints about broken XML on stderr; the
  # fuzzer's final statistics are what we keep.
  if ! "$target" "$corpus/$name" $limit -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$name-" > "$build/$name.log" 2>&1; then
    echo "   CRASH: see $build/$name.log and $build/artifacts/" >&2
    tail -40 "$build/$name.log" >&2
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov: " "$build/$name.log" | tail -3 | sed 's/^/   /'
done
exit $status
