// Snapshots: real topologies mapped in place answer every query as the
// original; damaged and foreign images are refused; a node discovers once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/model_copy.hpp"
#include "core/model_json.hpp"
#include "core/snapshot.hpp"
#include "parsers/hwloc_loader.hpp"
#include "parsers/node_topology_cache.hpp"

using namespace stacksage;
namespace fs = std::filesystem;

namespace {

const fs::path kData = STACKSAGE_TEST_DATA_DIR;

fs::path temp_dir(const std::string& name) {
    fs::path p = fs::path(testing::TempDir()) / ("stacksage-snapshot-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
}

std::vector<fs::path> all_topologies() {
    std::vector<fs::path> files;
    for (auto& e : fs::directory_iterator(kData / "hwloc-xml"))
        if (e.path().extension() == ".xml") files.push_back(e.path());
    for (const char* cluster : {"hwloc-netloc-plafrim", "hwloc-netloc-plafrim2", "hwloc-netloc-avakas"})
        for (auto& e : fs::directory_iterator(kData / "network" / cluster / "hwloc"))
            if (e.path().extension() == ".xml" && e.path().string().find(".diff.xml") == std::string::npos)
                files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

// Every query of the model API, compared between two models.
void expect_same_answers(const Model& a, const Model& b) {
    ASSERT_EQ(a.component_count(), b.component_count());
    ASSERT_EQ(a.component_capacity(), b.component_capacity());
    ASSERT_EQ(a.datapath_count(), b.datapath_count());
    for (int t = 0; t < kComponentTypeCount; ++t) {
        auto type = static_cast<ComponentType>(t);
        EXPECT_EQ(a.components_of_type(type), b.components_of_type(type));
    }
    a.for_each_component([&](ComponentId id) {
        ASSERT_TRUE(b.is_alive(id));
        EXPECT_EQ(a.type(id), b.type(id));
        EXPECT_EQ(a.kind(id), b.kind(id));
        EXPECT_EQ(a.name(id), b.name(id));
        EXPECT_EQ(a.os_index(id), b.os_index(id));
        EXPECT_EQ(a.parent(id), b.parent(id));
        EXPECT_EQ(a.children(id), b.children(id));
        EXPECT_EQ(a.depth(id), b.depth(id));
        EXPECT_EQ(a.cpuset(id), b.cpuset(id));
        std::vector<std::pair<std::string, AttributeValue>> attrs_a, attrs_b;
        a.for_each_attr(id, [&](AttrKey k, const AttributeValue& v) { attrs_a.emplace_back(a.key_name(k), v); });
        b.for_each_attr(id, [&](AttrKey k, const AttributeValue& v) { attrs_b.emplace_back(b.key_name(k), v); });
        EXPECT_EQ(attrs_a, attrs_b);
        EXPECT_EQ(a.all_datapaths(id, Direction::Out), b.all_datapaths(id, Direction::Out));
        EXPECT_EQ(a.all_datapaths(id, Direction::In), b.all_datapaths(id, Direction::In));
    });
    a.for_each_datapath([&](DataPathId p) {
        EXPECT_EQ(a.source(p), b.source(p));
        EXPECT_EQ(a.target(p), b.target(p));
        EXPECT_EQ(a.datapath_type_name(a.type(p)), b.datapath_type_name(b.type(p)));
        EXPECT_EQ(std::isnan(a.bandwidth(p)), std::isnan(b.bandwidth(p)));
    });
    for (auto root : a.roots()) {
        auto pu = a.descendants_of_type(root, ComponentType::Thread);
        if (!pu.empty()) {
            EXPECT_EQ(b.find(ComponentType::Thread, a.os_index(pu.back())), pu.back());
        }
    }
    EXPECT_EQ(model_to_json(a).dump(), model_to_json(b).dump());
}

}  // namespace

TEST(Snapshot, EveryRealTopologyMapsAndAnswersLikeTheOriginal) {
    auto dir = temp_dir("all");
    int checked = 0;
    for (const auto& file : all_topologies()) {
        SCOPED_TRACE(file.string());
        for (bool io : {false, true}) {
            HwlocLoadOptions options;
            options.include_io = io;
            auto original = load_hwloc_xml(file.string(), options);
            ASSERT_TRUE(original) << original.error().message;
            auto path = (dir / (file.filename().string() + (io ? ".io" : "") + ".snap")).string();
            ASSERT_TRUE(write_snapshot(*original, path));
            auto mapped = open_snapshot(path);
            ASSERT_TRUE(mapped) << mapped.error().message;
            expect_same_answers(*original, *mapped);
            ++checked;
        }
    }
    EXPECT_GT(checked, 500);
    fs::remove_all(dir);
}

TEST(Snapshot, APrivateCopyOnChangeLeavesTheFileAndOtherUsersAlone) {
    auto dir = temp_dir("cow");
    auto original = load_hwloc_xml((kData / "hwloc-xml/emmett.xml").string());
    ASSERT_TRUE(original);
    auto path = (dir / "emmett.snap").string();
    ASSERT_TRUE(write_snapshot(*original, path));
    auto mapped = open_snapshot(path);
    ASSERT_TRUE(mapped);
    Model other_user = *mapped;  // shares the mapping
    Model& mine = *mapped;
    auto node = mine.components_of_type(ComponentType::Node).front();
    auto flow = mine.add_component(ComponentType::Flow, kNoComponent, "", "rank 0 main");
    mine.add_datapath(flow, mine.find(ComponentType::Thread, 0), DataPathType::MayRunOn);
    mine.set_name(node, "changed");
    mine.set_attr(node, mine.key("new_key"), std::int64_t{7});
    EXPECT_EQ(mine.name(node), "changed");
    EXPECT_EQ(*mine.get_int(node, *mine.find_key("new_key")), 7);
    EXPECT_TRUE(mine.check_consistency().empty());
    // The other user and a fresh mapping still see the original.
    EXPECT_EQ(other_user.name(node), "emmett");
    EXPECT_FALSE(other_user.find_key("new_key"));
    auto fresh = open_snapshot(path);
    ASSERT_TRUE(fresh);
    expect_same_answers(*original, *fresh);
    fs::remove_all(dir);
}

TEST(Snapshot, InMemoryImagesRoundTrip) {
    auto original = load_hwloc_xml((kData / "hwloc-xml/AMD-17h-Zen-2xEpyc-7451.xml").string());
    ASSERT_TRUE(original);
    std::string bytes = snapshot_bytes(*original);
    auto copy = read_snapshot_bytes(bytes.data(), bytes.size(), "buffer");
    ASSERT_TRUE(copy) << copy.error().message;
    bytes.assign(bytes.size(), '\0');  // the copy owns its data
    expect_same_answers(*original, *copy);
}

TEST(Snapshot, SubtreeExportKeepsChosenAttributesAndInnerDataPaths) {
    auto original = load_hwloc_xml((kData / "hwloc-xml/Intel-SapphireRapids-2xXeonMax9460.xml").string());
    ASSERT_TRUE(original);
    auto packages = original->components_of_type(ComponentType::Chip);
    ASSERT_EQ(packages.size(), 2u);
    auto pu0 = original->find(ComponentType::Thread, 0);
    auto pu1 = original->find(ComponentType::Thread, 1);
    auto far = original->find(ComponentType::Thread, 159);
    original->add_datapath(pu0, pu1, original->datapath_type("smt-sibling"));
    original->add_datapath(pu0, far, DataPathType::Logical);  // leaves the package: not exported

    CopyOptions options;
    options.attribute_names = std::vector<std::string>{"cpuset", "cache_level"};
    Model sub = extract_subtree(*original, original->ancestor_of_type(pu0, ComponentType::Chip), options);
    EXPECT_EQ(sub.count_of_type(ComponentType::Thread), 80u);
    EXPECT_EQ(sub.count_of_type(ComponentType::Core), 40u);
    EXPECT_EQ(sub.roots().size(), 1u);
    EXPECT_EQ(sub.datapath_count(), 1u);
    auto sub_pu0 = sub.find(ComponentType::Thread, 0);
    ASSERT_NE(sub_pu0, kNoComponent);
    EXPECT_EQ(sub.datapaths(sub_pu0, *sub.find_datapath_type("smt-sibling"), Direction::Out).size(), 1u);
    EXPECT_EQ(sub.cpuset(sub_pu0).to_list_string(), "0");
    EXPECT_FALSE(sub.has_attr(sub_pu0, keys::logical_index));
    auto caches = sub.components_of_type(ComponentType::Cache);
    ASSERT_FALSE(caches.empty());
    EXPECT_TRUE(sub.get_int(caches.front(), keys::cache_level));
    // The exported subtree survives a snapshot too.
    std::string bytes = snapshot_bytes(sub);
    auto back = read_snapshot_bytes(bytes.data(), bytes.size(), "subtree");
    ASSERT_TRUE(back);
    expect_same_answers(sub, *back);
}

TEST(Snapshot, ImportsASubtreeUnderAChosenParent) {
    auto knl = load_hwloc_xml((kData / "hwloc-xml/64intel64-fakeKNL-SNC4-hybrid.xml").string());
    auto emmett = load_hwloc_xml((kData / "hwloc-xml/emmett.xml").string());
    ASSERT_TRUE(knl && emmett);
    Model merged;
    auto run = merged.add_component(ComponentType::Topology, kNoComponent, "", "run");
    auto a = import_subtree(merged, run, *knl, knl->components_of_type(ComponentType::Node).front());
    auto b = import_subtree(merged, run, *emmett, emmett->components_of_type(ComponentType::Node).front());
    ASSERT_NE(a, kNoComponent);
    ASSERT_NE(b, kNoComponent);
    EXPECT_EQ(merged.children(run), (std::vector<ComponentId>{a, b}));
    EXPECT_EQ(merged.count_of_type(ComponentType::Thread),
              knl->count_of_type(ComponentType::Thread) + emmett->count_of_type(ComponentType::Thread));
    // The KNL memory attributes (DataPaths) came along.
    EXPECT_EQ(merged.datapath_count(), knl->datapath_count() + emmett->datapath_count());
    EXPECT_EQ(merged.name(b), "emmett");
    EXPECT_TRUE(merged.check_consistency().empty());
    EXPECT_EQ(import_subtree(merged, ComponentId{999999}, *knl, ComponentId{0}), kNoComponent);
}

TEST(Snapshot, DamagedAndForeignImagesAreRefusedWithTheirReason) {
    auto dir = temp_dir("bad");
    auto original = load_hwloc_xml((kData / "hwloc-xml/emmett.xml").string());
    ASSERT_TRUE(original);
    const std::string good = snapshot_bytes(*original);
    auto write = [&](const std::string& name, const std::string& bytes) {
        auto p = (dir / name).string();
        std::ofstream(p, std::ios::binary) << bytes;
        return p;
    };
    auto expect_refused = [&](const std::string& name, const std::string& bytes, const std::string& why) {
        auto path = write(name, bytes);
        auto r = open_snapshot(path);
        ASSERT_FALSE(r) << name;
        EXPECT_NE(r.error().message.find(path), std::string::npos) << r.error().message;
        EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
    };
    expect_refused("empty", "", "empty");
    expect_refused("text", "<?xml version=\"1.0\"?><topology/>", "wrong magic");
    expect_refused("truncated", good.substr(0, good.size() / 2), "truncated");
    expect_refused("header-only", good.substr(0, 40), "truncated");
    std::string flipped = good;
    flipped[good.size() - 100] ^= 0x10;
    expect_refused("flipped", flipped, "checksum");
    std::string version = good;
    version[8] = 99;  // version field follows the 8-byte magic
    expect_refused("version", version, "version 99");
    std::string swapped = good;
    std::uint32_t mark;
    std::memcpy(&mark, swapped.data() + 12, 4);
    mark = __builtin_bswap32(mark);
    std::memcpy(swapped.data() + 12, &mark, 4);
    expect_refused("byteorder", swapped, "byte order");
    expect_refused("longer", good + "extra", "header says");
    // A component whose "alive" byte is 2, with a valid checksum (found by
    // fuzzing: read as a bool it is undefined behaviour, neither true nor false).
    std::string flag = good;
    std::uint64_t components_offset;  // section 0 (components), after the 96-byte header
    std::memcpy(&components_offset, flag.data() + 96 + 8, 8);
    ASSERT_LT(components_offset + 1, flag.size());
    flag[components_offset + 1] = 2;  // byte 1 of a component record: alive
    detail::fix_snapshot_checksum(flag.data(), flag.size());
    expect_refused("flag", flag, "component 0: bad flag");

    auto missing = open_snapshot((dir / "missing.snap").string());
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("missing.snap"), std::string::npos);
    auto directory = open_snapshot(dir.string());
    ASSERT_FALSE(directory);
    EXPECT_NE(directory.error().message.find("not a regular file"), std::string::npos);
    fs::remove_all(dir);
}

TEST(NodeTopologyCache, DiscoversOnceThenMapsAndRediscoversStaleOrCorruptSnapshots) {
    auto dir = temp_dir("cache");
    auto path = (dir / "topology.snap").string();
    int discoveries = 0;
    // A real machine's topology, presented as this host's (a snapshot of
    // another host is not used).
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    HwlocLoadOptions as_this_host;
    as_this_host.hostname = host;
    auto discover = [&]() -> Result<Model> {
        ++discoveries;
        return load_hwloc_xml((kData / "hwloc-xml/emmett.xml").string(), as_this_host);
    };
    auto first = load_or_publish_node_topology(path, discover);
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_TRUE(first->discovered);
    EXPECT_EQ(first->note, "");
    auto second = load_or_publish_node_topology(path, discover);
    ASSERT_TRUE(second);
    EXPECT_FALSE(second->discovered);
    EXPECT_EQ(discoveries, 1);
    EXPECT_EQ(second->model.count_of_type(ComponentType::Thread), 8u);

    // Corrupt: rediscovered, and the note says why.
    { std::ofstream(path, std::ios::binary | std::ios::trunc) << "garbage"; }
    auto third = load_or_publish_node_topology(path, discover);
    ASSERT_TRUE(third);
    EXPECT_TRUE(third->discovered);
    EXPECT_NE(third->note.find("wrong magic"), std::string::npos) << third->note;

    // Another boot: stale, rediscovered.
    Model stale = third->model;
    stale.set_attr(stale.roots().front(), stale.key(kBootIdKey), std::string_view("another-boot"));
    ASSERT_TRUE(write_snapshot(stale, path));
    auto fourth = load_or_publish_node_topology(path, discover);
    ASSERT_TRUE(fourth);
    EXPECT_TRUE(fourth->discovered);
    EXPECT_NE(fourth->note.find("another boot"), std::string::npos) << fourth->note;
    EXPECT_EQ(discoveries, 3);
    fs::remove_all(dir);
}

TEST(NodeTopologyCache, SixtyFourProcessesStartingAtOnceDiscoverOnce) {
    auto dir = temp_dir("storm");
    auto path = (dir / "topology.snap").string();
    auto log = (dir / "discoveries.log").string();
    constexpr int kProcesses = 64;
    // A pipe as a starting gate so that all children race for real.
    int gate[2];
    ASSERT_EQ(pipe(gate), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            close(gate[1]);
            char c;
            (void)!read(gate[0], &c, 1);  // returns 0 when the parent closes its end
            auto topo = load_or_publish_node_topology(path, [&]() -> Result<Model> {
                int fd = open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
                (void)!write(fd, "d\n", 2);
                close(fd);
                return discover_this_machine();
            });
            bool ok = topo && topo->model.count_of_type(ComponentType::Thread) > 0 &&
                      topo->model.check_consistency().empty();
            _exit(ok ? 0 : 1);
        }
        children.push_back(pid);
    }
    close(gate[0]);
    close(gate[1]);  // open the gate
    int failures = 0;
    for (pid_t pid : children) {
        int status = 0;
        waitpid(pid, &status, 0);
        failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    EXPECT_EQ(failures, 0);
    std::ifstream in(log);
    std::string all((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(all, "d\n") << "every process must map the one published snapshot";
    // No temporary file is left behind; the snapshot is whole.
    for (auto& e : fs::directory_iterator(dir))
        EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
    EXPECT_TRUE(open_snapshot(path));
    fs::remove_all(dir);
}

namespace {

// Runs load_or_publish_node_topology(path) in a child process, so that a
// call that blocks cannot block the test: the child is killed after
// `limit`. Returns "exit", "note", "seconds" in one text, or "hung".
std::string load_in_child(const std::string& path, std::chrono::seconds limit) {
    int out[2];
    if (pipe(out) != 0) return "pipe failed";
    const pid_t pid = fork();
    if (pid == 0) {
        close(out[0]);
        const auto start = std::chrono::steady_clock::now();
        auto topo = load_or_publish_node_topology(path, [] { return discover_this_machine(); });
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::string text = std::string(topo ? "ok" : "failed: " + topo.error().message) + "\nnote: " +
                           (topo ? topo->note : "") + "\nseconds: " + std::to_string(seconds) + "\n";
        (void)!write(out[1], text.data(), text.size());
        _exit(0);
    }
    close(out[1]);
    std::string text;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        struct pollfd p{out[0], POLLIN, 0};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
            kill(pid, SIGKILL);
            text = "hung";
            break;
        }
        char buf[4096];
        const ssize_t n = read(out[0], buf, sizeof buf);
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    close(out[0]);
    waitpid(pid, nullptr, 0);
    return text;
}

}  // namespace

// A FIFO at the snapshot's name: opening it for reading waited for a writer
// forever. Now it is refused as not a regular file, and the topology found
// again (and published over it).
TEST(NodeTopologyCache, FifoAtTheSnapshotIsRefusedWithoutBlocking) {
    auto dir = temp_dir("fifo");
    auto path = (dir / "topology.snap").string();
    ASSERT_EQ(mkfifo(path.c_str(), 0644), 0);
    const std::string result = load_in_child(path, std::chrono::seconds(20));
    ASSERT_NE(result, "hung");
    EXPECT_EQ(result.rfind("ok\n", 0), 0u) << result;
    EXPECT_NE(result.find("not a regular file"), std::string::npos) << result;
    EXPECT_TRUE(open_snapshot(path));
    fs::remove_all(dir);
}

// Another process holds the lock and never lets go: flock waited forever.
// Now the lock is tried for kSnapshotLockWait at most; the caller then uses
// its own discovery, does not publish, and the note says why.
TEST(NodeTopologyCache, LockHeldElsewhereIsWaitedForABoundedTime) {
    auto dir = temp_dir("held");
    auto path = (dir / "topology.snap").string();
    const int held = open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(held, 0);
    ASSERT_EQ(flock(held, LOCK_EX), 0);
    const std::string result = load_in_child(path, std::chrono::seconds(20));
    close(held);
    ASSERT_NE(result, "hung");
    EXPECT_EQ(result.rfind("ok\n", 0), 0u) << result;
    EXPECT_NE(result.find("not published: " + path + ".lock is held by another process"), std::string::npos)
        << result;
    const double seconds = std::stod(result.substr(result.find("seconds: ") + 9));
    const double bound = std::chrono::duration<double>(kSnapshotLockWait).count();
    EXPECT_GE(seconds, bound);
    EXPECT_LT(seconds, bound + 5.0);
    EXPECT_FALSE(fs::exists(path));
    fs::remove_all(dir);
}

// A FIFO at the lock's name: never opened for blocking, never waited for.
TEST(NodeTopologyCache, FifoAtTheLockIsRefused) {
    auto dir = temp_dir("fifo-lock");
    auto path = (dir / "topology.snap").string();
    ASSERT_EQ(mkfifo((path + ".lock").c_str(), 0644), 0);
    const std::string result = load_in_child(path, std::chrono::seconds(20));
    ASSERT_NE(result, "hung");
    EXPECT_EQ(result.rfind("ok\n", 0), 0u) << result;
    EXPECT_NE(result.find("not a regular file"), std::string::npos) << result;
    EXPECT_FALSE(fs::exists(path));
    fs::remove_all(dir);
}
