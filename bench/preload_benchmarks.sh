#!/usr/bin/env bash
# Runs the preload's benchmarks (docs/PERFORMANCE.md, section "Preload").
# Usage: bench/preload_benchmarks.sh [BUILD_DIR] [SECONDS]
#   SECONDS: about how long one run of the whole-run examples lasts (default 3)
set -euo pipefail
build=${1:-build}
seconds=${2:-3}
preload=$build/preload/libstacksage-preload.so
examples=$build/examples
# Half the CPUs: spinning OpenMP teams on every CPU of a (virtual) machine
# turn any interference into seconds of noise.
threads=$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))
root_flag=""
[ "$(id -u)" -eq 0 ] && root_flag="--allow-run-as-root"

echo "== machine: $(nproc) CPUs, $(uname -r)"
echo "== pthread_create: added cost (side by side, one process)"
"$build/bench/bench_preload_create_cost" "$preload" 20000
echo "== pthread_create: one thread_start line formatted"
"$build/bench/bench_preload_thread_start_line"

echo "== start-up: constructor to main"
"$build/bench/bench_preload_startup" "$preload" "$examples/startup_clock" 200

# Rounds of work that take about $seconds untraced: grow a calibration run
# until it lasts 1.5 s (mpirun's own start-up no longer dominates), then scale.
calibrate() {  # calibrate COMMAND... (the command takes --rounds N last)
  local rounds=10 start end elapsed
  while :; do
    start=$(date +%s.%N); "$@" "$rounds" >/dev/null; end=$(date +%s.%N)
    elapsed=$(python3 -c "print($end - $start)")
    if python3 -c "import sys; sys.exit(0 if $elapsed >= 1.5 else 1)"; then break; fi
    rounds=$((rounds * 4))
  done
  python3 -c "print(max(10, int($rounds * $seconds / $elapsed)))"
}

echo "== whole run: OpenMP (libgomp), $threads threads, OMP_PROC_BIND=close"
export OMP_NUM_THREADS=$threads OMP_PROC_BIND=close OMP_PLACES=cores
rounds=$(calibrate "$examples/omp_gomp" --rounds)
"$build/bench/bench_preload_run_overhead" "$preload" 10 "$examples/omp_gomp" --rounds "$rounds"

if [ -x "$examples/mpi_omp" ] && command -v mpirun >/dev/null; then
  ranks=2
  export OMP_NUM_THREADS=$((threads / ranks)) OMP_PROC_BIND=close
  unset OMP_PLACES
  echo "== whole run: MPI + OpenMP, $ranks ranks x $OMP_NUM_THREADS threads, --bind-to none"
  mpi=(mpirun $root_flag --oversubscribe -np $ranks --bind-to none "$examples/mpi_omp" --rounds)
  rounds=$(calibrate "${mpi[@]}")
  "$build/bench/bench_preload_run_overhead" "$preload" 10 "${mpi[@]}" "$rounds"
fi
