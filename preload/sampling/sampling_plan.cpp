#include "preload/sampling/sampling_plan.hpp"

#include <cstring>

#include "preload/text.hpp"

namespace stacksage::sampling {

namespace {

// Why no perf_event backend that needs `allowed` or a lower paranoid value
// can open, or nullptr when nothing in the settings stops it.
bool perf_blocked(const SystemFacts& f, const SamplingPlan& plan, int allowed, const char* proc_root,
                  TextBuffer& why) {
    if (!f.perf_supported) {
        why.add("this kernel has no perf_event support (")
            .add(proc_root ? proc_root : kDefaultProcRoot)
            .add("/sys/kernel/perf_event_paranoid is missing)");
        return true;
    }
    if (!f.cap_perfmon && f.paranoid > allowed) {
        why.add("perf_event_paranoid is ").add_int(f.paranoid).add(": set it to ").add_int(allowed)
            .add(" or lower with sysctl kernel.perf_event_paranoid=").add_int(allowed)
            .add(" (or run with CAP_PERFMON)");
        return true;
    }
    if (plan.max_rings == 0) {
        why.add("the locked-memory budget for perf ring buffers (perf_event_mlock_kb ")
            .add_int(f.mlock_kb).add(" KiB x ").add_uint(f.online_cpus)
            .add(" CPUs, shared by all of this user's processes, plus ulimit -l ")
            .add_uint(f.memlock_limit / 1024).add(" KiB) cannot hold one ring of ")
            .add_uint(static_cast<std::uint64_t>(plan.ring_pages) * f.page_size / 1024)
            .add(" KiB: raise kernel.perf_event_mlock_kb or ulimit -l, or lower STACKSAGE_SAMPLE_PAGES");
        return true;
    }
    return false;
}

const char* root_of(const PmuScan& pmus) { return pmus.root; }

void no_core_pmu_reason(const PmuScan& pmus, const SystemFacts& facts, TextBuffer& why) {
    if (!pmus.root_readable) {
        why.add("no hardware PMU: ").add(root_of(pmus)).add(" cannot be read (").add(std::strerror(pmus.root_errno))
            .add(")");
    } else if (facts.hypervisor) {
        why.add("no hardware PMU: this looks like a virtual machine (no cpu PMU in sysfs)");
    } else {
        why.add("no hardware PMU: ").add(root_of(pmus))
            .add(" lists no cpu PMU (the kernel has no driver for this processor's performance counters)");
    }
}

void plan_pebs(const PmuScan& pmus, const SystemFacts& facts, const SamplingOptions& options,
               SamplingPlan& plan) {
    BackendStatus& status = plan.status[static_cast<int>(Backend::Pebs)];
    TextBuffer why(status.reason, sizeof status.reason);
    bool any_core = false;
    const char* skipped = nullptr;  // the last reason a core PMU was passed over
    char encode_error[160] = {};
    for (std::size_t i = 0; i < pmus.count; ++i) {
        const PmuDescription& pmu = pmus.pmus[i];
        if (!pmu.is_core_pmu()) continue;
        any_core = true;
        if (pmu.mem_loads[0] == '\0') {
            skipped = "no mem-loads event";
            continue;
        }
        const FormatSpec* ldlat = pmu.format("ldlat");
        if (ldlat == nullptr) {
            skipped = "mem-loads but no ldlat format field";
            continue;
        }
        if (pmu.type < 0) {
            skipped = "no readable type";
            continue;
        }
        if (pmu.max_precise == 0) {
            skipped = "max_precise 0 (no precise sampling)";
            continue;
        }
        PebsTarget t;
        TextBuffer(t.pmu, sizeof t.pmu).add(pmu.name);
        t.type = pmu.type;
        if (!encode_event(pmu.mem_loads, pmu.formats, pmu.format_count, t.loads, encode_error,
                          sizeof encode_error)) {
            skipped = "an mem-loads event that does not parse";
            continue;
        }
        if (!apply_format(*ldlat, options.ldlat_cycles, t.loads)) {
            skipped = "an ldlat field too narrow for the threshold";
            continue;
        }
        t.has_stores = pmu.mem_stores[0] != '\0' &&
                       encode_event(pmu.mem_stores, pmu.formats, pmu.format_count, t.stores, encode_error,
                                    sizeof encode_error);
        t.has_loads_aux = pmu.mem_loads_aux[0] != '\0' &&
                          encode_event(pmu.mem_loads_aux, pmu.formats, pmu.format_count, t.loads_aux,
                                       encode_error, sizeof encode_error);
        // Load latency needs at least precise level 1; more gives the exact
        // instruction. The kernel rejects more than the PMU's maximum.
        t.precise_ip = pmu.max_precise > 0 ? (pmu.max_precise < 3 ? pmu.max_precise : 3) : 2;
        plan.pebs[plan.pebs_count++] = t;
    }
    if (!any_core) {
        no_core_pmu_reason(pmus, facts, why);
        return;
    }
    if (plan.pebs_count == 0) {
        const bool amd = pmus.find("ibs_op") != nullptr || std::strcmp(facts.vendor, "AuthenticAMD") == 0;
        if (amd)
            why.add("PEBS is Intel's: this processor's cpu PMU has no mem-loads event (on AMD, use ibs)");
        else
            why.add("the cpu PMU has ").add(skipped).add(": this processor or kernel has no PEBS load-latency sampling");
        return;
    }
    if (perf_blocked(facts, plan, 2, options.proc_root, why)) {
        plan.pebs_count = 0;
        return;
    }
    status.available = true;
}

void plan_ibs(const PmuScan& pmus, const SystemFacts& facts, const SamplingOptions& options,
              SamplingPlan& plan) {
    BackendStatus& status = plan.status[static_cast<int>(Backend::Ibs)];
    TextBuffer why(status.reason, sizeof status.reason);
    const PmuDescription* ibs = pmus.find("ibs_op");
    if (ibs == nullptr) {
        if (!pmus.root_readable)
            no_core_pmu_reason(pmus, facts, why);
        else if (std::strcmp(facts.vendor, "AuthenticAMD") != 0)
            why.add("no ibs_op PMU in sysfs: IBS exists only on AMD processors");
        else if (facts.hypervisor)
            why.add("no ibs_op PMU in sysfs: this looks like a virtual machine (IBS is not virtualised)");
        else
            why.add("no ibs_op PMU in sysfs: this AMD processor or its kernel has no IBS op sampling");
        return;
    }
    if (ibs->type < 0) {
        why.add("the ibs_op PMU has no readable type in ").add(pmus.root);
        return;
    }
    IbsTarget& t = plan.ibs;
    t.type = ibs->type;
    if (const FormatSpec* cnt = ibs->format("cnt_ctl")) t.count_ops = apply_format(*cnt, 1, t.op);
    const FormatSpec* swfilt = ibs->format("swfilt");
    // Without the software filter (Linux 6.14) IBS rejects exclude_kernel,
    // so it samples the kernel too, which perf_event_paranoid 2 forbids.
    const bool can_filter = swfilt != nullptr && apply_format(*swfilt, 1, t.op);
    t.exclude_kernel = can_filter;
    if (!can_filter && !facts.cap_perfmon && facts.perf_supported && facts.paranoid > 1) {
        why.add("IBS on this kernel cannot leave out kernel samples (ibs_op has no swfilt format, Linux 6.14 "
                "added it), so it needs more than user-space profiling: perf_event_paranoid is ")
            .add_int(facts.paranoid)
            .add(": set it to 1 or lower with sysctl kernel.perf_event_paranoid=1 (or run with CAP_PERFMON)");
        t.type = -1;
        return;
    }
    if (perf_blocked(facts, plan, can_filter ? 2 : 1, options.proc_root, why)) {
        t.type = -1;
        return;
    }
    status.available = true;
}

void plan_software(Backend b, const SystemFacts& facts, const SamplingOptions& options, SamplingPlan& plan) {
    BackendStatus& status = plan.status[static_cast<int>(b)];
    TextBuffer why(status.reason, sizeof status.reason);
    if (perf_blocked(facts, plan, 2, options.proc_root, why)) return;
    status.available = true;
}

}  // namespace

std::uint32_t SamplingPlan::usable(const BackendSelection& selection) const {
    std::uint32_t bits = 0;
    for (int i = 0; i < kBackendCount; ++i)
        if (status[i].available && selection.wants(static_cast<Backend>(i))) bits |= 1u << i;
    return bits;
}

void plan_sampling(const PmuScan& pmus, const SystemFacts& facts, const SamplingOptions& options,
                   const char* papi_unavailable, SamplingPlan& out) {
    out = SamplingPlan{};
    out.ring_pages = 1 + options.ring_data_pages;
    out.max_rings = rings_within_mlock_budget(facts, out.ring_pages);
    plan_pebs(pmus, facts, options, out);
    plan_ibs(pmus, facts, options, out);
    plan_software(Backend::PageFault, facts, options, out);
    plan_software(Backend::CpuClock, facts, options, out);
    BackendStatus& papi = out.status[static_cast<int>(Backend::Papi)];
    if (papi_unavailable != nullptr)
        TextBuffer(papi.reason, sizeof papi.reason).add(papi_unavailable);
    else
        papi.available = true;
}

}  // namespace stacksage::sampling
