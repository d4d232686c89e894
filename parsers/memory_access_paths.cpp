#include "parsers/memory_access_paths.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "core/memory_level.hpp"
#include "core/sample_backend.hpp"
#include "parsers/code_location/attribution_resolver.hpp"

namespace stacksage {

namespace {

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

// Which (site, object) pairs of a summary keep their identity in the model:
// the kMaxAttributedPairs with the most samples. Sites are first made
// canonical by their label (several sampled instructions of one line are
// one site). Everything else is summed into paths without a site.
struct AttributionPlan {
    std::map<std::int64_t, std::int64_t> canonical_site;  // site id -> the first id with its label
    std::set<std::pair<std::int64_t, std::int64_t>> kept;  // (canonical site, object)
    std::uint64_t merged_samples = 0, merged_pairs = 0;

    std::pair<std::int64_t, std::int64_t> pair_of(const SampledAccess& a) const {
        const auto it = canonical_site.find(a.site);
        const std::int64_t site = it == canonical_site.end() ? -1 : it->second;
        const std::pair<std::int64_t, std::int64_t> p{site, a.object};
        return kept.count(p) ? p : std::pair<std::int64_t, std::int64_t>{-1, -1};
    }
};

AttributionPlan plan_attribution(const SampleSummary& summary, const AttributionResolver& r) {
    AttributionPlan plan;
    std::map<std::string, std::int64_t> by_label;
    for (const SampledSite& s : summary.sites) {
        const ResolvedSite* resolved = r.site(s.id);
        if (resolved == nullptr) continue;
        plan.canonical_site[s.id] = by_label.try_emplace(resolved->site().label(), s.id).first->second;
    }
    std::map<std::pair<std::int64_t, std::int64_t>, std::uint64_t> samples;
    for (const SampledAccess& a : summary.accesses) {
        const auto it = plan.canonical_site.find(a.site);
        const std::int64_t site = it == plan.canonical_site.end() ? -1 : it->second;
        const std::int64_t object = r.object(a.object) != nullptr ? a.object : -1;
        if (site >= 0 || object >= 0) samples[{site, object}] += a.count;
    }
    std::vector<std::pair<std::uint64_t, std::pair<std::int64_t, std::int64_t>>> ranked;
    for (const auto& [p, n] : samples) ranked.push_back({n, p});
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t i = 0; i < ranked.size(); ++i) {
        if (i < kMaxAttributedPairs) {
            plan.kept.insert(ranked[i].second);
        } else {
            plan.merged_samples += ranked[i].first;
            ++plan.merged_pairs;
        }
    }
    return plan;
}

}  // namespace

ComponentId memory_access_target(const Model& m, ComponentId host, ComponentId pu, std::string_view level,
                                 std::int64_t numa_node) {
    const std::optional<MemoryLevel> known = memory_level_from_string(level);
    const auto is = [&](MemoryLevel l) { return known == l; };
    ComponentId target = kNoComponent;
    if (is(MemoryLevel::L1) || is(MemoryLevel::FillBuffer)) target = cache_above(m, pu, 1);
    else if (is(MemoryLevel::L2)) target = cache_above(m, pu, 2);
    else if (is(MemoryLevel::L3)) target = cache_above(m, pu, 3);
    else if (is(MemoryLevel::L4)) target = cache_above(m, pu, 4);
    if (known && is_cache_level(*known)) {
        // Topologies without that cache (a VM's flat one): the nearest
        // cache there is, or the node's memory.
        if (target == kNoComponent) target = last_level_cache(m, pu);
        if (target == kNoComponent) target = local_numa(m, host, pu);
        return target != kNoComponent ? target : host;
    }
    if (is(MemoryLevel::Io) || is(MemoryLevel::Uncached)) return host;
    target = numa_by_index(m, host, numa_node);
    if (target == kNoComponent && is(MemoryLevel::LocalDram)) target = local_numa(m, host, pu);
    return target != kNoComponent ? target : host;
}

MemoryPathStats add_sample_summary(Model& m, ComponentId host, const SampleSummary& summary,
                                   const std::function<ComponentId(std::int64_t tid)>& flow_of,
                                   CodeFilesCache* code_files) {
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

    // Call sites and data objects, where the recorder attributed samples.
    std::unique_ptr<AttributionResolver> resolver;
    AttributionPlan plan;
    if (!summary.sites.empty() || !summary.objects.empty()) {
        resolver = std::make_unique<AttributionResolver>(summary, code_files);
        plan = plan_attribution(summary, *resolver);
    }

    // Sum the records per (tid, PU, target, level, backend, site, object)
    // first: one path each.
    using Key = std::tuple<std::int64_t, std::uint32_t, std::uint32_t, std::string, std::string, std::int64_t,
                           std::int64_t>;
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
        const auto [site, object] = resolver ? plan.pair_of(a) : std::pair<std::int64_t, std::int64_t>{-1, -1};
        PathSum& s = sums[Key{a.tid, index_of(pu), index_of(target), a.level, a.backend, site, object}];
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
    const RunModelKeys& k = m.intern_run_keys();
    for (const auto& [key, s] : sums) {
        const auto& [tid, pu, target, level, backend, site, object] = key;
        const DataPathId dp = m.add_datapath(ComponentId{pu}, ComponentId{target}, DataPathType::MemoryAccess);
        m.set_attr(dp, keys::count, static_cast<std::int64_t>(s.count));
        m.set(dp, k.level, std::string_view(level));
        m.set(dp, k.backend, std::string_view(backend));
        m.set(dp, k.loads, static_cast<std::int64_t>(s.loads));
        m.set(dp, k.stores, static_cast<std::int64_t>(s.stores));
        if (s.missed) m.set(dp, k.missed, static_cast<std::int64_t>(s.missed));
        m.set(dp, k.weight_sum, static_cast<std::int64_t>(s.weight_sum));
        m.set(dp, k.weight_max, static_cast<std::int64_t>(s.weight_max));
        m.set(dp, k.latency_histogram, std::string_view(histogram_text(s.histogram)));
        m.set(dp, k.numa_node, s.node_mixed ? std::int64_t{-1} : s.node);
        m.set(dp, k.remote, std::int64_t{s.remote ? 1 : 0});
        m.set(dp, k.hops, s.hops);
        m.set(dp, k.tid, tid);
        m.set(dp, k.pid, summary.pid);
        if (const ResolvedSite* at = resolver ? resolver->site(site) : nullptr) {
            m.set(dp, k.site, std::string_view(at->site().label()));
            m.set(dp, k.call_path, std::string_view(at->call_path_text()));
        }
        if (const ResolvedObject* data = resolver ? resolver->object(object) : nullptr) {
            m.set(dp, k.object, std::string_view(data->label));
            m.set(dp, k.object_kind, std::string_view(data->kind));
        }
        // The mean latency weight, where the backend measures one.
        if (s.weight_sum > 0) m.set_latency(dp, static_cast<double>(s.weight_sum) / static_cast<double>(s.count));
        ++stats.access_paths;
    }
    if (resolver) {
        for (std::string& n : resolver->notes()) stats.notes.push_back(std::move(n));
        if (plan.merged_pairs > 0)
            stats.notes.push_back(fmt::format(
                "{} samples of {} further (call site, object) pairs are summed without a site or object "
                "(the model keeps the {} pairs with the most samples per process)",
                plan.merged_samples, plan.merged_pairs, kMaxAttributedPairs));
        stats.sites = plan.canonical_site.size();
    }
    if (unplaced_cpus > 0)
        stats.notes.push_back(std::to_string(stats.samples_unplaced) +
                              " memory samples name CPUs the node's topology does not have; they are left out");

    // Where threads ran (cpu-clock).
    for (const SampledRanOn& r : summary.ran_on) {
        const ComponentId flow = flow_of(r.tid);
        const ComponentId pu = pu_of(r.cpu);
        if (flow == kNoComponent || pu == kNoComponent) continue;
        const DataPathId dp = m.add_datapath(flow, pu, DataPathType::RanOn);
        m.set_attr(dp, keys::count, static_cast<std::int64_t>(r.count));
        m.set(dp, k.backend, to_string(SampleBackend::Cpuclock));
        if (summary.cpuclock_period_ns > 0)
            m.set(dp, k.cpu_time_ns, static_cast<std::int64_t>(r.count * summary.cpuclock_period_ns));
        ++stats.ran_on_paths;
    }
    for (const SampledThread& t : summary.threads) {
        const ComponentId flow = flow_of(t.tid);
        if (flow == kNoComponent) continue;
        m.set(flow, k.migrations, static_cast<std::int64_t>(t.migrations));
        m.set(flow, k.samples_lost, static_cast<std::int64_t>(t.lost));
    }

    // PAPI counts on the PU -> cache path of their level.
    for (const SampledPapi& p : summary.papi) {
        const ComponentId pu = pu_of(p.cpu);
        if (pu == kNoComponent) continue;
        for (const auto& [name, value] : p.counters) {
            // "PAPI_L2_DCM" -> level 2.
            if (name.size() < 7 || name.compare(0, 6, "PAPI_L") != 0 || name[6] < '1' || name[6] > '4') continue;
            const std::string level = std::string("L") + name[6];
            const ComponentId target = memory_access_target(m, host, pu, level, -1);
            const DataPathId dp = m.add_datapath(pu, target, DataPathType::MemoryAccess);
            m.set(dp, k.backend, to_string(SampleBackend::Papi));
            m.set(dp, k.level, std::string_view(level));
            m.set(dp, k.counter, std::string_view(name));
            m.set(dp, k.misses, static_cast<std::int64_t>(value));
            m.set(dp, k.tid, p.tid);
            m.set(dp, k.pid, summary.pid);
            ++stats.papi_paths;
        }
    }
    return stats;
}

}  // namespace stacksage
