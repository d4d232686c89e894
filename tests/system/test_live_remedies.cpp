// Suggestions that work when followed (issue 17, part 3; issue 26): each
// scenario is recorded under `stacksage run`, every distinct remedy of its
// warnings (the suggestion as data, Finding::remedy / "remedy" in the JSON
// report) is applied to the same command, and each re-run must pass
// `stacksage check --fail-on warning`: it neither warns nor, so, sends back
// to the first configuration; and a remedy must change the job (never
// advise what the run already had). Runs are restricted with taskset to
// CPUs 0-1; a scenario is skipped when what it needs (the preload, an
// example, mpirun, a library build, Debian's python3 with numpy) is missing.
//
// Finding codes and the scenarios that follow their remedies here:
//  - overloaded-resources (and overloaded-reservation, reported with it):
//    MPI+OpenMP, OpenMP, pthreads, the BLAS pools, TBB, the Python pool;
//  - idle-resources: one rank under Open MPI's default binding, one
//    process restricted by taskset;
//  - underloaded-reservation: one busy thread on two cores;
//  - runtime-contention: workers that multiply in a thread of their own
//    (the application's thread beside OpenBLAS's pool).
// Not produced live here, with why: a node with hardware threads (SMT:
// smt-shared-cores, smt-unused-hardware-threads; this machine has none),
// several NUMA nodes (numa-remote-access, numa-serial-first-touch: one
// NUMA node), and ran-outside-affinity (needs a mask changed behind the
// recorder's back while the cpu-clock sampler follows the thread). These
// have no remedy as data; their advice is tested on hand-built models in
// tests/analysis. Slurm's binding (srun) is tested there and on synthetic
// two-node runs (tests/pipeline/test_slurm_binding.cpp): this machine has no
// Slurm.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

namespace {

using stacksage::testing::Shell;
using stacksage::testing::shell;
using stacksage::testing::which;

const std::string kBin = STACKSAGE_BINARY_DIR;
// The source tree, for the Python example.
const std::string kSource = STACKSAGE_SOURCE_DIR;
const std::string kLibDir = "/usr/lib/x86_64-linux-gnu/";
// Debian's python3, with python3-numpy (the first python3 on PATH may be
// another without numpy).
const std::string kPython = "/usr/bin/python3";
const std::string kCli = kBin + "/cli/stacksage";

bool have(const std::string& path) { return stacksage::testing::is_executable(path); }

// Shared memory only: Open MPI's PSM2 transport (libpsm2, libinfinipath),
// where installed, binds the ranks to CPUs of its choice during MPI_Init
// for some 0.2 s, which the analysis sees (placement judged at each moment)
// and which is a third of these short runs; the remedies are about the
// launcher's binding and the thread counts.
std::string mpirun() {
    const std::string path = which("mpirun");
    return path.empty() ? path : path + " --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader";
}

// A job as the remedy changes it: the environment, the launcher's process
// count and options, and the program's own thread count (for programs whose
// threads are an argument).
struct Job {
    std::vector<std::pair<std::string, std::string>> env;
    std::string cpus = "0,1";               // taskset's list
    int processes = 1;                      // for a launcher
    std::vector<std::string> launcher_options;
    std::string program;
    int threads_argument = -1;              // -1: the program takes none
    std::string arguments;                  // after the thread count

    // The variables, set for `stacksage run` (which passes them on).
    std::string environment() const {
        std::string s;
        for (const auto& [k, v] : env) s += k + "=" + v + " ";
        return s;
    }

    std::string command(const std::string& launcher) const {
        std::string s = "taskset -c " + cpus + " ";
        if (!launcher.empty()) {
            s += launcher + " -np " + std::to_string(processes);
            for (const std::string& o : launcher_options) s += " " + o;
            for (const auto& [k, v] : env) s += " -x " + k;
            s += " ";
        }
        s += program;
        if (threads_argument >= 0) s += " " + std::to_string(threads_argument);
        return s + " " + arguments;
    }
};

void set_env(Job& job, const std::string& name, const std::string& value) {
    for (auto& [k, v] : job.env)
        if (k == name) {
            v = value;
            return;
        }
    job.env.emplace_back(name, value);
}

struct Recorded {
    nlohmann::json report;
    int check_exit = -1;
    std::string check_output;
};

Recorded record(const stacksage::testing::TempDir& dir, const std::string& name, const Job& job,
                const std::string& launcher) {
    Recorded r;
    const std::string out = dir.str() + "/" + name;
    const std::string command = job.command(launcher);
    const Shell run = shell(job.environment() + kCli + " run -q -o " + out + " -- " + command);
    EXPECT_EQ(run.exit_code, 0) << command << "\n" << run.output;
    const Shell report = shell(kCli + " report " + out + " --format json");
    EXPECT_EQ(report.exit_code, 0) << report.output;
    r.report = nlohmann::json::parse(report.output, nullptr, false);
    const Shell check = shell(kCli + " check " + out + " --fail-on warning");
    r.check_exit = check.exit_code;
    r.check_output = check.output;
    return r;
}

// A remedy applied to the job.
Job follow(const nlohmann::json& remedy, Job job, bool with_launcher) {
    for (const auto& [k, v] : remedy["env"].items()) set_env(job, k, v.get<std::string>());
    if (with_launcher) {
        EXPECT_FALSE(remedy["launcher_options"].empty()) << remedy.dump(1);
        job.launcher_options = remedy["launcher_options"].get<std::vector<std::string>>();
        if (!remedy["processes_per_node"].is_null()) job.processes = remedy["processes_per_node"].get<int>();
    } else if (!remedy["cores_per_process"].is_null()) {
        // Without a launcher the processes share the job's CPUs: as many as
        // the remedy gives them all.
        const int processes = remedy["processes_per_node"].is_null() ? 1 : remedy["processes_per_node"].get<int>();
        const int cores = remedy["cores_per_process"].get<int>() * std::max(1, processes);
        job.cpus = cores <= 1 ? "0" : "0-" + std::to_string(cores - 1);
    }
    if (job.threads_argument >= 0 && !remedy["threads_per_process"].is_null())
        job.threads_argument = remedy["threads_per_process"].get<int>();
    return job;
}

// Every distinct remedy of the warnings, in the order of the findings.
std::vector<nlohmann::json> remedies_of(const nlohmann::json& report) {
    std::vector<nlohmann::json> out;
    std::set<std::string> seen;
    for (const auto& f : report["findings"]) {
        if (f["severity"] != "warning" || f["remedy"].is_null()) continue;
        if (seen.insert(f["remedy"].dump()).second) out.push_back(f["remedy"]);
    }
    return out;
}

// Records the job, expects the warning `code`, follows each remedy and
// expects each re-run to be clean, with a job the remedy changed.
void expect_followed_suggestion_is_clean(const Job& job, const std::string& launcher, const std::string& code) {
    stacksage::testing::TempDir dir;
    const Recorded before = record(dir, "before", job, launcher);
    ASSERT_FALSE(before.report.is_discarded());
    bool warned = false;
    for (const auto& f : before.report["findings"]) warned = warned || f["code"] == code;
    ASSERT_TRUE(warned) << "expected " << code << ":\n" << before.report["findings"].dump(1);
    EXPECT_EQ(before.check_exit, 1) << before.check_output;
    const std::vector<nlohmann::json> remedies = remedies_of(before.report);
    ASSERT_FALSE(remedies.empty()) << "no warning with a remedy: " << before.report["findings"].dump(1);
    for (std::size_t i = 0; i < remedies.size(); ++i) {
        const Job fixed = follow(remedies[i], job, !launcher.empty());
        const std::string was = job.environment() + job.command(launcher);
        const std::string now = fixed.environment() + fixed.command(launcher);
        EXPECT_NE(now, was) << "the remedy asks for what already ran: " << remedies[i].dump();
        const Recorded after = record(dir, "after" + std::to_string(i), fixed, launcher);
        EXPECT_EQ(after.check_exit, 0) << "the suggestion followed: " << now << "\n"
                                       << after.check_output << "\n"
                                       << after.report["findings"].dump(1);
    }
}

#define REQUIRE(path)                                                                                 \
    do {                                                                                              \
        if (!have(path)) GTEST_SKIP() << (path) << " is not built";                                   \
        if (!have(kCli)) GTEST_SKIP() << "stacksage is not built";                                    \
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";                      \
    } while (0)

#define REQUIRE_MPI()                                                                                 \
    do {                                                                                              \
        REQUIRE(kBin + "/examples/mpi_omp");                                                          \
        if (mpirun().empty()) GTEST_SKIP() << "no mpirun";                                            \
    } while (0)

Job mpi_omp(int ranks, const std::string& binding, const std::string& omp_threads) {
    Job job;
    job.env = {{"OMP_NUM_THREADS", omp_threads}};
    job.processes = ranks;
    if (!binding.empty()) job.launcher_options = {"--bind-to", binding};
    job.program = kBin + "/examples/mpi_omp";
    job.arguments = "0.3";
    return job;
}

}  // namespace

// 8 ranks x 2 OpenMP threads, unbound, on 2 cores. The old advice
// (--map-by ppr:2:node --bind-to core, OMP_NUM_THREADS left at 2) gave a
// run warned about again.
TEST(FollowedSuggestions, EightUnboundRanksOfTwoThreads) {
    REQUIRE_MPI();
    expect_followed_suggestion_is_clean(mpi_omp(8, "none", "2"), mpirun(), "overloaded-resources");
}

// 1 rank x 2 threads under Open MPI's default binding (to one core for
// np <= 2): the advice is a launcher option, not "run 2 threads".
TEST(FollowedSuggestions, OneRankOfTwoThreadsUnderTheDefaultBinding) {
    REQUIRE_MPI();
    expect_followed_suggestion_is_clean(mpi_omp(1, "", "2"), mpirun(), "overloaded-resources");
}

// 8 ranks bound to cores, 2 threads each: each rank's threads confined to
// its core.
TEST(FollowedSuggestions, EightRanksBoundToCoresWithTwoThreadsEach) {
    REQUIRE_MPI();
    expect_followed_suggestion_is_clean(mpi_omp(8, "core:overload-allowed", "2"), mpirun(), "overloaded-resources");
}

// 1 rank x 1 thread under the default binding leaves a core idle: more
// threads alone would share the rank's one core; the remedy widens it.
TEST(FollowedSuggestions, OneRankOfOneThreadLeavesACoreIdle) {
    REQUIRE_MPI();
    expect_followed_suggestion_is_clean(mpi_omp(1, "", "1"), mpirun(), "idle-resources");
}

// OpenMP alone: 4 threads on 2 cores.
TEST(FollowedSuggestions, FourOpenMpThreadsOnTwoCores) {
    REQUIRE(kBin + "/examples/omp_gomp");
    Job job;
    job.env = {{"OMP_NUM_THREADS", "4"}};
    job.program = kBin + "/examples/omp_gomp";
    job.arguments = "0.3";
    expect_followed_suggestion_is_clean(job, "", "overloaded-resources");
}

// Plain pthreads: 4 workers on 2 cores while the main thread waits in
// pthread_join; the remedy's thread count is the program's argument.
TEST(FollowedSuggestions, FourPthreadsOnTwoCores) {
    REQUIRE(kBin + "/examples/busy_threads");
    Job job;
    job.program = kBin + "/examples/busy_threads";
    job.threads_argument = 4;
    job.arguments = "0.3 0.1";
    expect_followed_suggestion_is_clean(job, "", "overloaded-resources");
}

// Two single-threaded unbound ranks on 2 cores: 1.0 thread per CPU, nothing
// over-demanded. Information, not a warning (issue 17, part 4).
TEST(FollowedSuggestions, TwoUnboundSingleThreadedRanksAreNotAWarning) {
    REQUIRE_MPI();
    stacksage::testing::TempDir dir;
    const Recorded r = record(dir, "run", mpi_omp(2, "none", "1"), mpirun());
    ASSERT_FALSE(r.report.is_discarded());
    EXPECT_EQ(r.check_exit, 0) << r.check_output << r.report["findings"].dump(1);
    bool shared = false;
    for (const auto& f : r.report["findings"]) {
        EXPECT_NE(f["severity"], "warning") << f.dump(1);
        shared = shared || f["code"] == "shared-resources";
    }
    EXPECT_TRUE(shared) << r.report["findings"].dump(1);
}

// ---- issue 26: the thread pools of the math libraries and TBB -------------------

// Two worker processes (the parent and its child), each multiplying with
// Debian's OpenBLAS (pthreads build, one thread per CPU: 2 each) on 2 cores:
// the remedy is OPENBLAS_NUM_THREADS=1.
TEST(FollowedSuggestions, OpenBlasPthreadsWorkers) {
    const std::string library = kLibDir + "openblas-pthread/libblas.so.3";
    REQUIRE(kBin + "/examples/blas_workers");
    if (access(library.c_str(), R_OK) != 0) GTEST_SKIP() << library << " is not installed (libopenblas0-pthread)";
    Job job;
    job.program = kBin + "/examples/blas_workers " + library;
    job.arguments = "2 0.6";
    expect_followed_suggestion_is_clean(job, "", "overloaded-resources");
}

// OpenBLAS's OpenMP build: libgomp creates its threads, OMP_NUM_THREADS sizes them.
TEST(FollowedSuggestions, OpenBlasOpenMpWorkers) {
    const std::string library = kLibDir + "openblas-openmp/libblas.so.3";
    REQUIRE(kBin + "/examples/blas_workers");
    if (access(library.c_str(), R_OK) != 0) GTEST_SKIP() << library << " is not installed (libopenblas0-openmp)";
    Job job;
    job.program = kBin + "/examples/blas_workers " + library;
    job.arguments = "2 0.6";
    expect_followed_suggestion_is_clean(job, "", "overloaded-resources");
}

// BLIS's pthreads build, 2 threads each by BLIS_NUM_THREADS (BLIS runs one
// thread unless told): the remedy is BLIS_NUM_THREADS=1.
TEST(FollowedSuggestions, BlisPthreadsWorkers) {
    const std::string library = kLibDir + "blis-pthread/libblis.so.4";
    REQUIRE(kBin + "/examples/blas_workers");
    if (access(library.c_str(), R_OK) != 0) GTEST_SKIP() << library << " is not installed (libblis4-pthread)";
    Job job;
    job.env = {{"BLIS_NUM_THREADS", "2"}};
    job.program = kBin + "/examples/blas_workers " + library;
    job.arguments = "2 0.6";
    expect_followed_suggestion_is_clean(job, "", "overloaded-resources");
}

// BLIS's OpenMP build with BLIS_NUM_THREADS=2: libgomp creates the threads,
// and BLIS_NUM_THREADS overrides OMP_NUM_THREADS, so the remedy sets both
// (OMP_NUM_THREADS alone would leave 2 threads each).
TEST(FollowedSuggestions, BlisOpenMpWorkersWithBlisNumThreads) {
    const std::string library = kLibDir + "blis-openmp/libblis.so.4";
    REQUIRE(kBin + "/examples/blas_workers");
    if (access(library.c_str(), R_OK) != 0) GTEST_SKIP() << library << " is not installed (libblis4-openmp)";
    Job job;
    job.env = {{"BLIS_NUM_THREADS", "2"}};
    job.program = kBin + "/examples/blas_workers " + library;
    job.arguments = "2 0.6";
    expect_followed_suggestion_is_clean(job, "", "overloaded-resources");
}

// TBB reads no variable: the remedy's thread count is the program's
// argument, which it gives to tbb::global_control (0: TBB's default).
TEST(FollowedSuggestions, TbbWorkers) {
    REQUIRE(kBin + "/examples/tbb_workers");
    Job job;
    job.program = kBin + "/examples/tbb_workers";
    job.threads_argument = 0;
    job.arguments = "2 0.6";
    expect_followed_suggestion_is_clean(job, "", "overloaded-resources");
}

bool python_with_numpy() { return shell(kPython + " -c 'import numpy' 2>&1").exit_code == 0; }

// multiprocessing.Pool(2), each worker multiplying with numpy on OpenBLAS
// (2 threads each) on 2 cores. The warning counts the 2 workers, not the
// parent that only waited, and its remedy is OPENBLAS_NUM_THREADS=1.
TEST(FollowedSuggestions, PythonPoolOfNumpyWorkers) {
    REQUIRE(kBin + "/examples/blas_workers");  // the build; the script is in the source tree
    if (!python_with_numpy()) GTEST_SKIP() << kPython << " has no numpy (python3-numpy)";
    Job job;
    job.program = kPython + " " + kSource + "/examples/pool_matmul.py";
    job.arguments = "2 0.6";
    stacksage::testing::TempDir dir;
    const Recorded before = record(dir, "before", job, "");
    ASSERT_FALSE(before.report.is_discarded());
    bool told = false;
    for (const auto& f : before.report["findings"]) {
        if (f["code"] != "overloaded-resources") continue;
        const std::string suggestion = f["suggestion"].get<std::string>();
        EXPECT_EQ(suggestion.find("processs"), std::string::npos) << suggestion;
        EXPECT_EQ(suggestion.find("3 processes"), std::string::npos) << suggestion;  // the parent only waited
        EXPECT_EQ(f["remedy"]["env"].value("OPENBLAS_NUM_THREADS", ""), "1") << f.dump(1);
        told = true;
    }
    EXPECT_TRUE(told) << before.report["findings"].dump(1);
    expect_followed_suggestion_is_clean(job, "", "overloaded-resources");
}

// Each worker multiplies in a thread it creates and joins: the
// application's thread and OpenBLAS's pool compete on the same cores
// (runtime-contention, beside the overload), and the remedy is the library's
// variable.
TEST(FollowedSuggestions, ApplicationThreadsBesideOpenBlasContend) {
    const std::string library = kLibDir + "openblas-pthread/libblas.so.3";
    REQUIRE(kBin + "/examples/blas_workers");
    if (access(library.c_str(), R_OK) != 0) GTEST_SKIP() << library << " is not installed (libopenblas0-pthread)";
    Job job;
    job.program = kBin + "/examples/blas_workers " + library;
    job.arguments = "2 0.6 256 thread";
    expect_followed_suggestion_is_clean(job, "", "runtime-contention");
}

// ---- issue 26: advice that converges ----------------------------------------------

// One busy thread on two cores: underloaded-reservation. Its remedy is more
// threads, never a narrower binding (taskset -c 0 leaves a core idle,
// whose advice brought the first configuration back).
TEST(FollowedSuggestions, OneBusyThreadOnTwoCores) {
    REQUIRE(kBin + "/examples/busy_threads");
    Job job;
    job.program = kBin + "/examples/busy_threads";
    job.threads_argument = 1;
    job.arguments = "0.5 0";
    expect_followed_suggestion_is_clean(job, "", "underloaded-reservation");
}

// The same thread restricted by taskset to one core: idle-resources, whose
// remedy (2 threads on the 2 cores) is the same fixed point.
TEST(FollowedSuggestions, OneBusyThreadRestrictedToOneCore) {
    REQUIRE(kBin + "/examples/busy_threads");
    Job job;
    job.cpus = "0";
    job.program = kBin + "/examples/busy_threads";
    job.threads_argument = 1;
    job.arguments = "0.5 0";
    expect_followed_suggestion_is_clean(job, "", "idle-resources");
}
