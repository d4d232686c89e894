// Node groups: nodes with the same findings, reported once.
//
// A 1,000-node job whose nodes were all over-subscribed alike has a
// thousand findings that differ only in their figures ("for the whole run"
// here, "for 99 % of the run" there). The reports show one group instead:
// its hosts in hostlist notation ("n[0001-1000]") and each figure as the
// range it took over the group ("for 97–100 % of the run"). The analysis
// decides what a group is and writes its sentences; reports only show them.
//
// The key of a group: the node's shape (cores, CPUs and which of them the
// job could use, SMT, the topology's source, how many processes and which
// launchers ran there) and its findings, each by code, severity, check, the
// CPUs concerned, the remedy as data and the suggestion's text (the node's
// own name aside). Figures of the verdict and its detail (durations,
// shares, counts of threads) may differ; a different set of CPUs, or advice
// that differs, is another group: its advice would not fit the others.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/finding.hpp"
#include "analysis/node_load.hpp"

namespace stacksage {

struct AnalysisResult;

// The smallest and largest value of a figure over the nodes of a group.
struct FigureRange {
    std::string name;
    std::int64_t min = 0;
    std::int64_t max = 0;
};

// A finding every node of the group has, as one.
struct GroupFinding {
    FindingCode code = FindingCode::OverloadedResources;
    Severity severity = Severity::Info;
    std::string check;
    Cpuset resources;  // the same on every node of the group
    // The members' sentences as one: the group's hosts (hostlist notation)
    // where a member named its own host, and every number that differs
    // between members as "min–max"; a group of one node keeps its finding's
    // text unchanged.
    std::string message;
    std::string detail;
    std::string suggestion;
    std::vector<std::size_t> findings;  // the members' findings, indices into AnalysisResult::findings, in node order
    std::size_t flow_count_min = 0, flow_count_max = 0;
    std::vector<FigureRange> figures;  // every figure a member has, in the first member's order
};

struct NodeGroup {
    std::vector<std::size_t> nodes;          // indices into AnalysisResult::nodes, in run order
    std::string hosts;                       // the members in hostlist notation: "n[001-128,130]"
    std::optional<Severity> worst_severity;  // of the group's findings (run-wide ones not counted); nullopt: none
    std::vector<GroupFinding> findings;      // in the order of each member's findings
    // The node a report draws for the whole group (the page's topology,
    // heatmaps and load): its first member in run order, whose figures the
    // group's texts name where the members' words differ.
    std::size_t representative() const { return nodes.front(); }
};

// Groups the nodes of an analysed run (its nodes, processes, findings and
// loads). Order: the worst severity first (errors, warnings, infos, nodes
// without findings), then smaller groups first (the node that differs from
// a thousand alike stands at the top), then run order of the first member.
std::vector<NodeGroup> group_nodes(const AnalysisResult& result);

}  // namespace stacksage
