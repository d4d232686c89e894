#!/usr/bin/env bash
# The sanitizer smoke test of `make test`: a few minutes, where the full
# sanitizer stages of `make check` (scripts/sanitized-tests.sh) take half an
# hour on 2 cores.
#
# Builds, with AddressSanitizer + UndefinedBehaviorSanitizer, only the code
# that runs inside other people's programs (libstacksage-preload.so and
# libstacksage-model.so, which takes the parsers and the model with it) and
# a few example programs, then records those programs with it the way the
# docs describe preloading by hand: LD_PRELOAD=recorder:libasan. Any
# sanitizer report aborts a program and fails the smoke test; the recorded
# run must then be read by the normal build's `stacksage report`.
#   scripts/sanitizer-smoke.sh [NORMAL_BUILD_DIR]   (default: build)
# The ASan build goes to build-asan, with the same settings as make check's,
# which then reuses it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
normal=$(cd "${1:-$root/build}" && pwd)
build=$root/build-asan
jobs=$(nproc)
programs=(pthreads_affinity std_threads fork_exec "many_threads 200" thread_exit)

echo "== Sanitizer smoke: the recorder under AddressSanitizer + UndefinedBehaviorSanitizer ($build)"
cmake -S "$root" -B "$build" -DSTACKSAGE_SANITIZE=address,undefined -DSTACKSAGE_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=(stacksage-preload stacksage-model)
for p in "${programs[@]}"; do targets+=("example_${p%% *}"); done
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

asan_runtime=$(${CXX:-c++} -print-file-name=libasan.so)
[ -f "$asan_runtime" ] || { echo "sanitizer-smoke: libasan.so not found ($asan_runtime)" >&2; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/stacksage-sanitizer-smoke-XXXXXX")
trap 'rm -rf "$out"' EXIT

# The runtime second, right after the recorder (cli/sanitizer_runtime.hpp says
# why). Only the traced programs get these settings, not `stacksage report`.
sanitizer_env=(
  "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:verify_asan_link_order=0"
  "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
  "LSAN_OPTIONS=suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
  "LD_PRELOAD=$build/preload/libstacksage-preload.so:$asan_runtime")
for p in "${programs[@]}"; do
  read -r -a argv <<<"$p"
  dir=$out/${argv[0]}
  mkdir -p "$dir"
  echo "-- ${argv[*]}"
  status=0
  env "${sanitizer_env[@]}" STACKSAGE_OUTPUT="$dir" "$build/examples/${argv[0]}" "${argv[@]:1}" >/dev/null || status=$?
  [ "$status" -eq 0 ] || { echo "sanitizer-smoke: ${argv[*]} failed under the sanitized recorder (exit $status)" >&2; exit 1; }
  models=$(find "$dir" -name 'node*.models' -size +4096c | wc -l)  # a header, then the models' streams
  [ "$models" -ge 1 ] || { echo "sanitizer-smoke: ${argv[*]}: no model was written" >&2; exit 1; }
  "$normal/cli/stacksage" report "$dir" >/dev/null ||
    { echo "sanitizer-smoke: stacksage report cannot read what ${argv[*]} recorded" >&2; exit 1; }
done
echo "sanitizer smoke: ${#programs[@]} programs recorded by the sanitized recorder without a report"
