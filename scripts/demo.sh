#!/usr/bin/env bash
# `make demo`: stacksage at work on real jobs. Called by the Makefile after the build.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
stacksage="$build/cli/stacksage"
work=$(mktemp -d "${TMPDIR:-/tmp}/stacksage-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== This machine, as stacksage models it: stacksage topo --fold"
"$stacksage" topo --fold
echo

echo "== An OpenMP job with more threads than cores, sampled:"
echo "   OMP_NUM_THREADS=4 stacksage run --sample=auto -- omp_gomp"
OMP_NUM_THREADS=4 "$stacksage" run --sample=auto -o "$work/omp" -- "$build/examples/omp_gomp"
echo
echo "== stacksage report"
"$stacksage" report "$work/omp"
echo

if command -v mpirun >/dev/null 2>&1 && [ -x "$build/examples/mpi_omp" ]; then
  root_flag=""
  [ "$(id -u)" -eq 0 ] && root_flag="--allow-run-as-root"
  echo "== MPI + OpenMP, 2 ranks x 2 threads, unbound:"
  echo "   stacksage run -- mpirun -np 2 --bind-to none ./mpi_omp"
  OMP_NUM_THREADS=2 "$stacksage" run -q -o "$work/mpi" -- \
    mpirun $root_flag --oversubscribe -np 2 --bind-to none -x OMP_NUM_THREADS "$build/examples/mpi_omp"
  echo
  echo "== stacksage report"
  "$stacksage" report "$work/mpi"
fi
