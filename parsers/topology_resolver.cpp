#include "parsers/topology_resolver.hpp"

#include <string_view>

#include "core/model_copy.hpp"
#include "core/snapshot.hpp"
#include "parsers/hwloc_loader.hpp"
#include "parsers/input_file.hpp"

namespace stacksage {

namespace {

// The topology file's text with its HostName blanked: identical hardware
// gives identical keys, so each distinct topology is loaded once.
std::string topology_cache_key(std::string text) {
    constexpr std::string_view marker = "name=\"HostName\" value=\"";
    if (std::size_t at = text.find(marker); at != std::string::npos) {
        const std::size_t begin = at + marker.size();
        const std::size_t end = text.find('"', begin);
        if (end != std::string::npos) text.erase(begin, end - begin);
    }
    return text;
}

}  // namespace

void CpusetsSeen::add(const ProcessImage& image) {
    if (image.cgroup_cpuset) allowed |= *image.cgroup_cpuset;
    if (image.online_cpus) online |= *image.online_cpus;
    for (const ThreadRecord& t : image.threads)
        for (const MaskChange& c : t.masks) masks |= c.cpuset;
}

TopologyResolver::TopologyResolver(Model& run, ComponentId run_root, std::vector<LoadNote>& notes)
    : run_(run), root_(run_root), notes_(notes), keys_(run.intern_run_keys()) {}

void TopologyResolver::note(LoadNote::Level level, std::string file, std::string message) {
    notes_.push_back({level, std::move(file), std::move(message)});
}

ComponentId TopologyResolver::graft(const ScannedHost& host) {
    // The snapshot the node's processes published, when there is a
    // usable one: mapped in microseconds, no XML parsed.
    if (usable_snapshot_file(host))
        if (auto snapshot = open_snapshot((host.path / run_layout::kTopologySnapshot).string()); snapshot) {
            ++snapshots_mapped_;
            if (ComponentId node = adopt_node(*snapshot, host); node != kNoComponent) return node;
        }
    const std::filesystem::path file = host.path / run_layout::kTopologyXml;
    const std::string rel = host.name + "/" + std::string(run_layout::kTopologyXml);
    if (!host.has_topology_file) {
        note(LoadNote::Level::Warning, rel,
             "topology.xml is missing for host " + host.name +
                 ": the node is rebuilt from the cpusets its processes had (each CPU taken as one core; "
                 "SMT, caches and NUMA unknown)");
        return kNoComponent;
    }
    // Read once, safely (a FIFO or /dev/zero there is refused, not read):
    // the text is both the cache's key and what hwloc is given.
    Result<std::string> text = read_hwloc_xml_file(file.string());
    if (!text) {
        note(LoadNote::Level::Error, rel,
             text.error().message + "; the node is rebuilt from the cpusets its processes had");
        return kNoComponent;
    }
    std::string key = topology_cache_key(*text);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
        HwlocLoadOptions o;
        o.hostname = host.name;
        Result<Model> loaded = load_hwloc_xml_text(*text, file.string(), o);
        ++topologies_loaded_;
        if (!loaded) {
            note(LoadNote::Level::Error, rel,
                 loaded.error().message + "; the node is rebuilt from the cpusets its processes had");
            cache_.emplace(std::move(key), CachedTopology{});
            return kNoComponent;
        }
        it = cache_.emplace(std::move(key), CachedTopology{std::move(loaded.value()), {}}).first;
    }
    if (!it->second.model) {
        note(LoadNote::Level::Error, rel,
             "the topology file could not be loaded (as an identical one before); the node is rebuilt from "
             "the cpusets its processes had");
        return kNoComponent;
    }
    return adopt_node(*it->second.model, host, &it->second.shared);
}

// Whether the host's topology.snap is a regular file of a sane size, to
// be mapped (open_snapshot): absent, it is not (and nothing is said);
// anything else there (a FIFO, a link to a device, a huge file) is noted
// and topology.xml read instead.
bool TopologyResolver::usable_snapshot_file(const ScannedHost& host) {
    InputFile file;
    auto problem = open_input_file((host.path / run_layout::kTopologySnapshot).string(),
                                   input_limits::kTopologySnapshot, "a topology snapshot", file);
    if (!problem) return true;
    if (problem->kind != InputProblem::Kind::Missing || problem->through_link)
        note(LoadNote::Level::Warning, host.name + "/" + std::string(run_layout::kTopologySnapshot),
             "topology.snap cannot be used: " + problem->reason + "; topology.xml is read instead");
    return false;
}

// Copies the Node of a host's topology under the run's root.
ComponentId TopologyResolver::adopt_node(const Model& topo, const ScannedHost& host, SharedSubtreeAttributes* shared) {
    const std::vector<ComponentId> nodes = topo.components_of_type(ComponentType::Node);
    if (nodes.empty()) return kNoComponent;
    CopyOptions copy;
    copy.shared = shared;
    const ComponentId node = import_subtree(run_, root_, topo, nodes.front(), copy);
    if (node == kNoComponent) return kNoComponent;
    Model& m = run_;
    m.set_name(node, host.name);
    m.set_attr(node, keys::hostname, std::string_view(host.name));
    if (m.has(node, keys_.hwloc_host_name)) m.set(node, keys_.hwloc_host_name, std::string_view(host.name));
    m.set(node, keys_.topology_source, to_string(TopologySource::Hwloc));
    return node;
}

ComponentId TopologyResolver::rebuild_from_cpusets(const std::string& host, const CpusetsSeen& seen) {
    Model& m = run_;
    Cpuset online = seen.online;
    Cpuset available = seen.allowed.empty() ? seen.masks : (seen.allowed | seen.masks);
    // The CPUs the kernel had online bound the node (when the recorder
    // read them): a mask naming others (an altered log) does not make
    // the node larger; its CPUs are noted as missing (run_loader).
    if (online.empty()) online = available;
    available &= online;
    const ComponentId node = m.add_component(ComponentType::Node, root_, {}, host, 0);
    m.set_attr(node, keys::hostname, std::string_view(host));
    m.set_attr(node, keys::cpuset, available);
    m.set_attr(node, keys::complete_cpuset, online);
    m.set(node, keys_.job_restricted, static_cast<std::int64_t>(available == online ? 0 : 1));
    m.set(node, keys_.topology_source, to_string(TopologySource::CpusetsSeen));
    std::int64_t logical = 0;
    for (unsigned cpu : available) {
        Cpuset one;
        one.set(cpu);
        const ComponentId core = m.add_component(ComponentType::Core, node, {}, {}, cpu);
        m.set_attr(core, keys::cpuset, one);
        m.set_attr(core, keys::logical_index, logical);
        const ComponentId pu = m.add_component(ComponentType::Thread, core, {}, {}, cpu);
        m.set_attr(pu, keys::cpuset, one);
        m.set_attr(pu, keys::logical_index, logical);
        ++logical;
    }
    return node;
}

}  // namespace stacksage
