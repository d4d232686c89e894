// The indented text form of a model, line by line, on a hand-built model.
#include <gtest/gtest.h>

#include <limits>

#include "core/model.hpp"
#include "core/model_print.hpp"

namespace stacksage {
namespace {

// A small machine shaped like an hwloc load, plus a process with two flows.
struct SmallMachine : ::testing::Test {
    Model m;
    ComponentId topo, node, numa, pkg, l2a, core0, pu0, pu1, l2b, core1, pu2, pu3, misc;
    ComponentId process, flow_main, flow_omp;

    ComponentId add(ComponentType type, ComponentId parent, std::string_view kind, std::int64_t os_index,
                    std::int64_t logical, const char* cpuset) {
        auto id = m.add_component(type, parent, kind, {}, os_index);
        if (logical >= 0) m.set_attr(id, keys::logical_index, logical);
        if (cpuset) m.set_attr(id, keys::cpuset, Cpuset::parse_list(cpuset).value());
        return id;
    }
    void cache(ComponentId id, std::int64_t size) {
        m.set_attr(id, keys::cache_level, std::int64_t{2});
        m.set_attr(id, keys::cache_kind, std::string_view("unified"));
        m.set_attr(id, keys::size_bytes, size);
    }

    void SetUp() override {
        topo = add(ComponentType::Topology, kNoComponent, {}, -1, -1, nullptr);
        node = add(ComponentType::Node, topo, {}, 0, -1, "0-3");
        m.set_name(node, "n01");
        numa = add(ComponentType::Numa, node, "DRAM", 0, 0, "0-3");
        m.set_attr(numa, keys::size_bytes, std::int64_t{16} << 30);
        pkg = add(ComponentType::Chip, node, "package", 0, 0, "0-3");
        l2a = add(ComponentType::Cache, pkg, "L2", -1, 0, "0-1");
        cache(l2a, 1310720);
        core0 = add(ComponentType::Core, l2a, {}, 0, 0, "0-1");
        pu0 = add(ComponentType::Thread, core0, {}, 0, 0, "0");
        pu1 = add(ComponentType::Thread, core0, {}, 1, 1, "1");
        l2b = add(ComponentType::Cache, pkg, "L2", -1, 1, "2-3");
        cache(l2b, 1310720);
        core1 = add(ComponentType::Core, l2b, {}, 4, 1, "2-3");
        pu2 = add(ComponentType::Thread, core1, {}, 2, 2, "2");
        pu3 = add(ComponentType::Thread, core1, {}, 3, 3, "3");
        misc = m.add_component(ComponentType::Generic, node, "misc", "ipmi");

        process = m.add_component(ComponentType::Process, kNoComponent, {}, "rank 0", 4711);
        flow_main = m.add_component(ComponentType::Flow, process, "main", {}, 4711);
        flow_omp = m.add_component(ComponentType::Flow, process, "openmp", {}, 4712);
        for (auto pu : {pu0, pu1, pu2, pu3}) m.add_datapath(flow_main, pu, DataPathType::MayRunOn);
        m.add_datapath(flow_omp, pu1, DataPathType::MayRunOn);
        m.add_datapath(flow_omp, pu1, DataPathType::RanOn);
        m.add_datapath(pu1, l2a, DataPathType::MemoryAccess);
        m.add_datapath(pu1, numa, DataPathType::MemoryAccess);
        m.add_datapath(pu1, pu0, m.datapath_type("smt-sibling"));
    }
};

TEST_F(SmallMachine, WholeTree) {
    EXPECT_EQ(print_subtree(m, topo),
              "Topology\n"
              "  Node P#0 cpuset=0-3 \"n01\"\n"
              "    Numa(DRAM) L#0 P#0 16 GiB cpuset=0-3\n"
              "    Chip(package) L#0 P#0 cpuset=0-3\n"
              "      Cache(L2) L#0 1.25 MiB cpuset=0-1\n"
              "        Core L#0 P#0 cpuset=0-1\n"
              "          Thread L#0 P#0 cpuset=0\n"
              "          Thread L#1 P#1 cpuset=1\n"
              "      Cache(L2) L#1 1.25 MiB cpuset=2-3\n"
              "        Core L#1 P#4 cpuset=2-3\n"
              "          Thread L#2 P#2 cpuset=2\n"
              "          Thread L#3 P#3 cpuset=3\n"
              "    Generic(misc) \"ipmi\"\n");
}

TEST_F(SmallMachine, FoldsAlikeSiblings) {
    PrintOptions fold;
    fold.fold_alike_siblings = true;
    EXPECT_EQ(print_subtree(m, topo, fold),
              "Topology\n"
              "  Node P#0 cpuset=0-3 \"n01\"\n"
              "    Numa(DRAM) L#0 P#0 16 GiB cpuset=0-3\n"
              "    Chip(package) L#0 P#0 cpuset=0-3\n"
              "      Cache(L2) L#0 1.25 MiB cpuset=0-1\n"
              "        Core L#0 P#0 cpuset=0-1\n"
              "          Thread L#0 P#0 cpuset=0\n"
              "          ... 1 more alike, cpuset=1\n"
              "      ... 1 more alike, cpuset=2-3\n"
              "    Generic(misc) \"ipmi\"\n");
    // A sibling of another size breaks the run.
    m.set_attr(l2b, keys::size_bytes, std::int64_t{2} << 20);
    auto text = print_subtree(m, pkg, fold);
    EXPECT_NE(text.find("Cache(L2) L#1 2 MiB cpuset=2-3"), std::string::npos) << text;
    EXPECT_EQ(text.find("1 more alike, cpuset=2-3"), std::string::npos) << text;
}

TEST_F(SmallMachine, SubtreeStartsUnindented) {
    EXPECT_EQ(print_subtree(m, l2b),
              "Cache(L2) L#1 1.25 MiB cpuset=2-3\n"
              "  Core L#1 P#4 cpuset=2-3\n"
              "    Thread L#2 P#2 cpuset=2\n"
              "    Thread L#3 P#3 cpuset=3\n");
    EXPECT_EQ(print_subtree(m, pu3), "Thread L#3 P#3 cpuset=3\n");
}

TEST_F(SmallMachine, MaxDepth) {
    PrintOptions options;
    options.max_depth = 0;
    EXPECT_EQ(print_subtree(m, node, options), "Node P#0 cpuset=0-3 \"n01\"\n");
    options.max_depth = 2;
    EXPECT_EQ(print_subtree(m, node, options),
              "Node P#0 cpuset=0-3 \"n01\"\n"
              "  Numa(DRAM) L#0 P#0 16 GiB cpuset=0-3\n"
              "  Chip(package) L#0 P#0 cpuset=0-3\n"
              "    Cache(L2) L#0 1.25 MiB cpuset=0-1\n"
              "    Cache(L2) L#1 1.25 MiB cpuset=2-3\n"
              "  Generic(misc) \"ipmi\"\n");
}

TEST_F(SmallMachine, Indent) {
    PrintOptions options;
    options.indent = 4;
    options.max_depth = 1;
    EXPECT_EQ(print_subtree(m, process, options),
              "Process P#4711 \"rank 0\"\n"
              "    Flow(main) P#4711\n"
              "    Flow(openmp) P#4712\n");
}

TEST_F(SmallMachine, Attributes) {
    m.set_attr(pu0, keys::complete_cpuset, Cpuset::parse_list("0-1").value());
    m.set_attr(pu0, keys::nodeset, Cpuset());
    m.set_attr(pu0, keys::cpukind_efficiency, 0.75);
    m.set_attr(pu0, keys::core_type, std::string_view("IntelCore"));
    PrintOptions options;
    options.show_attributes = true;
    // Attributes already on the line (logical index, size, cpuset) are not repeated.
    EXPECT_EQ(print_subtree(m, l2a, options),
              "Cache(L2) L#0 1.25 MiB cpuset=0-1 {cache_level=2, cache_kind=\"unified\"}\n"
              "  Core L#0 P#0 cpuset=0-1\n"
              "    Thread L#0 P#0 cpuset=0 {complete_cpuset=0-1, nodeset=none, cpukind_efficiency=0.75, "
              "core_type=\"IntelCore\"}\n"
              "    Thread L#1 P#1 cpuset=1\n");
}

TEST_F(SmallMachine, DataPathCountsByType) {
    PrintOptions options;
    options.show_datapaths = true;
    EXPECT_EQ(print_subtree(m, core0, options),
              "Core L#0 P#0 cpuset=0-1\n"
              "  Thread L#0 P#0 cpuset=0 [in MayRunOn:1 smt-sibling:1]\n"
              "  Thread L#1 P#1 cpuset=1 [out MemoryAccess:2 smt-sibling:1] [in MayRunOn:2 RanOn:1]\n");
    EXPECT_EQ(print_subtree(m, process, options),
              "Process P#4711 \"rank 0\"\n"
              "  Flow(main) P#4711 [out MayRunOn:4]\n"
              "  Flow(openmp) P#4712 [out MayRunOn:1 RanOn:1]\n");
}

TEST_F(SmallMachine, Summary) {
    EXPECT_EQ(component_summary(m, l2a), "Cache(L2) L#0 1.25 MiB cpuset=0-1");
    EXPECT_EQ(component_summary(m, topo), "Topology");
    auto empty = m.add_component(ComponentType::Core, pkg);
    m.set_attr(empty, keys::cpuset, Cpuset());
    EXPECT_EQ(component_summary(m, empty), "Core cpuset=none");
    // A string logical index is not hwloc's: it is not shown as L#.
    m.set_attr(empty, keys::logical_index, std::string_view("x"));
    EXPECT_EQ(component_summary(m, empty), "Core cpuset=none");
}

TEST_F(SmallMachine, DeadComponentsPrintNothing) {
    m.remove_subtree(pkg);
    EXPECT_EQ(print_subtree(m, pkg), "");
    EXPECT_EQ(print_subtree(m, ComponentId{9999}), "");
    EXPECT_EQ(component_summary(m, pu0), "");
    EXPECT_EQ(print_subtree(m, node),
              "Node P#0 cpuset=0-3 \"n01\"\n"
              "  Numa(DRAM) L#0 P#0 16 GiB cpuset=0-3\n"
              "  Generic(misc) \"ipmi\"\n");
}

TEST(HumanSize, BinaryUnits) {
    EXPECT_EQ(human_size(0), "0 B");
    EXPECT_EQ(human_size(512), "512 B");
    EXPECT_EQ(human_size(1023), "1023 B");
    EXPECT_EQ(human_size(1024), "1 KiB");
    EXPECT_EQ(human_size(1536), "1.5 KiB");
    EXPECT_EQ(human_size(49152), "48 KiB");
    EXPECT_EQ(human_size(1310720), "1.25 MiB");
    EXPECT_EQ(human_size(25165824), "24 MiB");
    EXPECT_EQ(human_size(std::int64_t{16} << 30), "16 GiB");
    EXPECT_EQ(human_size(33554051072), "31.25 GiB");
    EXPECT_EQ(human_size(std::int64_t{3} << 40), "3 TiB");
    EXPECT_EQ(human_size(-2048), "-2 KiB");
    EXPECT_EQ(human_size(std::numeric_limits<std::int64_t>::max()), "8 EiB");
}

}  // namespace
}  // namespace stacksage
