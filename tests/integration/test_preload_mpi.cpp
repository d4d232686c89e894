// MPI + OpenMP under Open MPI's mpirun, through `stacksage run`: the
// launcher is recorded as a launcher, each rank gets a rank-named log with
// MPI_Init/MPI_Finalize snapshots, MPI's helper threads are attributed to
// Open MPI's libraries, and --bind-to shows in the inherited masks.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include <unistd.h>

#include "parsers/node_file_reader.hpp"

#include "tests/integration/log_checks.hpp"

namespace stacksage::testing {
namespace {

#ifndef STACKSAGE_MPIRUN
#define STACKSAGE_MPIRUN "mpirun"
#define STACKSAGE_NO_MPI 1
#endif

// Skips the test when Open MPI (mpirun and the MPI example) is not available.
#define REQUIRE_MPI()                                                   \
    do {                                                                \
        if (STACKSAGE_NO_MPI_FLAG) GTEST_SKIP() << "no mpirun or MPI example"; \
    } while (0)
#ifdef STACKSAGE_NO_MPI
constexpr bool STACKSAGE_NO_MPI_FLAG = true;
#else
constexpr bool STACKSAGE_NO_MPI_FLAG = false;
#endif

std::vector<std::string> mpirun_args(const std::string& bind) {
    std::vector<std::string> args = {STACKSAGE_MPIRUN, "-np", "2", "--oversubscribe", "--bind-to", bind};
    if (::geteuid() == 0) args.insert(args.begin() + 1, "--allow-run-as-root");
    return args;
}

struct MpiRun {
    RunResult result;
    std::vector<ProcessLog> logs;
    std::vector<const ProcessLog*> ranks;
    const ProcessLog* launcher = nullptr;
};

MpiRun run_mpi(const TempDir& out, const std::string& bind) {
    RunOptions o;
    o.argv = {stacksage_binary(), "run", "-o", out.path().string(), "--"};
    for (auto& a : mpirun_args(bind)) o.argv.push_back(a);
    o.argv.push_back(example("mpi_omp"));
    o.preload = false;  // `stacksage run` does it
    o.env = {{"OMP_NUM_THREADS", "2"}, {"STACKSAGE_PRELOAD", preload_library()}};
    o.timeout = std::chrono::seconds(120);
    MpiRun m;
    m.result = run(o);
    m.logs = read_logs(out.path());
    for (const auto& l : m.logs) {
        if (!l.start()["rank"].is_null() && l.start()["origin"] == "exec") m.ranks.push_back(&l);
        if (l.start()["launcher"].is_string() && l.start()["origin"] == "exec") m.launcher = &l;
    }
    // By rank: streams of a node file are in the order the ranks opened them.
    std::sort(m.ranks.begin(), m.ranks.end(), [](const ProcessLog* a, const ProcessLog* b) {
        return a->start()["rank"].get<int>() < b->start()["rank"].get<int>();
    });
    return m;
}

void expect_mpi_run(const MpiRun& m) {
    ASSERT_EQ(m.result.exit_code(), 0) << m.result.err;
    EXPECT_NE(m.result.out.find("2 ranks x 2 threads"), std::string::npos) << m.result.out;
    // The closing line counts processes, not logs: mpirun's fork of each
    // rank before it exec'ed left a log of its own, said apart.
    EXPECT_NE(m.result.err.find("stacksage: 2 processes (ranks 0-1) and 1 launcher recorded in 5 logs from 1 host; "
                                "2 logs are images of processes before they exec'ed ("),
              std::string::npos)
        << m.result.err;
    for (const auto& l : m.logs) expect_well_formed(l);
    ASSERT_NE(m.launcher, nullptr) << describe(m.logs);
    EXPECT_TRUE(m.launcher->start()["rank"].is_null());
    ASSERT_EQ(m.ranks.size(), 2u) << describe(m.logs);
    for (int rank = 0; rank < 2; ++rank) {
        const ProcessLog& log = *m.ranks[rank];
        SCOPED_TRACE(log.file.string());
        EXPECT_EQ(log.start()["rank"], rank);
        EXPECT_EQ(log.start()["identity"]["OMPI_COMM_WORLD_RANK"], std::to_string(rank));
        auto init = log.first("mpi_init");
        ASSERT_TRUE(init);
        EXPECT_EQ((*init)["rank"], rank);
        EXPECT_EQ((*init)["size"], 2);
        EXPECT_EQ((*init)["api"], "MPI_Init_thread");
        EXPECT_GE((*init)["threads"].size(), 2u);  // main + MPI's progress threads
        auto fin = log.first("mpi_finalize");
        ASSERT_TRUE(fin);
        EXPECT_GE((*fin)["threads"].size(), 2u);
        // Open MPI's helper threads come from its own libraries, the team from libgomp.
        bool mpi_helper = false, omp_worker = false;
        for (const auto& s : log.all("thread_start")) {
            std::string creator = base_name(s["creator_module"]);
            if (creator.rfind("libopen-pal", 0) == 0 || creator.rfind("libpmix", 0) == 0 ||
                creator.rfind("libopen-rte", 0) == 0 || creator.rfind("libmpi", 0) == 0)
                mpi_helper = true;
            if (creator == "libgomp.so.1") omp_worker = true;
        }
        EXPECT_TRUE(mpi_helper);
        EXPECT_TRUE(omp_worker);
        auto end = log.first("process_end");
        ASSERT_TRUE(end);
        EXPECT_EQ((*end)["status"], 0);
        auto model = log.first("model");
        ASSERT_TRUE(model);
        EXPECT_TRUE((*model)["ok"].get<bool>()) << model->dump();
    }
    // mpirun forks each rank: its log shows the forks.
    EXPECT_EQ(m.launcher->all("fork").size(), 2u);
    EXPECT_TRUE(fs::exists(m.launcher->file.parent_path() / "topology.xml"));
}

TEST(PreloadMpi, BindToCore) {
    REQUIRE_MPI();
    TempDir out;
    MpiRun m = run_mpi(out, "core");
    expect_mpi_run(m);
    if (HasFatalFailure()) return;
    const Cpuset allowed = own_affinity();
    const Cpuset a = cpuset_of(m.ranks[0]->start()["cpuset"]);
    const Cpuset b = cpuset_of(m.ranks[1]->start()["cpuset"]);
    EXPECT_EQ(core_count(a), 1u);
    EXPECT_EQ(core_count(b), 1u);
    if (core_count(allowed) >= 2) {
        EXPECT_FALSE(a.intersects(b)) << a.to_list_string() << " / " << b.to_list_string();
    }
    // The snapshot at MPI_Init agrees: every thread is inside its rank's core.
    auto init = m.ranks[0]->first("mpi_init");
    for (const auto& t : (*init)["threads"]) EXPECT_TRUE(cpuset_of(t["cpuset"]).is_subset_of(a)) << t.dump();
}

TEST(PreloadMpi, BindToNone) {
    REQUIRE_MPI();
    TempDir out;
    MpiRun m = run_mpi(out, "none");
    expect_mpi_run(m);
    if (HasFatalFailure()) return;
    const Cpuset allowed = own_affinity();
    for (const ProcessLog* rank : m.ranks) EXPECT_EQ(cpuset_of(rank->start()["cpuset"]), allowed);
}

TEST(PreloadMpi, StacksageRunUnderMpirun) {
    REQUIRE_MPI();
    TempDir out;
    RunOptions o;
    o.argv = mpirun_args("none");
    for (auto a : {stacksage_binary(), std::string("run"), std::string("-o"), out.path().string(),
                   std::string("--"), example("mpi_omp")})
        o.argv.push_back(a);
    o.preload = false;
    o.env = {{"OMP_NUM_THREADS", "1"}, {"STACKSAGE_PRELOAD", preload_library()}};
    o.timeout = std::chrono::seconds(120);
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    int ranks = 0;
    for (const auto& l : logs) {
        expect_well_formed(l);
        EXPECT_TRUE(l.start()["launcher"].is_null()) << "mpirun itself is not traced this way";
        if (l.first("mpi_init")) ++ranks;
    }
    EXPECT_EQ(ranks, 2) << describe(logs);
    EXPECT_TRUE(fs::exists(out.path() / "run.json"));
}

// The memory-bound mode the sampler's overhead is measured on
// (bench_sampling_run_overhead, docs/PERFORMANCE.md): each rank's OpenMP
// team first-touches its buffer in parallel, so every rank's page-fault
// samples show two threads with half of the rank's pages each.
TEST(PreloadMpi, MemoryBoundRanksFirstTouchInParallelUnderPageFaultSampling) {
    REQUIRE_MPI();
    TempDir out;
    RunOptions o;
    o.argv = {stacksage_binary(), "run", "--sample=pagefault", "-o", out.path().string(), "--"};
    for (auto& a : mpirun_args("none")) o.argv.push_back(a);
    for (auto a : {example("mpi_omp"), std::string("--rounds"), std::string("2"), std::string("--mib"), std::string("32")})
        o.argv.push_back(a);
    o.preload = false;
    // Every page fault sampled, into rings that hold them all.
    o.env = {{"OMP_NUM_THREADS", "2"},
             {"STACKSAGE_PRELOAD", preload_library()},
             {"STACKSAGE_SAMPLE_PERIOD_PAGEFAULT", "1"},
             {"STACKSAGE_SAMPLE_PAGES", "128"}};
    o.timeout = std::chrono::seconds(120);
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_NE(r.out.find("2 ranks x 2 threads"), std::string::npos) << r.out;

    namespace nf = stacksage::formats::node_file;
    constexpr std::uint64_t kPagesPerThread = (32u << 20) / 4096 / 2;
    int ranks_with_a_parallel_first_touch = 0;
    for (const auto& host : fs::directory_iterator(out.path())) {
        if (!host.is_directory()) continue;
        auto samples = stacksage::read_node_file((host.path() / "node.samples").string(), "node.samples",
                                                 nf::FileKind::samples);
        ASSERT_TRUE(samples) << host.path();
        for (const auto& stream : samples->streams) {
            std::map<std::int64_t, std::uint64_t> faults, lost;
            std::istringstream in{std::string(stream.text)};
            for (std::string line; std::getline(in, line);) {
                const auto rec = nlohmann::json::parse(line);
                if (rec["rec"] == "access" && rec["backend"] == "pagefault")
                    faults[rec["tid"].get<std::int64_t>()] += rec["count"].get<std::uint64_t>();
                if (rec["rec"] == "thread") lost[rec["tid"].get<std::int64_t>()] = rec["lost"].get<std::uint64_t>();
            }
            int touching_threads = 0;
            for (const auto& [tid, n] : faults)
                if (n + lost[tid] >= kPagesPerThread && n >= kPagesPerThread * 9 / 10) ++touching_threads;
            if (touching_threads >= 2) ++ranks_with_a_parallel_first_touch;
        }
    }
    EXPECT_EQ(ranks_with_a_parallel_first_touch, 2);
}

}  // namespace
}  // namespace stacksage::testing
