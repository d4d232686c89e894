// PMU discovery and backend availability, on sysfs/procfs fixtures of real
// machines (tests/data/sysfs/README.md) and on this machine.
#include <gtest/gtest.h>

#include <linux/perf_event.h>

#include <memory>
#include <string>

#include "preload/sampling/perf_events.hpp"
#include "preload/sampling/pmu_event_encoding.hpp"
#include "preload/sampling/sampling_plan.hpp"
#include "preload/sampling/sysfs_pmu.hpp"
#include "preload/sampling/system_facts.hpp"

using namespace stacksage::sampling;

namespace {

std::string fixture(const std::string& machine, const std::string& part) {
    return std::string(STACKSAGE_TEST_DATA_DIR) + "/sysfs/" + machine + "/" + part;
}

struct Machine {
    std::unique_ptr<PmuScan> scan = std::make_unique<PmuScan>();
    SystemFacts facts;
    SamplingOptions options;
    std::unique_ptr<SamplingPlan> plan = std::make_unique<SamplingPlan>();

    explicit Machine(const std::string& name, const char* papi = "PAPI not probed in this test") {
        const std::string devices = fixture(name, "devices");
        const std::string proc = fixture(name, "proc");
        scan_pmus(devices.c_str(), *scan);
        read_system_facts(proc.c_str(), facts);
        options.proc_root = nullptr;
        replan(papi);
    }
    void replan(const char* papi = "PAPI not probed in this test") {
        plan_sampling(*scan, facts, options, papi, *plan);
    }
    const BackendStatus& status(Backend b) const { return plan->of(b); }
};

}  // namespace

TEST(SamplingFormat, ParsesSingleBitsRangesAndSplitFields) {
    FormatSpec s;
    ASSERT_TRUE(parse_format_spec("config:0-7\n", s));
    EXPECT_EQ(s.word, 0);
    EXPECT_EQ(s.width(), 8u);
    ASSERT_TRUE(parse_format_spec("config1:0-15", s));
    EXPECT_EQ(s.word, 1);
    ASSERT_TRUE(parse_format_spec("config2:0", s));
    EXPECT_EQ(s.word, 2);
    EXPECT_EQ(s.width(), 1u);
    ASSERT_TRUE(parse_format_spec("config:0-7,32-35", s));  // AMD's 12-bit event select
    EXPECT_EQ(s.range_count, 2);
    EXPECT_EQ(s.width(), 12u);
    EventEncoding e;
    ASSERT_TRUE(apply_format(s, 0x1d4, e));
    EXPECT_EQ(e.config[0], 0xd4u | (0x1ull << 32));
    EXPECT_FALSE(apply_format(s, 0x1000, e)) << "13 bits do not fit a 12-bit field";

    EXPECT_FALSE(parse_format_spec("config:7-0", s));
    EXPECT_FALSE(parse_format_spec("config:0-64", s));
    EXPECT_FALSE(parse_format_spec("config9:0", s));
    EXPECT_FALSE(parse_format_spec("cfg:0", s));
    EXPECT_FALSE(parse_format_spec("config:1,2,3,4,5", s));
    EXPECT_FALSE(parse_format_spec("config:0-7 junk", s));
}

TEST(SamplingFormat, EncodesKernelEventStrings) {
    NamedFormat formats[3] = {};
    std::snprintf(formats[0].name, sizeof formats[0].name, "event");
    ASSERT_TRUE(parse_format_spec("config:0-7", formats[0].spec));
    std::snprintf(formats[1].name, sizeof formats[1].name, "umask");
    ASSERT_TRUE(parse_format_spec("config:8-15", formats[1].spec));
    std::snprintf(formats[2].name, sizeof formats[2].name, "ldlat");
    ASSERT_TRUE(parse_format_spec("config1:0-15", formats[2].spec));
    EventEncoding e;
    char error[200];
    ASSERT_TRUE(encode_event("event=0xcd,umask=0x1,ldlat=3", formats, 3, e, error, sizeof error)) << error;
    EXPECT_EQ(e.config[0], 0x1cdu);
    EXPECT_EQ(e.config[1], 3u);
    ASSERT_TRUE(encode_event("event=0x03,umask=0x82\n", formats, 3, e, error, sizeof error));
    EXPECT_EQ(e.config[0], 0x8203u) << "perf's MEM_LOADS_AUX";
    ASSERT_TRUE(encode_event("event=208,umask", formats, 3, e, error, sizeof error));
    EXPECT_EQ(e.config[0], 0x1d0u) << "decimal values; a bare term means 1";

    EXPECT_FALSE(encode_event("event=0xcd,frontend=1", formats, 3, e, error, sizeof error));
    EXPECT_NE(std::string(error).find("'frontend'"), std::string::npos) << error;
    EXPECT_FALSE(encode_event("event=0x1cd", formats, 3, e, error, sizeof error));
    EXPECT_NE(std::string(error).find("does not fit"), std::string::npos) << error;
    EXPECT_FALSE(encode_event("event=0xzz", formats, 3, e, error, sizeof error));
    EXPECT_FALSE(encode_event("", formats, 3, e, error, sizeof error));
}

TEST(SamplingSysfs, ReadsTheSkylakeClientCpuPmu) {
    Machine m("intel-skylake-client");
    ASSERT_TRUE(m.scan->root_readable);
    EXPECT_EQ(m.scan->total_pmus, 10u);
    const PmuDescription* cpu = m.scan->find("cpu");
    ASSERT_NE(cpu, nullptr);
    EXPECT_EQ(cpu->type, 4);
    EXPECT_STREQ(cpu->mem_loads, "event=0xcd,umask=0x1,ldlat=3");
    EXPECT_STREQ(cpu->mem_stores, "event=0xd0,umask=0x82");
    EXPECT_STREQ(cpu->mem_loads_aux, "");
    EXPECT_EQ(cpu->max_precise, 3);
    EXPECT_STREQ(cpu->pmu_name, "skylake");
    ASSERT_NE(cpu->format("ldlat"), nullptr);
    EXPECT_EQ(cpu->format("ldlat")->word, 1);
    EXPECT_EQ(m.scan->find("ibs_op"), nullptr);
    EXPECT_EQ(m.scan->find("uncore_imc"), nullptr) << "only PMUs memory sampling uses are described";
}

TEST(SamplingSysfs, ReadsProcfsFacts) {
    Machine m("intel-skylake-client");
    EXPECT_TRUE(m.facts.perf_supported);
    EXPECT_EQ(m.facts.paranoid, 2);
    EXPECT_EQ(m.facts.mlock_kb, 516);
    EXPECT_EQ(m.facts.memlock_limit, 8388608u);
    EXPECT_FALSE(m.facts.cap_perfmon);
    EXPECT_FALSE(m.facts.hypervisor);
    EXPECT_EQ(m.facts.online_cpus, 8u);
    EXPECT_STREQ(m.facts.vendor, "GenuineIntel");
    Machine vm("vm-no-pmu");
    EXPECT_TRUE(vm.facts.hypervisor);
    EXPECT_STREQ(vm.facts.vendor, "AuthenticAMD");
    EXPECT_EQ(vm.facts.online_cpus, 2u);
}

TEST(SamplingPlan, SkylakeClientHasPebsLoadsAndStoresWithLdlat) {
    Machine m("intel-skylake-client");
    ASSERT_TRUE(m.status(Backend::Pebs).available) << m.status(Backend::Pebs).reason;
    ASSERT_EQ(m.plan->pebs_count, 1u);
    const PebsTarget& t = m.plan->pebs[0];
    EXPECT_STREQ(t.pmu, "cpu");
    EXPECT_EQ(t.type, 4);
    EXPECT_EQ(t.loads.config[0], 0x1cdu);
    EXPECT_EQ(t.loads.config[1], 30u) << "ldlat comes from the options, not the sysfs default of 3";
    EXPECT_TRUE(t.has_stores);
    EXPECT_EQ(t.stores.config[0], 0x82d0u);
    EXPECT_FALSE(t.has_loads_aux);
    EXPECT_EQ(t.precise_ip, 3);
    EXPECT_FALSE(m.status(Backend::Ibs).available);
    EXPECT_STREQ(m.status(Backend::Ibs).reason, "no ibs_op PMU in sysfs: IBS exists only on AMD processors");
    EXPECT_TRUE(m.status(Backend::PageFault).available);
    EXPECT_TRUE(m.status(Backend::CpuClock).available);
    EXPECT_FALSE(m.status(Backend::Papi).available);
    EXPECT_STREQ(m.status(Backend::Papi).reason, "PAPI not probed in this test");

    m.options.ldlat_cycles = 100;
    m.replan();
    EXPECT_EQ(m.plan->pebs[0].loads.config[1], 100u);
}

TEST(SamplingPlan, SapphireRapidsOpensMemLoadsUnderItsAuxLeader) {
    Machine m("intel-sapphire-rapids");
    ASSERT_TRUE(m.status(Backend::Pebs).available) << m.status(Backend::Pebs).reason;
    ASSERT_EQ(m.plan->pebs_count, 1u);
    const PebsTarget& t = m.plan->pebs[0];
    ASSERT_TRUE(t.has_loads_aux);
    EXPECT_EQ(t.loads_aux.config[0], 0x8203u);
    EXPECT_EQ(t.stores.config[0], 0x2cdu);

    EventSpec specs[kMaxThreadEvents];
    const std::size_t n = build_event_specs(*m.plan, m.options, backend_bit(Backend::Pebs), specs, kMaxThreadEvents);
    ASSERT_EQ(n, 3u);
    EXPECT_EQ(specs[0].kind, EventKind::PebsLoadsAux);
    EXPECT_EQ(specs[0].attr.sample_period, 0u) << "the aux leader only counts";
    EXPECT_EQ(specs[0].attr.type, 4u);
    EXPECT_EQ(specs[1].kind, EventKind::PebsLoads);
    EXPECT_EQ(specs[1].leader, 0);
    EXPECT_EQ(specs[1].attr.config, 0x1cdu);
    EXPECT_EQ(specs[1].attr.config1, 30u);
    EXPECT_EQ(specs[1].attr.precise_ip, 3u);
    EXPECT_EQ(specs[1].attr.exclude_kernel, 1u);
    EXPECT_EQ(specs[1].attr.sample_period, m.options.pebs_period);
    const std::uint64_t want = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC |
                               PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_CPU | PERF_SAMPLE_TID;
    EXPECT_EQ(specs[1].attr.sample_type & want, want);
    EXPECT_EQ(specs[2].kind, EventKind::PebsStores);
    EXPECT_EQ(specs[2].leader, -1);
}

TEST(SamplingPlan, HybridGetsOneTargetPerCoreType) {
    Machine m("intel-alderlake-hybrid");
    ASSERT_TRUE(m.status(Backend::Pebs).available) << m.status(Backend::Pebs).reason;
    ASSERT_EQ(m.plan->pebs_count, 2u);
    // Sorted by PMU name: cpu_atom, cpu_core.
    const PebsTarget& atom = m.plan->pebs[0];
    const PebsTarget& core = m.plan->pebs[1];
    EXPECT_STREQ(atom.pmu, "cpu_atom");
    EXPECT_EQ(atom.type, 10);
    EXPECT_EQ(atom.loads.config[0], 0x5d0u) << "Gracemont's own mem-loads encoding";
    EXPECT_EQ(atom.stores.config[0], 0x6d0u);
    EXPECT_FALSE(atom.has_loads_aux);
    EXPECT_STREQ(core.pmu, "cpu_core");
    EXPECT_EQ(core.type, 4);
    EXPECT_TRUE(core.has_loads_aux);
    EXPECT_STREQ(m.scan->find("cpu_core")->cpus, "0-15");
    EXPECT_STREQ(m.scan->find("cpu_atom")->cpus, "16-23");

    EventSpec specs[kMaxThreadEvents];
    const std::size_t n = build_event_specs(*m.plan, m.options, kAllBackends, specs, kMaxThreadEvents);
    // atom loads+stores, core aux+loads+stores, page faults (and their
    // stack copies), cpu-clock.
    ASSERT_EQ(n, 8u);
    EXPECT_EQ(specs[0].attr.type, 10u);
    EXPECT_EQ(specs[2].kind, EventKind::PebsLoadsAux);
    EXPECT_EQ(specs[3].leader, 2);
    // Code attribution: PEBS samples carry the user call chain, registers
    // and a stack copy; the counting group leader carries nothing.
    constexpr std::uint64_t kCode = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    for (int i : {0, 1, 3, 4}) {
        EXPECT_EQ(specs[i].attr.sample_type & kCode, kCode) << i;
        EXPECT_TRUE(specs[i].attr.exclude_callchain_kernel) << i;
        EXPECT_EQ(specs[i].attr.sample_stack_user, m.options.stack_bytes) << i;
    }
    EXPECT_EQ(specs[2].attr.sample_type & kCode, 0u);
    // Every page fault: the chain and the top of the stack; every 16th
    // period (and not a multiple of it), a whole stack copy with registers.
    ASSERT_EQ(specs[5].kind, EventKind::PageFault);
    EXPECT_EQ(specs[5].attr.sample_type & kCode, std::uint64_t{PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER});
    ASSERT_EQ(specs[6].kind, EventKind::PageFaultStack);
    EXPECT_EQ(specs[6].attr.sample_type & kCode, kCode);
    EXPECT_GT(specs[6].attr.sample_period, specs[5].attr.sample_period);
    EXPECT_NE(specs[6].attr.sample_period % specs[5].attr.sample_period, 0u);
    EXPECT_EQ(specs[7].kind, EventKind::CpuClock);
    EXPECT_EQ(specs[7].attr.sample_type & kCode, 0u) << "where a thread runs needs no call path";

    // Attribution off: none of it, and no second page-fault event.
    m.options.attribution = false;
    ASSERT_EQ(build_event_specs(*m.plan, m.options, kAllBackends, specs, kMaxThreadEvents), 7u);
    for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(specs[i].attr.sample_type & kCode, 0u) << i;
}

TEST(SamplingPlan, AmdWithoutSwfiltNeedsParanoidOne) {
    Machine m("amd-zen4");
    EXPECT_FALSE(m.status(Backend::Pebs).available);
    EXPECT_STREQ(m.status(Backend::Pebs).reason,
                 "PEBS is Intel's: this processor's cpu PMU has no mem-loads event (on AMD, use ibs)");
    ASSERT_FALSE(m.status(Backend::Ibs).available);
    const std::string reason = m.status(Backend::Ibs).reason;
    EXPECT_NE(reason.find("no swfilt format"), std::string::npos) << reason;
    EXPECT_NE(reason.find("perf_event_paranoid is 2: set it to 1 or lower with sysctl kernel.perf_event_paranoid=1"),
              std::string::npos)
        << reason;

    // The same machine with paranoid 1 (or CAP_PERFMON) samples the kernel too.
    m.facts.paranoid = 1;
    m.replan();
    ASSERT_TRUE(m.status(Backend::Ibs).available) << m.status(Backend::Ibs).reason;
    EXPECT_EQ(m.plan->ibs.type, 12);
    EXPECT_TRUE(m.plan->ibs.count_ops);
    EXPECT_FALSE(m.plan->ibs.exclude_kernel);
    EXPECT_EQ(m.plan->ibs.op.config[0], 1ull << 19) << "cnt_ctl: count dispatched ops";
    EventSpec specs[kMaxThreadEvents];
    m.options.ibs_period = 100007;  // not a multiple of 16
    ASSERT_EQ(build_event_specs(*m.plan, m.options, backend_bit(Backend::Ibs), specs, kMaxThreadEvents), 1u);
    EXPECT_EQ(specs[0].attr.sample_period, 100000u) << "IBS ignores the low 4 bits: we round down ourselves";
    EXPECT_EQ(specs[0].attr.exclude_kernel, 0u) << "IBS without swfilt refuses exclude_kernel";

    m.facts.paranoid = 2;
    m.facts.cap_perfmon = true;
    m.replan();
    EXPECT_TRUE(m.status(Backend::Ibs).available);
}

TEST(SamplingPlan, AmdWithSwfiltSamplesUserSpaceAtParanoidTwo) {
    Machine m("amd-zen5-swfilt");
    ASSERT_TRUE(m.status(Backend::Ibs).available) << m.status(Backend::Ibs).reason;
    EXPECT_TRUE(m.plan->ibs.exclude_kernel);
    EXPECT_EQ(m.plan->ibs.op.config[2], 1u) << "swfilt is config2:0";
    EventSpec specs[kMaxThreadEvents];
    ASSERT_EQ(build_event_specs(*m.plan, m.options, backend_bit(Backend::Ibs), specs, kMaxThreadEvents), 1u);
    EXPECT_EQ(specs[0].attr.exclude_kernel, 1u);
    EXPECT_EQ(specs[0].attr.config2, 1u);
}

TEST(SamplingPlan, VirtualMachineWithoutPmuKeepsSoftwareBackends) {
    Machine m("vm-no-pmu");
    EXPECT_STREQ(m.status(Backend::Pebs).reason, "no hardware PMU: this looks like a virtual machine (no cpu PMU in sysfs)");
    EXPECT_STREQ(m.status(Backend::Ibs).reason,
                 "no ibs_op PMU in sysfs: this looks like a virtual machine (IBS is not virtualised)");
    EXPECT_TRUE(m.status(Backend::PageFault).available);
    EXPECT_TRUE(m.status(Backend::CpuClock).available);
    BackendSelection all;
    all.automatic = true;
    EXPECT_EQ(m.plan->usable(all), backend_bit(Backend::PageFault) | backend_bit(Backend::CpuClock));
}

TEST(SamplingPlan, ParanoidThreeBlocksEverythingAndSaysWhatToSet) {
    Machine m("intel-skylake-client");
    m.facts.paranoid = 3;  // Debian's and Ubuntu's "no perf for users"
    m.replan();
    for (Backend b : {Backend::Pebs, Backend::PageFault, Backend::CpuClock}) {
        EXPECT_FALSE(m.status(b).available);
        EXPECT_STREQ(m.status(b).reason,
                     "perf_event_paranoid is 3: set it to 2 or lower with sysctl kernel.perf_event_paranoid=2 "
                     "(or run with CAP_PERFMON)");
    }
    m.facts.cap_perfmon = true;
    m.replan();
    EXPECT_TRUE(m.status(Backend::Pebs).available);
}

TEST(SamplingPlan, LockedMemoryBudgetTooSmallForOneRing) {
    Machine m("intel-skylake-client");
    m.facts.mlock_kb = 0;
    m.facts.memlock_limit = 64 * 1024;  // 16 pages; a ring is 1 + 16
    m.replan();
    EXPECT_EQ(m.plan->max_rings, 0u);
    const std::string reason = m.status(Backend::PageFault).reason;
    EXPECT_EQ(reason.rfind("the locked-memory budget for perf ring buffers", 0), 0u) << reason;
    EXPECT_NE(reason.find("ulimit -l 64 KiB"), std::string::npos) << reason;
    EXPECT_NE(reason.find("ring of 68 KiB"), std::string::npos) << reason;

    m.options.ring_data_pages = 8;
    m.replan();
    EXPECT_EQ(m.plan->max_rings, 1u);
    EXPECT_TRUE(m.status(Backend::PageFault).available);

    // The default budget: 516 KiB per CPU x 8 CPUs + 8 MiB rlimit, 17-page rings.
    Machine fresh("intel-skylake-client");
    EXPECT_EQ(fresh.plan->max_rings, (129u * 8 + 2048) / 17);
    fresh.facts.cap_ipc_lock = true;
    fresh.replan();
    EXPECT_EQ(fresh.plan->max_rings, 0xffffffffu);
}

TEST(SamplingPlan, MissingSysfsAndPerfSupportAreExplained) {
    auto scan = std::make_unique<PmuScan>();
    scan_pmus("/nonexistent/sysfs", *scan);
    EXPECT_FALSE(scan->root_readable);
    SystemFacts facts;
    read_system_facts("/nonexistent/proc", facts);
    EXPECT_FALSE(facts.perf_supported);
    SamplingOptions options;
    options.proc_root = "/nonexistent/proc";
    auto plan = std::make_unique<SamplingPlan>();
    plan_sampling(*scan, facts, options, "x", *plan);
    EXPECT_STREQ(plan->of(Backend::Pebs).reason,
                 "no hardware PMU: /nonexistent/sysfs cannot be read (No such file or directory)");
    EXPECT_STREQ(plan->of(Backend::PageFault).reason,
                 "this kernel has no perf_event support (/nonexistent/proc/sys/kernel/perf_event_paranoid is missing)");
}

TEST(SamplingPlan, ThisMachine) {
    // Whatever this machine is, every backend is either available or says why.
    auto scan = std::make_unique<PmuScan>();
    scan_pmus(nullptr, *scan);
    SystemFacts facts;
    read_system_facts(nullptr, facts);
    auto plan = std::make_unique<SamplingPlan>();
    plan_sampling(*scan, facts, SamplingOptions{}, "not probed", *plan);
    for (int i = 0; i < kBackendCount; ++i) {
        const BackendStatus& s = plan->status[i];
        EXPECT_NE(s.available, s.reason[0] != '\0') << backend_name(static_cast<Backend>(i)) << ": " << s.reason;
    }
    if (facts.perf_supported && (facts.paranoid <= 2 || facts.cap_perfmon)) {
        EXPECT_TRUE(plan->of(Backend::PageFault).available) << plan->of(Backend::PageFault).reason;
    }
}

TEST(SamplingSelection, ParsesOffAutoAndLists) {
    BackendSelection s;
    char error[200];
    ASSERT_TRUE(parse_backend_selection("off", s, error, sizeof error));
    EXPECT_FALSE(s.enabled());
    ASSERT_TRUE(parse_backend_selection(nullptr, s, error, sizeof error));
    EXPECT_FALSE(s.enabled());
    ASSERT_TRUE(parse_backend_selection("auto", s, error, sizeof error));
    EXPECT_TRUE(s.automatic);
    EXPECT_TRUE(s.wants(Backend::Ibs));
    ASSERT_TRUE(parse_backend_selection("pagefault,cpuclock", s, error, sizeof error));
    EXPECT_EQ(s.backends, backend_bit(Backend::PageFault) | backend_bit(Backend::CpuClock));
    EXPECT_FALSE(s.wants(Backend::Pebs));

    EXPECT_FALSE(parse_backend_selection("pebz", s, error, sizeof error));
    EXPECT_STREQ(error, "--sample: unknown backend 'pebz': choose from off, auto, pebs, ibs, pagefault, cpuclock, papi");
    EXPECT_FALSE(parse_backend_selection("pebs,,ibs", s, error, sizeof error));
    EXPECT_FALSE(parse_backend_selection("pebs,pebs", s, error, sizeof error));
    EXPECT_NE(std::string(error).find("listed twice"), std::string::npos);
    EXPECT_FALSE(parse_backend_selection("auto,pebs", s, error, sizeof error));
}
