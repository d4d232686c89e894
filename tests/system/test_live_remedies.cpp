// Suggestions that work when followed (issue 17, part 3): each scenario is
// recorded under `stacksage run`, its warning's remedy (the suggestion as
// data, Finding::remedy / "remedy" in the JSON report) is applied to the
// same command, and the re-run must pass `stacksage check --fail-on
// warning`. Runs are restricted with taskset to CPUs 0-1; a scenario is
// skipped when what it needs (the preload, an example, mpirun) is missing.
#include <gtest/gtest.h>
#include <unistd.h>

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
        std::string s = "taskset -c 0,1 ";
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

// The first warning's remedy applied to the job.
Job follow(const nlohmann::json& report, Job job, bool with_launcher) {
    for (const auto& f : report["findings"]) {
        if (f["severity"] != "warning" || f["remedy"].is_null()) continue;
        const auto& remedy = f["remedy"];
        for (const auto& [k, v] : remedy["env"].items()) set_env(job, k, v.get<std::string>());
        if (with_launcher) {
            EXPECT_FALSE(remedy["launcher_options"].empty()) << f.dump(1);
            job.launcher_options = remedy["launcher_options"].get<std::vector<std::string>>();
            if (!remedy["processes_per_node"].is_null()) job.processes = remedy["processes_per_node"].get<int>();
        }
        if (job.threads_argument >= 0 && !remedy["threads_per_process"].is_null())
            job.threads_argument = remedy["threads_per_process"].get<int>();
        return job;
    }
    ADD_FAILURE() << "no warning with a remedy: " << report.dump(1);
    return job;
}

// Records the job, expects the warning `code`, follows its remedy and
// expects the re-run to be clean.
void expect_followed_suggestion_is_clean(const Job& job, const std::string& launcher, const std::string& code) {
    stacksage::testing::TempDir dir;
    const Recorded before = record(dir, "before", job, launcher);
    ASSERT_FALSE(before.report.is_discarded());
    bool warned = false;
    for (const auto& f : before.report["findings"]) warned = warned || f["code"] == code;
    ASSERT_TRUE(warned) << "expected " << code << ":\n" << before.report["findings"].dump(1);
    EXPECT_EQ(before.check_exit, 1) << before.check_output;
    const Job fixed = follow(before.report, job, !launcher.empty());
    const Recorded after = record(dir, "after", fixed, launcher);
    EXPECT_EQ(after.check_exit, 0) << "the suggestion followed: " << fixed.environment() << fixed.command(launcher) << "\n"
                                   << after.check_output << "\n" << after.report["findings"].dump(1);
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
