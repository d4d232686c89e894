#!/usr/bin/env bash
# The test suite again under the sanitizers. Run by `make check` (`make test`
# runs only scripts/sanitizer-smoke.sh).
#   scripts/sanitized-tests.sh [--asan-only|--tsan-only]
#
# 1. AddressSanitizer + UndefinedBehaviorSanitizer (leak checking on), in
#    build-asan: every unit test and every integration test. The integration
#    tests preload the sanitized recorder into real programs (the examples,
#    built with ASan too, and mpirun, sh, taskset, which are not); the runtime
#    is put in LD_PRELOAD right after the recorder (cli/sanitizer_runtime.hpp).
# 2. ThreadSanitizer, in build-tsan: the recorder's threaded tests
#    (PreloadThreads, PreloadProcess, PreloadFaults, PreloadStress), with
#    the recorder and the example programs built with TSan. Where TSan cannot
#    run is written in docs/RELIABILITY.md.
# Any report fails the test that caused it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
which=${1:-all}
case "$which" in
  all | --asan-only | --tsan-only) ;;
  *) echo "sanitized-tests.sh: unknown option '$which'; use --asan-only, --tsan-only or nothing (both)" >&2; exit 2 ;;
esac

if [ "$which" != --tsan-only ]; then
  build=$root/build-asan
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer ($build)"
  cmake -S "$root" -B "$build" -DSTACKSAGE_SANITIZE=address,undefined -DSTACKSAGE_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j "$jobs"
  # verify_asan_link_order=0: the runtime sits second in the LD_PRELOAD of
  # traced programs, and one test starts `stacksage run` with an
  # LD_PRELOAD of its own; the runtime still loads before the C library.
  # Leaks inside libhwloc and Open MPI are theirs: see tests/sanitizers/lsan.supp.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:verify_asan_link_order=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
  # Not here: label "browser" (it tests the page in chromium, not our native code),
  # and the tests whose traced programs are someone else's and start where
  # the sanitized runtime cannot be checked: Slurm's srun/slurmstepd and
  # Python (LeakSanitizer, preloaded into them, reports their own leaks;
  # in a process running BLIS's OpenMP build it crashes at exit itself),
  # and the ranks of the multi-host tests, started through a login
  # environment by an orted that is not sanitized (the runtime cannot come
  # first in their library list). The recorder in them is the one the
  # other tests check here.
  # Two verdicts on sanitized example programs are not the program's own:
  # a set-user-ID copy is not dumpable, so LeakSanitizer cannot start in it
  # (the test checks what `run` says, not the program); and a fork in an
  # ASan process copies the page tables of its shadow memory, so the parent
  # of `odd_recordings sequential` computes while its child does, and the
  # children no longer ran one after another.
  # Under ASan the program's allocator is ASan's, so the tests of other
  # allocators (jemalloc, tcmalloc) and of glibc's answer to an invalid
  # posix_memalign alignment (ASan reports it as an error, by design) do not
  # apply; and ASan's runtime touches its own shadow memory and globals, so
  # the page faults of the known-shape program are no longer only its own
  # (extra faults in its loops, static objects in libasan).
  (cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 600 -L 'unit|integration' \
    -E '^(slurm_runs|slurm_cluster_start|slurm_cluster_stop)$|^MultiHostLaunch\.|^LiveSignals\.PoolWorkers|^FollowedSuggestions\.(PythonPool|BlisOpenMp)|^LiveOddRecordings\.(SetuidAndCapability|ChildrenRunOneAfterAnother)|^PreloadSampling\.(ProgramsLinkedAgainstJemalloc|ProgramsWithTcmalloc|InterposedAllocationsKeepTheirSemantics|CallSitesAndObjectsOfAKnownFirstTouch)|CodeAttributionLive\.')
  unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
fi

if [ "$which" != --asan-only ]; then
  build=$root/build-tsan
  echo "== ThreadSanitizer ($build)"
  cmake -S "$root" -B "$build" -DSTACKSAGE_SANITIZE=thread -DSTACKSAGE_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j "$jobs" --target integration_preload
  # report_thread_leaks=0: the signal cases end their programs with threads
  # never joined, on purpose.
  export TSAN_OPTIONS="halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:report_thread_leaks=0"
  # Left out, each because TSan itself cannot run it, with or without the
  # recorder (docs/RELIABILITY.md): a main thread leaving through
  # pthread_exit (the program never exits), exit/_exit from a signal handler
  # while threads are created (TSan defers the signal; the program hangs),
  # and the dlopen'ed libgomp (not TSan-built: its barriers are invisible).
  # Also the children that start threads after their parent forked them
  # while a thread of the recorder's (the live watcher) ran: TSan kills such
  # a child ("starting new threads after multi-threaded fork is not
  # supported"; with die_after_fork=0 it hangs instead); and vfork, which
  # TSan's interceptor turns into fork (the child then is a process of its
  # own before its exec, and has a stream).
  (cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 600 \
    -R '^(PreloadThreads|PreloadFaults|PreloadStress|PreloadProcess)\.' \
    -E 'PthreadExitCancellationAndMainThreadExit|ExitFromASignalHandler|ThreadsOfADlopenedOpenMpRuntime|DescriptorExhaustionLeavesTheApplicationAsItWas|OutputDirectoryRemovedMidRun|VforkAndPosixSpawnChildrenAreTracedAsTheirOwnProcesses')
fi
