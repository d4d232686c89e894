// Sampling summaries and raw sample files read back, and memory samples
// placed in the model as MemoryAccess DataPaths PU -> serving component.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "parsers/hwloc_loader.hpp"
#include "parsers/memory_access_paths.hpp"
#include "parsers/sample_file_reader.hpp"
#include "parsers/sample_summary.hpp"
#include "preload/sampling/process_sampler.hpp"
#include "preload/sampling/sample_file_writer.hpp"

using namespace stacksage;
namespace fs = std::filesystem;
namespace mk = memory_access_keys;

namespace {

std::string data(const std::string& rel) { return std::string(STACKSAGE_TEST_DATA_DIR) + "/" + rel; }

struct TwoSocket {
    Model model;
    ComponentId node = kNoComponent;
    std::map<std::int64_t, ComponentId> flows;
    TwoSocket() {
        auto loaded = load_hwloc_xml(data("hwloc-xml/32em64t-2n8c2t-pci-normalio.xml"));
        EXPECT_TRUE(loaded.ok()) << loaded.error().message;
        model = std::move(loaded).value();
        node = model.components_of_type(ComponentType::Node).front();
        const ComponentId process = model.add_component(ComponentType::Process, kNoComponent, "process", "app", 4711);
        for (std::int64_t tid : {4711, 4712})
            flows[tid] = model.add_component(ComponentType::Flow, process, "thread", "", tid);
    }
    ComponentId pu(std::int64_t cpu) const { return model.find(ComponentType::Thread, cpu, node); }
    ComponentId numa(std::int64_t n) const { return model.find(ComponentType::Numa, n, node); }
    // The MemoryAccess paths out of a PU, by (level, backend).
    std::map<std::pair<std::string, std::string>, DataPathId> paths_from(ComponentId pu) const {
        std::map<std::pair<std::string, std::string>, DataPathId> out;
        const AttrKey level = *model.find_key(mk::level), backend = *model.find_key(mk::backend);
        for (DataPathId dp : model.datapaths(pu, DataPathType::MemoryAccess, Direction::Out))
            out[{std::string(*model.get_string(dp, level)), std::string(*model.get_string(dp, backend))}] = dp;
        return out;
    }
    std::int64_t attr(DataPathId dp, std::string_view key) const {
        return model.get_int(dp, *model.find_key(key)).value_or(-999);
    }
};

}  // namespace

TEST(SamplingSummary, ReadsEveryRecord) {
    auto s = read_sample_summary(data("samples/two-socket.samples.jsonl"));
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(s->pid, 4711);
    EXPECT_EQ(s->host, "n01");
    EXPECT_EQ(s->requested, "pebs,pagefault,cpuclock,papi");
    EXPECT_EQ(s->cpuclock_period_ns, 1000000u);
    ASSERT_EQ(s->backends.size(), 5u);
    ASSERT_NE(s->backend("ibs"), nullptr);
    EXPECT_FALSE(s->backend("ibs")->available);
    EXPECT_EQ(s->backend("ibs")->reason, "no ibs_op PMU in sysfs: IBS exists only on AMD processors");
    ASSERT_EQ(s->threads.size(), 2u);
    EXPECT_EQ(s->threads[1].lost, 12u);
    EXPECT_EQ(s->threads[1].migrations, 3u);
    ASSERT_EQ(s->accesses.size(), 10u);
    EXPECT_EQ(s->accesses[4].level, "remote_dram");
    EXPECT_EQ(s->accesses[4].node, 1);
    EXPECT_EQ(s->accesses[4].hops, 2);
    EXPECT_EQ(s->accesses[4].latency_histogram[9], 600u);
    ASSERT_EQ(s->ran_on.size(), 3u);
    ASSERT_EQ(s->papi.size(), 1u);
    EXPECT_EQ(s->papi[0].counters.at("PAPI_L1_DCM"), 123456u);
    EXPECT_TRUE(s->complete);
    EXPECT_FALSE(s->torn_last_line);
}

TEST(SamplingSummary, ToleratesATornLastLineAndRefusesBrokenFiles) {
    auto torn = read_sample_summary(data("samples/torn.samples.jsonl"));
    ASSERT_TRUE(torn.ok()) << torn.error().message;
    EXPECT_TRUE(torn->torn_last_line);
    EXPECT_FALSE(torn->complete);
    EXPECT_EQ(torn->ran_on.size(), 2u);

    auto corrupt = read_sample_summary(data("samples/corrupt-middle.samples.jsonl"));
    ASSERT_FALSE(corrupt.ok());
    EXPECT_NE(corrupt.error().message.find("corrupt-middle.samples.jsonl: line 9: not a JSON object"), std::string::npos)
        << corrupt.error().message;
    auto other = read_sample_summary(data("samples/not-a-summary.samples.jsonl"));
    ASSERT_FALSE(other.ok());
    EXPECT_NE(other.error().message.find("not a stacksage sampling summary"), std::string::npos);
    auto missing = read_sample_summary(data("samples/missing.samples.jsonl"));
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("cannot be read"), std::string::npos);
}

TEST(SamplingPaths, EachLevelGoesToItsComponent) {
    TwoSocket t;
    auto s = read_sample_summary(data("samples/two-socket.samples.jsonl"));
    ASSERT_TRUE(s.ok());
    const MemoryPathStats stats =
        add_sample_summary(t.model, t.node, *s, [&](std::int64_t tid) { return t.flows.count(tid) ? t.flows[tid] : kNoComponent; });
    EXPECT_TRUE(t.model.check_consistency().empty());

    const ComponentId pu0 = t.pu(0);
    ASSERT_NE(pu0, kNoComponent);
    auto paths = t.paths_from(pu0);
    // L1 loads and stores share one path to the PU's L1 data cache.
    const DataPathId l1 = paths.at({"L1", "pebs"});
    const ComponentId l1_cache = t.model.target(l1);
    EXPECT_EQ(t.model.type(l1_cache), ComponentType::Cache);
    EXPECT_EQ(t.model.get_int(l1_cache, keys::cache_level), 1);
    EXPECT_TRUE(t.model.is_ancestor(l1_cache, pu0));
    EXPECT_EQ(t.model.get_int(l1, keys::count), 600);
    EXPECT_EQ(t.attr(l1, mk::loads), 500);
    EXPECT_EQ(t.attr(l1, mk::stores), 100);
    EXPECT_DOUBLE_EQ(t.model.latency(l1), 2500.0 / 600.0);
    // L3: the package's shared cache above PU 0.
    const ComponentId l3 = t.model.target(paths.at({"L3", "pebs"}));
    EXPECT_EQ(t.model.get_int(l3, keys::cache_level), 3);
    EXPECT_TRUE(t.model.is_ancestor(l3, pu0));
    EXPECT_EQ(*t.model.get_string(paths.at({"L3", "pebs"}), *t.model.find_key(mk::latency_histogram)),
              "0,0,0,0,0,0,50,150,0,0,0,0,0,0,0,0");
    // DRAM: the NUMA node holding the data; node 1 is remote to PU 0.
    const DataPathId local = paths.at({"local_dram", "pebs"});
    EXPECT_EQ(t.model.target(local), t.numa(0));
    EXPECT_EQ(t.attr(local, mk::remote), 0);
    const DataPathId remote = paths.at({"remote_dram", "pebs"});
    EXPECT_EQ(t.model.target(remote), t.numa(1));
    EXPECT_EQ(t.attr(remote, mk::remote), 1);
    EXPECT_EQ(t.attr(remote, mk::hops), 2);
    EXPECT_EQ(t.attr(remote, mk::numa_node), 1);
    EXPECT_EQ(t.attr(remote, mk::tid), 4711);
    EXPECT_EQ(t.attr(remote, mk::pid), 4711);
    EXPECT_EQ(t.model.target(paths.at({"io", "pebs"})), t.node);
    // First touch: page faults land on the node that got the page.
    EXPECT_EQ(t.model.target(paths.at({"unknown", "pagefault"})), t.numa(0));

    // Thread 4712 faulted from PU 9 onto node 0: remote first touch.
    auto paths9 = t.paths_from(t.pu(9));
    const DataPathId pf9 = paths9.at({"unknown", "pagefault"});
    EXPECT_EQ(t.model.target(pf9), t.numa(0));
    EXPECT_EQ(t.attr(pf9, mk::remote), 1);
    EXPECT_EQ(t.attr(t.paths_from(t.pu(8)).at({"unknown", "pagefault"}), mk::remote), 0);

    // CPU 99 does not exist on this machine.
    EXPECT_EQ(stats.samples_unplaced, 7u);
    ASSERT_EQ(stats.notes.size(), 1u);
    EXPECT_NE(stats.notes[0].find("7 memory samples name CPUs the node's topology does not have"), std::string::npos);

    // cpu-clock: RanOn Flow -> PU with counts and CPU time.
    EXPECT_EQ(stats.ran_on_paths, 3u);
    auto ran = t.model.datapaths(t.flows[4712], DataPathType::RanOn, Direction::Out);
    std::map<std::int64_t, std::int64_t> counts;
    for (DataPathId dp : ran) counts[t.model.os_index(t.model.target(dp))] = *t.model.get_int(dp, keys::count);
    EXPECT_EQ(counts, (std::map<std::int64_t, std::int64_t>{{8, 300}, {9, 280}}));
    EXPECT_EQ(t.model.get_int(t.flows[4712], *t.model.find_key(mk::migrations)), 3);

    // PAPI: misses on the PU's L1 and L3 paths.
    EXPECT_EQ(stats.papi_paths, 2u);
    const DataPathId papi_l1 = t.paths_from(pu0).at({"L1", "papi"});
    EXPECT_EQ(t.model.target(papi_l1), l1_cache);
    EXPECT_EQ(t.attr(papi_l1, mk::misses), 123456);
    EXPECT_EQ(t.model.target(t.paths_from(pu0).at({"L3", "papi"})), l3);
}

TEST(SamplingPaths, FlatTopologiesFallBackToWhatExists) {
    // A machine model with no caches and one NUMA node (what a VM may show).
    Model m;
    const ComponentId top = m.add_component(ComponentType::Topology, kNoComponent);
    const ComponentId node = m.add_component(ComponentType::Node, top);
    const ComponentId numa = m.add_component(ComponentType::Numa, node, "DRAM", "", 0);
    m.set_attr(numa, keys::cpuset, Cpuset::range(0, 1));
    const ComponentId core = m.add_component(ComponentType::Core, node, "", "", 0);
    const ComponentId pu = m.add_component(ComponentType::Thread, core, "", "", 0);
    EXPECT_EQ(memory_access_target(m, node, pu, "L1", -1), numa);
    EXPECT_EQ(memory_access_target(m, node, pu, "local_dram", -1), numa) << "unknown node: the PU's own";
    EXPECT_EQ(memory_access_target(m, node, pu, "remote_dram", -1), node) << "unknown remote node: the machine";
    EXPECT_EQ(memory_access_target(m, node, pu, "remote_dram", 0), numa);
    EXPECT_EQ(memory_access_target(m, node, pu, "uncached", 0), node);
}

TEST(SamplingRawFile, WritesAndReadsBlocks) {
    using namespace sampling;
    const fs::path path = fs::temp_directory_path() / ("stacksage-raw-" + std::to_string(::getpid()) + ".bin");
    fs::remove(path);
    {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
        ASSERT_GE(fd, 0);
        // Room for 3 records per block: 10 records make 4 blocks.
        alignas(8) unsigned char buffer[sizeof(SampleBlockHeader) + 3 * sizeof(SampleFileRecord)];
        SampleFileHeader h{};
        std::memcpy(h.magic, kSampleFileMagic, 8);
        h.version = kSampleFileVersion;
        h.header_bytes = sizeof h;
        h.record_bytes = sizeof(SampleFileRecord);
        h.pid = 42;
        std::snprintf(h.host, sizeof h.host, "n01");
        SampleFileWriter w;
        ASSERT_TRUE(w.open(fd, buffer, sizeof buffer, h));
        for (std::uint32_t i = 0; i < 10; ++i) {
            SampleFileRecord r{};
            r.time = i;
            r.addr = 0x1000 * i;
            r.tid = 7;
            r.node = static_cast<std::int16_t>(i % 2);
            r.served_by = static_cast<std::uint8_t>(ServedBy::LocalDram);
            w.append(r);
        }
        ASSERT_TRUE(w.close());
        EXPECT_EQ(w.records_written(), 10u);
    }
    auto f = read_raw_sample_file(path.string());
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f->header.pid, 42u);
    EXPECT_STREQ(f->header.host, "n01");
    EXPECT_EQ(f->blocks, 4u);
    ASSERT_EQ(f->records.size(), 10u);
    for (std::uint32_t i = 0; i < 10; ++i) EXPECT_EQ(f->records[i].addr, 0x1000u * i);
    EXPECT_FALSE(f->partial_block);

    // Killed in the middle of the last block: the whole records are kept.
    fs::resize_file(path, fs::file_size(path) - sizeof(SampleFileRecord) - 8);
    auto cut = read_raw_sample_file(path.string());
    ASSERT_TRUE(cut.ok()) << cut.error().message;
    EXPECT_TRUE(cut->partial_block);
    EXPECT_EQ(cut->records.size(), 9u) << "three whole blocks; the last one lost its only record";

    // Not ours, and newer than us.
    {
        std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
        io.seekp(8);
        const std::uint32_t v = 99;
        io.write(reinterpret_cast<const char*>(&v), 4);
    }
    auto newer = read_raw_sample_file(path.string());
    ASSERT_FALSE(newer.ok());
    EXPECT_NE(newer.error().message.find("version 99 is newer"), std::string::npos) << newer.error().message;
    {
        std::ofstream out(path, std::ios::binary);
        out << "definitely not a sample file, but long enough to hold a header of sixty-four bytes";
    }
    auto bad = read_raw_sample_file(path.string());
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("bad magic"), std::string::npos);
    fs::remove(path);
}

TEST(SamplingPaths, LiveSummaryOfThisMachineLandsOnItsNumaNode) {
    // End to end, in process: sample page faults, write the summary, read
    // it back, place it on this machine's topology.
    const fs::path dir = fs::temp_directory_path() / ("stacksage-live-paths-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    sampling::sampler_reset_for_tests();
    sampling::SamplerConfig config;
    config.options.selection.backends = sampling::backend_bit(sampling::Backend::PageFault);
    config.options.pagefault_period = 1;
    config.pid = ::getpid();
    char message[1024];
    if (!sampling::sampler_start(config, message, sizeof message)) GTEST_SKIP() << message;
    constexpr std::size_t kPages = 256;
    char* buf = static_cast<char*>(::mmap(nullptr, kPages * 4096, PROT_READ | PROT_WRITE,
                                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ::madvise(buf, kPages * 4096, MADV_NOHUGEPAGE);
    std::int64_t tid = 0;
    std::thread th([&] {
        sampling::sampler_thread_begin();
        tid = ::gettid();
        for (std::size_t p = 0; p < kPages; ++p) buf[p * 4096] = 1;
        sampling::sampler_thread_end();
    });
    th.join();
    char error[512];
    ASSERT_TRUE(sampling::sampler_finish(dir.c_str(), "pid-1", error, sizeof error)) << error;
    sampling::sampler_reset_for_tests();
    auto summary = read_sample_summary((dir / "pid-1.samples.jsonl").string());
    ASSERT_TRUE(summary.ok()) << summary.error().message;
    EXPECT_TRUE(summary->complete);
    auto machine = discover_this_machine();
    ASSERT_TRUE(machine.ok()) << machine.error().message;
    Model m = std::move(machine).value();
    const ComponentId node = m.components_of_type(ComponentType::Node).front();
    add_sample_summary(m, node, *summary, [](std::int64_t) { return kNoComponent; });
    std::int64_t on_numa = 0;
    m.for_each_datapath([&](DataPathId dp) {
        if (m.type(dp) != DataPathType::MemoryAccess) return;
        if (m.get_int(dp, *m.find_key(mk::tid)) != tid) return;
        EXPECT_EQ(m.type(m.source(dp)), ComponentType::Thread);
        if (m.type(m.target(dp)) == ComponentType::Numa) on_numa += *m.get_int(dp, keys::count);
    });
    EXPECT_GE(on_numa, static_cast<std::int64_t>(kPages));
    ::munmap(buf, kPages * 4096);
    fs::remove_all(dir);
}
