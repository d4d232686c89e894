# Spack recipe for stacksage. Copy this directory into a Spack repository
# (or `spack repo add` a repository holding it). Until the sources are
# published with a URL and release tags, build from a checkout:
#   cd stacksage && spack dev-build stacksage@0.1.0 +papi ~mpi
# The variants map one to one onto CMake cache variables of CMakeLists.txt
# (tests/packaging/test_spack_recipe.py checks that they stay consistent).
from spack.package import *


class Stacksage(CMakePackage):
    """Tells how the processes and threads of an HPC job really used the
    machine: an LD_PRELOAD recorder of thread creation, affinity, MPI and
    process events, a hwloc-based topology model, and reports of
    over-subscribed or idle cores, runtime stacking and memory locality."""

    license("BSD-3-Clause")

    # Must include the version of project(stacksage VERSION ...).
    version("main")
    version("0.1.0")

    variant("papi", default=True, description="PAPI sampling backend (--sample=papi)")
    variant("mpi", default=False,
            description="Build the MPI example program that the MPI integration tests run")

    # The languages of project(... LANGUAGES C CXX), as Spack >= 0.23 wants them.
    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.25:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("hwloc@2.8:")
    depends_on("fmt")
    depends_on("nlohmann-json@3.10:")
    depends_on("cli11")
    depends_on("googletest", type="test")
    depends_on("papi", when="+papi")
    depends_on("mpi", when="+mpi")

    def cmake_args(self):
        return [
            self.define("STACKSAGE_BUILD_TESTS", self.run_tests),
            self.define("STACKSAGE_BUILD_BENCH", False),
            self.define_from_variant("STACKSAGE_WITH_PAPI", "papi"),
            self.define_from_variant("STACKSAGE_WITH_MPI", "mpi"),
        ]
