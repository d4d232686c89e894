// Run directories in the node layout (OUT/<host>/node.events, one stream per
// process image) loaded as a whole: the same model as the earlier layout,
// both layouts in one directory, and damage said by stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/run_model_schema.hpp"
#include "parsers/run_loader.hpp"
#include "tests/support/node_file_writer.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;

namespace {

bool has_note(const LoadedRun& run, LoadNote::Level level, const std::string& file, const std::string& text) {
    return std::any_of(run.notes.begin(), run.notes.end(), [&](const LoadNote& n) {
        return n.level == level && n.file == file && n.message.find(text) != std::string::npos;
    });
}

std::string describe(const LoadedRun& run) {
    std::string s;
    for (const LoadNote& n : run.notes) s += std::string(to_string(n.level)) + " " + n.file + ": " + n.message + "\n";
    return s;
}

}  // namespace

TEST(NodeLayoutLoading, BothLayoutsGiveTheSameModel) {
    TempDir streams, files;
    SyntheticCluster c;
    c.nodes = 3;
    c.ranks = 4;
    c.threads = 3;
    c.cores = 8;
    c.overloaded_nodes = {2};
    write_synthetic_cluster(streams.path(), c);
    c.node_files = false;
    write_synthetic_cluster(files.path(), c);
    for (unsigned threads : {1u, 2u}) {
        auto a = load_run(streams.str(), {threads});
        auto b = load_run(files.str(), {threads});
        ASSERT_TRUE(a) << a.error().message;
        ASSERT_TRUE(b) << b.error().message;
        EXPECT_EQ(a->stats.processes, 12u);
        EXPECT_EQ(a->stats.logs, 12u) << "one log per process image, streams or files";
        EXPECT_EQ(a->stats.streams, 12u);
        EXPECT_EQ(b->stats.streams, 0u);
        EXPECT_EQ(a->stats.flows, b->stats.flows);
        EXPECT_EQ(a->stats.events, b->stats.events);
        EXPECT_EQ(a->model.component_count(), b->model.component_count());
        EXPECT_EQ(a->model.datapath_count(), b->model.datapath_count());
        EXPECT_TRUE(a->notes.empty()) << describe(*a);
        // The processes by rank, as the files' names gave them.
        std::vector<std::int64_t> ranks;
        for (ComponentId p : a->model.components_of_type(ComponentType::Process))
            if (auto r = a->model.get_int(p, *a->model.find_key(run_keys::rank))) ranks.push_back(*r);
        std::sort(ranks.begin(), ranks.end());
        ASSERT_EQ(ranks.size(), 12u);
        EXPECT_EQ(ranks.front(), 0);
        EXPECT_EQ(ranks.back(), 11);
    }
}

TEST(NodeLayoutLoading, AKilledStreamAndADamagedFileAreSaidByName) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    run.add_host("n02", "pack:1 core:4 pu:1");
    NodeFileWriter w("n01");
    w.add_stream(event_log_text(busy_process("n01", 100, 0, 2, "0-3")), 100, 0);
    SyntheticProcess killed = busy_process("n01", 200, 1, 2, "0-3");
    killed.write_end = false;
    std::string torn = event_log_text(killed);
    torn.insert(torn.size() - 20, std::string(8, '\0'));  // a line cut as the process was killed
    torn += std::string(300, '\0');
    w.add_stream(torn, 200, 1, /*ended=*/false);
    SyntheticRun::write_file(dir.path() / "n01" / "node.events", w.bytes());
    SyntheticRun::write_file(dir.path() / "n02" / "node.events", "not a node file\n");

    auto r = load_run(dir.str());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->stats.processes, 2u);
    EXPECT_TRUE(has_note(*r, LoadNote::Level::Info, "n01/node.events#2", "torn line")) << describe(*r);
    EXPECT_TRUE(has_note(*r, LoadNote::Level::Error, "n02/node.events", "not a stacksage node file")) << describe(*r);
    EXPECT_EQ(r->stats.logs_skipped, 1u);
}

TEST(NodeLayoutLoading, AnEarlierLayoutHostAndANodeLayoutHostLoadTogether) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    run.add_host("n02", "pack:1 core:4 pu:1");
    run.add_process(busy_process("n01", 100, 0, 2, "0-3"));         // n01/rank-0000.pid-100.jsonl
    run.add_process_stream(busy_process("n02", 100, 1, 3, "0-3"));  // n02/node.events
    run.write_node_files();
    auto r = load_run(dir.str());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->stats.processes, 2u);
    EXPECT_EQ(r->stats.flows, 5u);
    EXPECT_TRUE(r->notes.empty()) << describe(*r);
}
