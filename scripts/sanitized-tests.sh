#!/usr/bin/env bash
# The whole test suite again, built with AddressSanitizer and
# UndefinedBehaviorSanitizer (leak checking on). Run by `make test`.
#   scripts/sanitized-tests.sh [BUILD_DIR]   (default build-asan)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-asan}
jobs=$(nproc)

cmake -S "$root" -B "$build" -DSTACKSAGE_SANITIZE=address,undefined -DSTACKSAGE_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$jobs"

# Any report fails the test that caused it. Leaks inside libhwloc are
# hwloc's: see tests/sanitizers/lsan.supp.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
cd "$build"
# Every unit test. Not here (docs/RELIABILITY.md says what covers them):
# - label "integration" and LiveRuns.*: they preload the sanitized recorder
#   into programs that are not built with ASan (taskset, mpirun, sh), where
#   ASan refuses to run because its runtime is not the first library;
# - label "browser": it tests the page in chromium, not our native code.
ctest --output-on-failure -j "$jobs" --timeout 600 -L unit -E 'LiveRuns\.'
