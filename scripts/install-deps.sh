#!/usr/bin/env bash
# Installs what stacksage needs to build and test, from Debian's packages.
# Only missing packages are installed; on a system without apt-get it prints
# what to install and fails.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libhwloc-dev hwloc-nox
  libfmt-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libpapi-dev
  libjemalloc-dev libtcmalloc-minimal4  # programs on another allocator under the recorder (examples/foreign_allocator.c)
  libunwind-dev libdw-dev libelf-dev  # after the run: stack copies unwound (libunwind remote), symbols and lines (elfutils), parsers/code_location/
  libopenmpi-dev openmpi-bin
  mpich                    # MPICH's Hydra launcher (mpiexec.hydra) for the multi-host tests; Open MPI stays the mpirun/mpicc default (its alternatives' priority is higher)
  clang libomp-dev libclang-rt-14-dev   # libclang-rt: libFuzzer and the sanitizers for scripts/fuzz.sh
  chromium nodejs          # the HTML report's browser test (tests/browser)
  libxml2-utils            # xmllint: the GraphML export is checked with it
  python3                  # tests/packaging: the Spack recipe is parsed with it
  slurm-wlm munge iproute2  # tests/slurm: a real two-node Slurm cluster on this machine (tests/support/slurm-cluster.sh)
  libsimdjson-dev libxml2-dev  # for the reader benchmarks only (bench/readers.cmake); optional, nothing else uses them
  # Thread pools of math libraries as runtimes (tests/system/test_live_remedies.cpp): each build
  # is loaded by its path, so the system's libblas.so.3 / libblis.so.4 alternatives are left as
  # they are (the pthreads OpenBLAS stays the default; the other builds have lower priorities).
  libopenblas0-pthread libopenblas0-openmp libblis4-pthread libblis4-openmp libtbb-dev
  python3-numpy            # Debian's /usr/bin/python3 with numpy on OpenBLAS: the multiprocessing.Pool case
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "stacksage: this is not a Debian-like system; please install the equivalents of: ${missing[*]}" >&2
  exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "stacksage: missing packages (${missing[*]}) and not root; run as root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

echo "stacksage: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
