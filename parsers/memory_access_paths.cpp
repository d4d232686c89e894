#include "parsers/memory_access_paths.hpp"

#include <map>
#include <tuple>

namespace stacksage {

namespace {

namespace mk = memory_access_keys;

ComponentId cache_above(const Model& m, ComponentId pu, std::int64_t level) {
    for (ComponentId c = m.parent(pu); c != kNoComponent; c = m.parent(c)) {
        if (m.type(c) != ComponentType::Cache) continue;
        if (m.get_int(c, keys::cache_level).value_or(0) != level) continue;
        if (m.get_string(c, keys::cache_kind).value_or("") == "instruction") continue;
        return c;
    }
    return kNoComponent;
}

ComponentId last_level_cache(const Model& m, ComponentId pu) {
    ComponentId best = kNoComponent;
    std::int64_t best_level = 0;
    for (ComponentId c = m.parent(pu); c != kNoComponent; c = m.parent(c)) {
        if (m.type(c) != ComponentType::Cache) continue;
        if (m.get_string(c, keys::cache_kind).value_or("") == "instruction") continue;
        const std::int64_t level = m.get_int(c, keys::cache_level).value_or(0);
        if (level > best_level) {
            best = c;
            best_level = level;
        }
    }
    return best;
}

ComponentId numa_by_index(const Model& m, ComponentId host, std::int64_t index) {
    if (index < 0) return kNoComponent;
    return m.find(ComponentType::Numa, index, host);
}

// The NUMA node whose cpuset holds the PU (the first, on machines where
// several do: DRAM before HBM in hwloc's order).
ComponentId local_numa(const Model& m, ComponentId host, ComponentId pu) {
    const std::int64_t cpu = m.os_index(pu);
    if (cpu < 0) return kNoComponent;
    for (ComponentId n : m.descendants_of_type(host, ComponentType::Numa))
        if (m.cpuset(n).contains(static_cast<unsigned>(cpu))) return n;
    return kNoComponent;
}

bool is_cache_level(std::string_view level) {
    return level == "L1" || level == "fill_buffer" || level == "L2" || level == "L3" || level == "L4" ||
           level == "peer_cache";
}

std::string histogram_text(const std::array<std::uint64_t, kSampleLatencyBuckets>& h) {
    std::string out;
    for (std::size_t i = 0; i < h.size(); ++i) out += (i ? "," : "") + std::to_string(h[i]);
    return out;
}

struct PathSum {
    std::uint64_t count = 0, loads = 0, stores = 0, missed = 0, weight_sum = 0, weight_max = 0;
    std::int64_t node = -1, hops = 0;
    bool node_mixed = false, remote = false;
    std::array<std::uint64_t, kSampleLatencyBuckets> histogram{};
};

}  // namespace

ComponentId memory_access_target(const Model& m, ComponentId host, ComponentId pu, std::string_view level,
                                 std::int64_t numa_node) {
    ComponentId target = kNoComponent;
    if (level == "L1" || level == "fill_buffer") target = cache_above(m, pu, 1);
    else if (level == "L2") target = cache_above(m, pu, 2);
    else if (level == "L3") target = cache_above(m, pu, 3);
    else if (level == "L4") target = cache_above(m, pu, 4);
    if (is_cache_level(level)) {
        // Topologies without that cache (a VM's flat one): the nearest
        // cache there is, or the node's memory.
        if (target == kNoComponent) target = last_level_cache(m, pu);
        if (target == kNoComponent) target = local_numa(m, host, pu);
        return target != kNoComponent ? target : host;
    }
    if (level == "io" || level == "uncached") return host;
    target = numa_by_index(m, host, numa_node);
    if (target == kNoComponent && level == "local_dram") target = local_numa(m, host, pu);
    return target != kNoComponent ? target : host;
}

MemoryPathStats add_sample_summary(Model& m, ComponentId host, const SampleSummary& summary,
                                   const std::function<ComponentId(std::int64_t tid)>& flow_of) {
    MemoryPathStats stats;
    std::map<std::int64_t, ComponentId> pus;
    for (ComponentId pu : m.descendants_of_type(host, ComponentType::Thread)) pus.emplace(m.os_index(pu), pu);
    const auto pu_of = [&](std::int64_t cpu) {
        auto it = pus.find(cpu);
        return it == pus.end() ? kNoComponent : it->second;
    };
    std::map<ComponentId, ComponentId> local_numa_of;
    const auto local_of = [&](ComponentId pu) {
        auto [it, fresh] = local_numa_of.emplace(pu, kNoComponent);
        if (fresh) it->second = local_numa(m, host, pu);
        return it->second;
    };

    // Sum the records per (tid, PU, target, level, backend) first: one path each.
    using Key = std::tuple<std::int64_t, std::uint32_t, std::uint32_t, std::string, std::string>;
    std::map<Key, PathSum> sums;
    std::uint64_t unplaced_cpus = 0;
    for (const SampledAccess& a : summary.accesses) {
        const ComponentId pu = pu_of(a.cpu);
        if (pu == kNoComponent) {
            stats.samples_unplaced += a.count;
            ++unplaced_cpus;
            continue;
        }
        const ComponentId target = memory_access_target(m, host, pu, a.level, a.node);
        PathSum& s = sums[Key{a.tid, index_of(pu), index_of(target), a.level, a.backend}];
        s.count += a.count;
        if (a.op == "load") s.loads += a.count;
        if (a.op == "store") s.stores += a.count;
        if (a.missed) s.missed += a.count;
        s.weight_sum += a.weight_sum;
        s.weight_max = std::max(s.weight_max, a.weight_max);
        s.hops = std::max(s.hops, a.hops);
        if (s.count == a.count) s.node = a.node;
        else if (s.node != a.node) s.node_mixed = true;
        const ComponentId local = local_of(pu);
        const ComponentId node = numa_by_index(m, host, a.node);
        s.remote = s.remote || a.remote || (node != kNoComponent && local != kNoComponent && node != local);
        for (std::size_t b = 0; b < s.histogram.size(); ++b) s.histogram[b] += a.latency_histogram[b];
        stats.samples_placed += a.count;
    }
    const AttrKey k_level = m.key(mk::level), k_backend = m.key(mk::backend), k_loads = m.key(mk::loads),
                  k_stores = m.key(mk::stores), k_missed = m.key(mk::missed), k_wsum = m.key(mk::weight_sum),
                  k_wmax = m.key(mk::weight_max), k_hist = m.key(mk::latency_histogram),
                  k_node = m.key(mk::numa_node), k_remote = m.key(mk::remote), k_hops = m.key(mk::hops),
                  k_tid = m.key(mk::tid), k_pid = m.key(mk::pid);
    for (const auto& [key, s] : sums) {
        const auto& [tid, pu, target, level, backend] = key;
        const DataPathId dp = m.add_datapath(ComponentId{pu}, ComponentId{target}, DataPathType::MemoryAccess);
        m.set_attr(dp, keys::count, static_cast<std::int64_t>(s.count));
        m.set_attr(dp, k_level, std::string_view(level));
        m.set_attr(dp, k_backend, std::string_view(backend));
        m.set_attr(dp, k_loads, static_cast<std::int64_t>(s.loads));
        m.set_attr(dp, k_stores, static_cast<std::int64_t>(s.stores));
        if (s.missed) m.set_attr(dp, k_missed, static_cast<std::int64_t>(s.missed));
        m.set_attr(dp, k_wsum, static_cast<std::int64_t>(s.weight_sum));
        m.set_attr(dp, k_wmax, static_cast<std::int64_t>(s.weight_max));
        m.set_attr(dp, k_hist, std::string_view(histogram_text(s.histogram)));
        m.set_attr(dp, k_node, s.node_mixed ? std::int64_t{-1} : s.node);
        m.set_attr(dp, k_remote, std::int64_t{s.remote ? 1 : 0});
        m.set_attr(dp, k_hops, s.hops);
        m.set_attr(dp, k_tid, tid);
        m.set_attr(dp, k_pid, summary.pid);
        // The mean latency weight, where the backend measures one.
        if (s.weight_sum > 0) m.set_latency(dp, static_cast<double>(s.weight_sum) / static_cast<double>(s.count));
        ++stats.access_paths;
    }
    if (unplaced_cpus > 0)
        stats.notes.push_back(summary.path + ": " + std::to_string(stats.samples_unplaced) +
                              " memory samples name CPUs the node's topology does not have; they are left out");

    // Where threads ran (cpu-clock).
    const AttrKey k_cpu_time = m.key(mk::cpu_time_ns), k_migrations = m.key(mk::migrations),
                  k_lost = m.key(mk::samples_lost);
    for (const SampledRanOn& r : summary.ran_on) {
        const ComponentId flow = flow_of(r.tid);
        const ComponentId pu = pu_of(r.cpu);
        if (flow == kNoComponent || pu == kNoComponent) continue;
        const DataPathId dp = m.add_datapath(flow, pu, DataPathType::RanOn);
        m.set_attr(dp, keys::count, static_cast<std::int64_t>(r.count));
        m.set_attr(dp, k_backend, std::string_view("cpuclock"));
        if (summary.cpuclock_period_ns > 0)
            m.set_attr(dp, k_cpu_time, static_cast<std::int64_t>(r.count * summary.cpuclock_period_ns));
        ++stats.ran_on_paths;
    }
    for (const SampledThread& t : summary.threads) {
        const ComponentId flow = flow_of(t.tid);
        if (flow == kNoComponent) continue;
        m.set_attr(flow, k_migrations, static_cast<std::int64_t>(t.migrations));
        m.set_attr(flow, k_lost, static_cast<std::int64_t>(t.lost));
    }

    // PAPI counts on the PU -> cache path of their level.
    const AttrKey k_misses = m.key(mk::misses), k_counter = m.key(mk::counter);
    for (const SampledPapi& p : summary.papi) {
        const ComponentId pu = pu_of(p.cpu);
        if (pu == kNoComponent) continue;
        for (const auto& [name, value] : p.counters) {
            // "PAPI_L2_DCM" -> level 2.
            if (name.size() < 7 || name.compare(0, 6, "PAPI_L") != 0 || name[6] < '1' || name[6] > '4') continue;
            const std::string level = std::string("L") + name[6];
            const ComponentId target = memory_access_target(m, host, pu, level, -1);
            const DataPathId dp = m.add_datapath(pu, target, DataPathType::MemoryAccess);
            m.set_attr(dp, k_backend, std::string_view("papi"));
            m.set_attr(dp, k_level, std::string_view(level));
            m.set_attr(dp, k_counter, std::string_view(name));
            m.set_attr(dp, k_misses, static_cast<std::int64_t>(value));
            m.set_attr(dp, k_tid, p.tid);
            m.set_attr(dp, k_pid, summary.pid);
            ++stats.papi_paths;
        }
    }
    return stats;
}

}  // namespace stacksage
