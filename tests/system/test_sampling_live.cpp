// The software backends, live: page-fault samples with data addresses and
// cpu-clock samples with CPU numbers, opened per thread from inside the
// thread as the preload does. These need perf_event_open for the calling
// process (perf_event_paranoid <= 2, which the development machines have);
// elsewhere they are skipped with the plan's reason.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/formats/sample_file_format.hpp"
#include "preload/sampling/process_sampler.hpp"
#include "preload/sampling/summary_writer.hpp"

using namespace stacksage::sampling;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kPage = 4096;

fs::path temp_dir(const std::string& name) {
    fs::path p = fs::temp_directory_path() / ("stacksage-sampling-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
}

// Pages that fault one by one (no transparent huge pages).
char* map_pages(std::size_t pages) {
    void* p = ::mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    ::madvise(p, pages * kPage, MADV_NOHUGEPAGE);
    return static_cast<char*>(p);
}

struct Sampler {
    SamplerConfig config;
    char message[2048] = {};
    bool started = false;
    explicit Sampler(std::uint32_t backends, const std::string& raw_path = "", bool drain_thread = false) {
        sampler_reset_for_tests();
        config.options.selection.backends = backends;
        config.options.pagefault_period = 1;  // every fault: the tests count pages
        // Samples carry their call chain and the top of the stack (code
        // attribution): a test's 512 of them, drained at its end, need a
        // ring larger than the default 16 pages.
        config.options.ring_data_pages = 64;
        config.pid = ::getpid();
        config.host = "testhost";
        if (!raw_path.empty()) {
            config.options.raw_file = true;
            config.raw_file_path = raw_path.c_str();
            raw_ = raw_path;
            config.raw_file_path = raw_.c_str();
        }
        if (drain_thread) config.start_thread = &pthread_create;
        started = sampler_start(config, message, sizeof message);
    }
    ~Sampler() { sampler_reset_for_tests(); }
    std::string raw_;
};

#define REQUIRE_SAMPLER(s)                                              \
    do {                                                                \
        if (!(s).started) GTEST_SKIP() << "no sampling here: " << (s).message; \
    } while (0)

// Runs fn in a new thread that is sampled like the preload samples threads.
template <class Fn> int run_sampled_thread(Fn fn) {
    std::atomic<int> tid{0};
    std::thread t([&] {
        sampler_thread_begin();
        tid = static_cast<int>(::gettid());
        fn();
        sampler_thread_end();
    });
    t.join();
    return tid;
}

const ThreadSlot* slot_of(int tid) {
    for (std::size_t i = 0; i < sampler_slot_count(); ++i)
        if (const ThreadSlot* s = sampler_slot(i); s && s->tid == tid) return s;
    return nullptr;
}

std::vector<SampleFileRecord> read_raw(const std::string& path) {
    std::vector<SampleFileRecord> out;
    std::ifstream in(path, std::ios::binary);
    SampleFileHeader h{};
    in.read(reinterpret_cast<char*>(&h), sizeof h);
    if (!in || std::memcmp(h.magic, kSampleFileMagic, 8) != 0) return out;
    SampleBlockHeader b{};
    while (in.read(reinterpret_cast<char*>(&b), sizeof b)) {
        if (b.magic != kSampleBlockMagic) break;
        std::vector<SampleFileRecord> block(b.record_count);
        in.read(reinterpret_cast<char*>(block.data()), static_cast<std::streamsize>(block.size() * sizeof(SampleFileRecord)));
        if (!in) break;
        out.insert(out.end(), block.begin(), block.end());
    }
    return out;
}

bool pin_to(unsigned cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// Spins until the calling thread has used d of CPU time (not wall time:
// the machine may be busy with other work). Returns the CPU time used.
std::chrono::milliseconds spin_for(std::chrono::milliseconds d) {
    const auto cpu_ms = [] {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    };
    const long start = cpu_ms();
    volatile std::uint64_t x = 0;
    while (cpu_ms() - start < d.count())
        for (int i = 0; i < 10000; ++i) x = x + static_cast<std::uint64_t>(i);
    return std::chrono::milliseconds(cpu_ms() - start);
}

}  // namespace

TEST(SamplingLive, FirstTouchPageFaultsLandOnTheToucherAndItsAddresses) {
    const fs::path dir = temp_dir("firsttouch");
    const std::string raw = (dir / "p.samples.bin").string();
    Sampler s(backend_bit(Backend::PageFault), raw);
    REQUIRE_SAMPLER(s);
    constexpr std::size_t kPages = 512;
    char* shared = map_pages(kPages);  // first-touched by one thread, then read by others
    char* own = map_pages(kPages);     // first-touched by the second reader
    ASSERT_NE(shared, nullptr);
    ASSERT_NE(own, nullptr);

    const int toucher = run_sampled_thread([&] {
        for (std::size_t p = 0; p < kPages; ++p) shared[p * kPage] = static_cast<char>(p);
    });
    std::atomic<std::uint64_t> sum{0};
    const int reader = run_sampled_thread([&] {
        std::uint64_t local = 0;
        for (std::size_t p = 0; p < kPages; ++p) local += static_cast<unsigned char>(shared[p * kPage]);
        sum += local;
    });
    const int reader_toucher = run_sampled_thread([&] {
        std::uint64_t local = 0;
        for (std::size_t p = 0; p < kPages; ++p) local += static_cast<unsigned char>(shared[p * kPage]);
        for (std::size_t p = 0; p < kPages; ++p) own[p * kPage] = 1;
        sum += local;
    });
    EXPECT_GT(sum.load(), 0u);
    char error[512];
    ASSERT_TRUE(sampler_finish(dir.c_str(), "p", error, sizeof error)) << error;

    const auto in = [](char* base, std::uint64_t a) {
        return a >= reinterpret_cast<std::uint64_t>(base) && a < reinterpret_cast<std::uint64_t>(base) + kPages * kPage;
    };
    std::map<int, std::set<std::uint64_t>> shared_pages_by_tid, own_pages_by_tid;
    for (const SampleFileRecord& r : read_raw(raw)) {
        EXPECT_EQ(r.backend, static_cast<std::uint8_t>(Backend::PageFault));
        if (in(shared, r.addr)) shared_pages_by_tid[static_cast<int>(r.tid)].insert(r.addr / kPage);
        if (in(own, r.addr)) own_pages_by_tid[static_cast<int>(r.tid)].insert(r.addr / kPage);
        if (in(shared, r.addr) || in(own, r.addr)) {
            EXPECT_GE(r.node, 0) << "a touched page has a NUMA node";
        }
    }
    // Every page of the shared buffer faulted in the thread that touched it
    // first, and the readers caused no fault there.
    EXPECT_EQ(shared_pages_by_tid[toucher].size(), kPages);
    EXPECT_EQ(shared_pages_by_tid.count(reader), 0u);
    EXPECT_EQ(shared_pages_by_tid.count(reader_toucher), 0u);
    EXPECT_EQ(own_pages_by_tid[reader_toucher].size(), kPages);
    EXPECT_EQ(own_pages_by_tid.count(toucher), 0u);

    // The aggregated view agrees: the toucher's page faults, with their node.
    const ThreadSlot* slot = slot_of(toucher);
    ASSERT_NE(slot, nullptr);
    std::uint64_t faults = 0, with_node = 0;
    slot->table.for_each([&](const AccessKey& k, const AccessEntry& e) {
        EXPECT_EQ(k.backend, Backend::PageFault);
        faults += e.count;
        if (k.node >= 0) with_node += e.count;
    });
    EXPECT_GE(faults, kPages);
    EXPECT_GE(with_node, kPages);
    EXPECT_EQ(slot->lost(), 0u);
    EXPECT_TRUE(fs::exists(dir / "p.samples.jsonl"));
    ::munmap(shared, kPages * kPage);
    ::munmap(own, kPages * kPage);
    fs::remove_all(dir);
}

TEST(SamplingLive, CpuClockSeesWhereAPinnedThreadRan) {
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
    Sampler s(backend_bit(Backend::CpuClock));
    REQUIRE_SAMPLER(s);
    const int pinned = run_sampled_thread([] {
        ASSERT_TRUE(pin_to(1));
        spin_for(std::chrono::milliseconds(300));
    });
    // A thread moved from CPU 0 to CPU 1 halfway: the samples follow it.
    const int moved = run_sampled_thread([] {
        ASSERT_TRUE(pin_to(0));
        spin_for(std::chrono::milliseconds(200));
        ASSERT_TRUE(pin_to(1));
        spin_for(std::chrono::milliseconds(200));
    });
    sampler_drain_all();

    const auto ran_on = [](const ThreadSlot* slot) {
        std::map<unsigned, std::uint64_t> cpus;
        slot->table.for_each([&](const AccessKey& k, const AccessEntry& e) {
            EXPECT_EQ(k.backend, Backend::CpuClock);
            cpus[k.cpu] += e.count;
        });
        return cpus;
    };
    const ThreadSlot* p = slot_of(pinned);
    ASSERT_NE(p, nullptr);
    const auto pinned_cpus = ran_on(p);
    ASSERT_EQ(pinned_cpus.size(), 1u);
    EXPECT_EQ(pinned_cpus.begin()->first, 1u);
    // 300 ms of CPU time at one sample per ms of it.
    EXPECT_GE(pinned_cpus.begin()->second, 200u);
    EXPECT_LE(pinned_cpus.begin()->second, 400u);
    EXPECT_EQ(p->migrations, 0u);

    const ThreadSlot* m = slot_of(moved);
    ASSERT_NE(m, nullptr);
    const auto moved_cpus = ran_on(m);
    ASSERT_EQ(moved_cpus.size(), 2u);
    EXPECT_GE(moved_cpus.at(0), 130u);
    EXPECT_GE(moved_cpus.at(1), 130u);
    EXPECT_GE(m->migrations, 1u);
}

TEST(SamplingLive, UnpinnedThreadsRunOnlyWhereAllowed) {
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
    Sampler s(backend_bit(Backend::CpuClock));
    REQUIRE_SAMPLER(s);
    cpu_set_t allowed;
    ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    // Three busy threads on (at least) two CPUs: the scheduler moves them.
    std::vector<int> tids(3);
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
        threads.emplace_back([&, i] {
            sampler_thread_begin();
            tids[static_cast<std::size_t>(i)] = static_cast<int>(::gettid());
            spin_for(std::chrono::milliseconds(400));
            sampler_thread_end();
        });
    for (auto& t : threads) t.join();
    std::uint64_t migrations = 0;
    for (int tid : tids) {
        const ThreadSlot* slot = slot_of(tid);
        ASSERT_NE(slot, nullptr);
        std::uint64_t n = 0;
        slot->table.for_each([&](const AccessKey& k, const AccessEntry& e) {
            EXPECT_TRUE(CPU_ISSET(k.cpu, &allowed)) << "cpu " << k.cpu;
            n += e.count;
        });
        EXPECT_GE(n, 250u) << "400 ms of CPU time";
        migrations += slot->migrations;
    }
    // Not asserted: whether the scheduler moved them is its business. Shown
    // so a reader of the test log sees what happened.
    std::printf("unpinned threads: %llu migrations seen\n", static_cast<unsigned long long>(migrations));
}

TEST(SamplingLive, DrainThreadKeepsUpWhereTheRingAloneWouldOverflow) {
    constexpr std::size_t kPages = 20000;  // ~1 MB of samples; the ring holds 64 KiB
    const auto faults_and_lost = [&](bool drain_thread) {
        Sampler s(backend_bit(Backend::PageFault), "", drain_thread);
        if (!s.started) return std::pair<std::uint64_t, std::uint64_t>{0, 0};
        char* buf = map_pages(kPages);
        const int tid = run_sampled_thread([&] {
            for (std::size_t p = 0; p < kPages; ++p) {
                buf[p * kPage] = 1;
                // Give the drain thread room on a 2-CPU machine.
                if (p % 256 == 0) sched_yield();
            }
        });
        const ThreadSlot* slot = slot_of(tid);
        std::uint64_t samples = 0, lost = 0;
        if (slot) {
            samples = slot->samples;
            lost = slot->lost();
        }
        ::munmap(buf, kPages * kPage);
        return std::pair{samples, lost};
    };
    Sampler probe(backend_bit(Backend::PageFault));
    REQUIRE_SAMPLER(probe);
    const auto [alone_samples, alone_lost] = faults_and_lost(false);
    const auto [drained_samples, drained_lost] = faults_and_lost(true);
    EXPECT_GT(alone_lost, 0u) << "without a reader, a 64 KiB ring cannot hold 20000 samples";
    EXPECT_GE(alone_samples + alone_lost, kPages);
    // How much the drain thread saves depends on how soon a busy machine
    // runs it; that it saves most, and that every sample is accounted for,
    // does not.
    EXPECT_GE(drained_samples + drained_lost, kPages);
    EXPECT_LT(drained_lost * 4, alone_lost) << "drained " << drained_samples << ", lost " << drained_lost;
}

TEST(SamplingLive, UnavailableBackendsAreExplainedAndTheRestRuns) {
    Sampler s(kAllBackends);
    REQUIRE_SAMPLER(s);
    const std::string message = s.message;
    for (int i = 0; i < kBackendCount; ++i) {
        const Backend b = static_cast<Backend>(i);
        const BackendStatus& st = sampler_plan().of(b);
        if (!st.available) {
            EXPECT_NE(message.find(std::string(backend_name(b)) + ": " + st.reason), std::string::npos) << message;
        }
    }
    if (!sampler_plan().of(Backend::Papi).available) {
        EXPECT_GT(std::strlen(sampler_plan().of(Backend::Papi).reason), 20u);
    }
    EXPECT_NE(sampler_usable_backends() & backend_bit(Backend::PageFault), 0u);
}

TEST(SamplingLive, PapiCountsCacheMissesWhereTheMachineHasCounters) {
    Sampler s(backend_bit(Backend::Papi) | backend_bit(Backend::CpuClock));
    if (!sampler_plan().of(Backend::Papi).available)
        GTEST_SKIP() << "PAPI: " << sampler_plan().of(Backend::Papi).reason;
    std::vector<char> big(64 << 20, 1);
    const int tid = run_sampled_thread([&] {
        std::uint64_t x = 0;
        for (std::size_t i = 0; i < big.size(); i += 64) x += static_cast<unsigned char>(big[i]);
        EXPECT_GT(x, 0u);
    });
    const ThreadSlot* slot = slot_of(tid);
    ASSERT_NE(slot, nullptr);
    EXPECT_FALSE(slot->papi.running);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < sampler_papi().counter_count(); ++i) total += slot->papi.values[i];
    EXPECT_GT(total, 1000u) << "streaming 64 MiB misses the caches";
}

TEST(SamplingLive, SummaryFileDescribesBackendsThreadsAndAccesses) {
    const fs::path dir = temp_dir("summary");
    Sampler s(backend_bit(Backend::PageFault) | backend_bit(Backend::CpuClock) | backend_bit(Backend::Pebs));
    REQUIRE_SAMPLER(s);
    char* buf = map_pages(64);
    const int tid = run_sampled_thread([&] {
        for (std::size_t p = 0; p < 64; ++p) buf[p * kPage] = 1;
        spin_for(std::chrono::milliseconds(50));
    });
    char error[512];
    ASSERT_TRUE(sampler_finish(dir.c_str(), "rank-0000.pid-1", error, sizeof error)) << error;
    std::ifstream in(dir / "rank-0000.pid-1.samples.jsonl");
    std::string line, text;
    int lines = 0;
    while (std::getline(in, line)) {
        text += line + "\n";
        ++lines;
    }
    EXPECT_EQ(text.rfind("{\"v\":1,\"rec\":\"sampling\",\"pid\":", 0), 0u) << text;
    EXPECT_NE(text.find("\"rec\":\"backend\",\"name\":\"pagefault\",\"requested\":true,\"available\":true"),
              std::string::npos);
    EXPECT_NE(text.find("\"rec\":\"thread\",\"tid\":" + std::to_string(tid)), std::string::npos);
    EXPECT_NE(text.find("\"rec\":\"access\",\"tid\":" + std::to_string(tid) + ",\"backend\":\"pagefault\""),
              std::string::npos);
    EXPECT_NE(text.find("\"rec\":\"ran_on\",\"tid\":" + std::to_string(tid)), std::string::npos);
    EXPECT_NE(text.rfind("{\"v\":1,\"rec\":\"end\""), std::string::npos);
    if (!sampler_plan().of(Backend::Pebs).available) {
        EXPECT_NE(text.find(std::string("\"name\":\"pebs\",\"requested\":true,\"available\":false,\"reason\":\"") +
                            sampler_plan().of(Backend::Pebs).reason),
                  std::string::npos);
    }
    // A second summary for the same stem is refused, never overwritten.
    EXPECT_FALSE(write_sample_summary((dir / "rank-0000.pid-1.samples.jsonl").c_str(), s.config, error, sizeof error));
    ::munmap(buf, 64 * kPage);
    fs::remove_all(dir);
}

TEST(SamplingLive, HardwareBackendsWhereTheMachineHasThem) {
    // PEBS or IBS: only on machines with a hardware PMU (not the development
    // VMs). A thread streams through a buffer far larger than the caches:
    // its samples must carry data addresses in that buffer and data sources
    // that decode to a level.
    Sampler s(backend_bit(Backend::Pebs) | backend_bit(Backend::Ibs));
    if (!s.started) GTEST_SKIP() << s.message;
    constexpr std::size_t kBytes = 256u << 20;
    char* buf = map_pages(kBytes / kPage);
    ASSERT_NE(buf, nullptr);
    std::memset(buf, 1, kBytes);
    const int tid = run_sampled_thread([&] {
        std::uint64_t sum = 0;
        for (int pass = 0; pass < 4; ++pass)
            for (std::size_t i = 0; i < kBytes; i += 64) sum += static_cast<unsigned char>(buf[(i * 97) % kBytes]);
        EXPECT_GT(sum, 0u);
    });
    const ThreadSlot* slot = slot_of(tid);
    ASSERT_NE(slot, nullptr);
    std::printf("hardware sampling: %s; error: %s\n", s.message, slot->events.error);
    std::uint64_t total = 0, known_level = 0, dram_with_node = 0;
    std::map<std::string, std::uint64_t> by_level;
    slot->table.for_each([&](const AccessKey& k, const AccessEntry& e) {
        total += e.count;
        by_level[served_by_name(k.served_by)] += e.count;
        if (k.served_by != ServedBy::Unknown) known_level += e.count;
        if ((k.served_by == ServedBy::LocalDram || k.served_by == ServedBy::RemoteDram) && k.node >= 0)
            dram_with_node += e.count;
    });
    for (const auto& [level, n] : by_level) std::printf("  %-14s %llu\n", level.c_str(), static_cast<unsigned long long>(n));
    EXPECT_GT(total, 100u);
    EXPECT_GT(known_level, total / 2) << "most samples name their level";
    ::munmap(buf, kBytes);
}
