#include "analysis/network_footprint.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace stacksage {

namespace {
constexpr std::int32_t kUnseen = -1;
// A route longer than this loops (real fabrics are a few hops deep).
constexpr int kMaxRouteHops = 64;

bool is_switch(const Fabric& f, std::uint32_t n) { return f.nodes()[n].kind == FabricNodeKind::Switch; }

// The switch an adapter hangs from; kNoFabricNode when it hangs from none.
std::uint32_t attachment_switch(const Fabric& f, std::uint32_t adapter) {
    for (const auto* nb = f.neighbours_begin(adapter); nb != f.neighbours_end(adapter); ++nb)
        if (is_switch(f, nb->node)) return nb->node;
    return kNoFabricNode;
}

void add_pairs(std::vector<std::uint64_t>& histogram, std::size_t hops, std::uint64_t pairs) {
    if (pairs == 0) return;
    if (histogram.size() <= hops) histogram.resize(hops + 1, 0);
    histogram[hops] += pairs;
}

std::vector<std::uint32_t> marked(const std::vector<bool>& marks) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t i = 0; i < marks.size(); ++i)
        if (marks[i]) out.push_back(i);
    return out;
}

// One group of job nodes: those whose adapter hangs from the same switch
// (or, for an adapter that hangs from no switch, that adapter alone).
struct Group {
    std::uint32_t origin;   // the switch (or the adapter)
    std::uint32_t offset;   // cables from a node's adapter to origin: 1, or 0
    std::vector<std::uint32_t> adapters;  // the nodes' first adapters
};
}  // namespace

std::uint64_t NetworkFootprint::pairs() const {
    return std::accumulate(hop_pairs.begin(), hop_pairs.end(), std::uint64_t{0}) + unreachable_pairs;
}

std::size_t NetworkFootprint::max_hops() const {
    for (std::size_t h = hop_pairs.size(); h-- > 0;)
        if (hop_pairs[h] != 0) return h;
    return 0;
}

double NetworkFootprint::mean_hops() const {
    std::uint64_t n = 0;
    double sum = 0;
    for (std::size_t h = 0; h < hop_pairs.size(); ++h) {
        n += hop_pairs[h];
        sum += static_cast<double>(h) * static_cast<double>(hop_pairs[h]);
    }
    return n == 0 ? 0 : sum / static_cast<double>(n);
}

std::vector<std::uint8_t> switch_levels(const Fabric& f) {
    const auto& nodes = f.nodes();
    std::vector<std::uint8_t> level(nodes.size(), 0);
    std::vector<std::uint32_t> frontier;
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].kind != FabricNodeKind::Switch) continue;
        for (const auto* nb = f.neighbours_begin(i); nb != f.neighbours_end(i); ++nb)
            if (nodes[nb->node].kind == FabricNodeKind::Adapter) {
                level[i] = 1;
                frontier.push_back(i);
                break;
            }
    }
    std::vector<std::uint32_t> next;
    for (std::uint8_t l = 2; !frontier.empty() && l < 255; ++l) {
        next.clear();
        for (std::uint32_t s : frontier)
            for (const auto* nb = f.neighbours_begin(s); nb != f.neighbours_end(s); ++nb)
                if (is_switch(f, nb->node) && level[nb->node] == 0) {
                    level[nb->node] = l;
                    next.push_back(nb->node);
                }
        frontier.swap(next);
    }
    return level;
}

namespace {

// Leaf capacities: the adapters under each switch, indexed by fabric node.
// Sets the number of leaf switches, and capacity_known false when an
// adapter has no host name.
std::vector<std::size_t> leaf_capacities(const Fabric& f, NetworkFootprint& out) {
    const auto& nodes = f.nodes();
    std::vector<std::size_t> capacity(nodes.size(), 0);
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].kind != FabricNodeKind::Adapter) continue;
        if (!nodes[i].host.empty()) out.capacity_known = false;
        const std::uint32_t s = attachment_switch(f, i);
        if (s != kNoFabricNode) ++capacity[s];
    }
    std::size_t leaves = 0;
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
        if (capacity[i] > 0) ++leaves;
    out.leaf_switches = leaves;
    return capacity;

}

// The job's nodes, grouped by the switch they hang from (or alone, by their
// adapter, when it hangs from none).
struct JobGroups {
    std::vector<Group> groups;
    std::unordered_map<std::uint32_t, std::size_t> group_of;  // origin -> index in groups
};

JobGroups group_job_nodes(const Fabric& f, const FabricJoin& join) {
    JobGroups out;
    std::vector<Group>& groups = out.groups;
    std::unordered_map<std::uint32_t, std::size_t>& group_of = out.group_of;
    for (const JoinedNode& j : join.joined) {
        if (j.adapters.empty()) continue;
        const std::uint32_t a = j.adapters.front();
        const std::uint32_t s = attachment_switch(f, a);
        const std::uint32_t origin = s == kNoFabricNode ? a : s;
        auto [it, added] = group_of.emplace(origin, groups.size());
        if (added) groups.push_back(Group{origin, s == kNoFabricNode ? 0u : 1u, {}});
        groups[it->second].adapters.push_back(a);
    }
    return out;
}

// The leaf switches used, most job nodes first, and the fewest that could
// hold the job (largest first), when every capacity is known.
void count_leaves(const std::vector<Group>& groups, const std::vector<std::size_t>& capacity, NetworkFootprint& out) {
    for (const Group& g : groups)
        if (g.offset == 1) out.leaves_used.push_back(LeafUse{g.origin, g.adapters.size(), capacity[g.origin]});
    std::stable_sort(out.leaves_used.begin(), out.leaves_used.end(),
                     [](const LeafUse& a, const LeafUse& b) { return a.job_nodes > b.job_nodes; });
    if (out.capacity_known) {
        std::vector<std::size_t> capacities;
        for (std::size_t c : capacity)
            if (c > 0) capacities.push_back(c);
        std::sort(capacities.rbegin(), capacities.rend());
        std::size_t held = 0;
        for (std::size_t c : capacities) {
            if (held >= out.nodes) break;
            held += c;
            ++out.leaves_needed;
        }
    }

}

// Shortest paths: one search from each group's origin, over switches: the
// hop histogram, and the switches and links on a shortest path between two
// of the job's nodes.
void measure_shortest_paths(const Fabric& f, const JobGroups& job, NetworkFootprint& out) {
    const auto& nodes = f.nodes();
    const std::vector<Group>& groups = job.groups;
    const std::unordered_map<std::uint32_t, std::size_t>& group_of = job.group_of;
    std::vector<bool> switch_marks(nodes.size(), false), link_marks(f.links().size(), false);
    if (out.nodes >= 2)
        for (const Group& g : groups) {
            switch_marks[g.origin] = is_switch(f, g.origin);
            for (std::uint32_t a : g.adapters)
                if (g.offset == 1)
                    for (const auto* nb = f.neighbours_begin(a); nb != f.neighbours_end(a); ++nb)
                        if (nb->node == g.origin) link_marks[nb->link] = true;
        }
    std::vector<std::int32_t> dist(nodes.size(), kUnseen);
    std::vector<std::uint32_t> order;  // visited, in search order
    std::vector<bool> target(nodes.size(), false), useful(nodes.size(), false);
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
        const Group& g = groups[gi];
        const std::uint64_t c = g.adapters.size();
        add_pairs(out.hop_pairs, 2 * g.offset, c * (c - 1) / 2);
        if (gi + 1 == groups.size()) break;
        order.clear();
        dist[g.origin] = 0;
        order.push_back(g.origin);
        for (std::size_t at = 0; at < order.size(); ++at) {
            const std::uint32_t v = order[at];
            if (v != g.origin && !is_switch(f, v)) continue;  // adapters do not forward
            for (const auto* nb = f.neighbours_begin(v); nb != f.neighbours_end(v); ++nb) {
                if (dist[nb->node] != kUnseen) continue;
                // Adapters matter only as origins of other groups.
                if (!is_switch(f, nb->node) && !group_of.contains(nb->node)) continue;
                dist[nb->node] = dist[v] + 1;
                order.push_back(nb->node);
            }
        }
        for (std::size_t hi = gi + 1; hi < groups.size(); ++hi) {
            const Group& h = groups[hi];
            const std::uint64_t pairs = c * h.adapters.size();
            if (dist[h.origin] == kUnseen) {
                out.unreachable_pairs += pairs;
                continue;
            }
            add_pairs(out.hop_pairs, g.offset + static_cast<std::size_t>(dist[h.origin]) + h.offset, pairs);
            target[h.origin] = true;
        }
        // What lies on a shortest path to a later group: walk back from the
        // farthest, keeping nodes one step short of a useful one.
        for (std::size_t at = order.size(); at-- > 0;) {
            const std::uint32_t v = order[at];
            bool on_path = target[v];
            if (v == g.origin || is_switch(f, v))
                for (const auto* nb = f.neighbours_begin(v); nb != f.neighbours_end(v); ++nb)
                    if (dist[nb->node] == dist[v] + 1 && useful[nb->node]) {
                        on_path = true;
                        link_marks[nb->link] = true;
                    }
            useful[v] = on_path;
            if (on_path && is_switch(f, v)) switch_marks[v] = true;
        }
        for (std::uint32_t v : order) {
            dist[v] = kUnseen;
            target[v] = false;
            useful[v] = false;
        }
    }
    out.switches_crossed = marked(switch_marks);
    out.links_crossed = marked(link_marks);

}

// Real routes, where the switches' forwarding tables were read: from each
// node to each later one (routes need not be symmetric).
void follow_routes(const Fabric& f, const std::vector<Group>& groups, NetworkFootprint& out) {
    const auto& nodes = f.nodes();
    std::vector<bool> routed_switches(nodes.size(), false), routed_links(f.links().size(), false);
    std::vector<std::uint32_t> path_links;
    // Every node in one order: by group, then within it.
    std::vector<std::pair<std::size_t, std::uint32_t>> all;  // (group, adapter)
    for (std::size_t gi = 0; gi < groups.size(); ++gi)
        for (std::uint32_t a : groups[gi].adapters) all.emplace_back(gi, a);
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
        const Group& g = groups[gi];
        std::size_t first_later = 0;  // index into `all` of this group's first node
        while (first_later < all.size() && all[first_later].first != gi) ++first_later;
        for (std::size_t di = first_later; di < all.size(); ++di) {
            const auto [dg, dest] = all[di];
            // Sources: the group's nodes before dest (all of them for a later group).
            const std::uint64_t sources = dg == gi ? di - first_later : g.adapters.size();
            if (sources == 0) continue;
            const std::uint32_t lid = nodes[dest].lid;
            std::uint32_t at = g.origin;
            int hops = static_cast<int>(g.offset);
            bool arrived = g.offset == 0 && at == dest;
            path_links.clear();
            while (!arrived && hops <= kMaxRouteHops && is_switch(f, at)) {
                const ForwardingTable* t = f.forwarding_table(at);
                if (t == nullptr || lid == 0 || lid >= t->out_port.size()) break;
                const std::uint16_t port = t->out_port[lid];
                if (port == ForwardingTable::kNoRoute || port == 0) break;
                const Fabric::Neighbour* nb = f.through_port(at, port);
                if (nb == nullptr) break;
                path_links.push_back(nb->link);
                at = nb->node;
                ++hops;
                arrived = at == dest;
            }
            if (!arrived) {
                out.unrouted_pairs += sources;
                continue;
            }
            add_pairs(out.routed_hop_pairs, static_cast<std::size_t>(hops), sources);
            for (std::uint32_t l : path_links) {
                routed_links[l] = true;
                const FabricLink& link = f.links()[l];
                if (is_switch(f, link.a)) routed_switches[link.a] = true;
                if (is_switch(f, link.b)) routed_switches[link.b] = true;
            }
            if (g.offset == 1) {
                routed_switches[g.origin] = true;
                for (std::uint32_t a : g.adapters)
                    for (const auto* nb = f.neighbours_begin(a); nb != f.neighbours_end(a); ++nb)
                        if (nb->node == g.origin) routed_links[nb->link] = true;
            }
        }
    }
    out.routed_switches_crossed = marked(routed_switches);
    out.routed_links_crossed = marked(routed_links);
}

}  // namespace

NetworkFootprint compute_network_footprint(const Fabric& f, const FabricJoin& join) {
    const auto& nodes = f.nodes();
    NetworkFootprint out;
    out.nodes = join.joined.size();
    out.level = switch_levels(f);
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].kind == FabricNodeKind::Switch) out.levels = std::max<std::size_t>(out.levels, out.level[i]);
    const std::vector<std::size_t> capacity = leaf_capacities(f, out);
    const JobGroups job = group_job_nodes(f, join);
    count_leaves(job.groups, capacity, out);
    measure_shortest_paths(f, job, out);
    if (f.has_forwarding_tables() && out.nodes >= 2) follow_routes(f, job.groups, out);
    return out;
}

}  // namespace stacksage
