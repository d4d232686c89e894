// Tests of the hwloc input (parsers/hwloc_loader, parsers/hwloc_convert).
//
// Expected values come from libhwloc itself, loading the same file with the
// loader's settings, never from numbers typed in here: the loader must show
// what hwloc sees. Only facts documented in tests/data/*/SOURCES.md (CPU kinds
// of Raptor Lake, the KNL bandwidths, mirage001's GID) are written out.
#include <gtest/gtest.h>

#include <functional>
#include <hwloc.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "parsers/hwloc_convert.hpp"
#include "parsers/hwloc_loader.hpp"

namespace stacksage {
namespace {

namespace fs = std::filesystem;

const fs::path kDataDir = STACKSAGE_TEST_DATA_DIR;
const fs::path kXmlDir = kDataDir / "hwloc-xml";

std::string xml(const char* name) { return (kXmlDir / name).string(); }

// Every topology we ship: tests/data/hwloc-xml/*.xml and the per-node XMLs of
// the three clusters. *.diff.xml files are skipped: they are hwloc 1.x
// topology diffs (hunks against a reference node's XML), not topologies.
std::vector<std::string> all_topology_files() {
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(kXmlDir))
        if (entry.path().extension() == ".xml") files.push_back(entry.path().string());
    for (const auto& cluster : fs::directory_iterator(kDataDir / "network")) {
        const fs::path dir = cluster.path() / "hwloc";
        if (!fs::is_directory(dir)) continue;
        for (const auto& entry : fs::directory_iterator(dir)) {
            const std::string name = entry.path().filename().string();
            if (entry.path().extension() == ".xml" && !name.ends_with(".diff.xml"))
                files.push_back(entry.path().string());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

// ---- libhwloc's own view of a file ---------------------------------------------

// The file loaded by libhwloc directly, with the loader's settings.
class Reference {
public:
    Reference(const std::string& path, bool include_io) {
        ::setenv("HWLOC_LIBXML_IMPORT", "0", 0);
        hwloc_topology_init(&topo_);
        hwloc_topology_set_all_types_filter(topo_, HWLOC_TYPE_FILTER_KEEP_ALL);
        if (!include_io) hwloc_topology_set_io_types_filter(topo_, HWLOC_TYPE_FILTER_KEEP_NONE);
        ok_ = hwloc_topology_set_xml(topo_, path.c_str()) == 0 && hwloc_topology_load(topo_) == 0;
    }
    Reference(const Reference&) = delete;
    Reference& operator=(const Reference&) = delete;
    ~Reference() { hwloc_topology_destroy(topo_); }
    bool ok() const { return ok_; }
    hwloc_topology_t get() const { return topo_; }

    // Objects of a type over all its levels (Groups may sit at several depths,
    // where hwloc_get_nbobjs_by_type() answers -1).
    int count(hwloc_obj_type_t type) const {
        int total = 0;
        const int depth = hwloc_topology_get_depth(topo_);
        for (int d = 0; d < depth; ++d)
            if (hwloc_get_depth_type(topo_, d) == type) total += hwloc_get_nbobjs_by_depth(topo_, d);
        for (int d = HWLOC_TYPE_DEPTH_NUMANODE; d >= HWLOC_TYPE_DEPTH_MEMCACHE; --d)
            if (hwloc_get_depth_type(topo_, d) == type) total += hwloc_get_nbobjs_by_depth(topo_, d);
        return total;
    }

private:
    hwloc_topology_t topo_ = nullptr;
    bool ok_ = false;
};

Cpuset from_hwloc(hwloc_const_bitmap_t bitmap) {
    char* text = nullptr;
    hwloc_bitmap_list_asprintf(&text, bitmap);
    std::optional<Cpuset> set = Cpuset::parse_list(text ? text : "");
    std::free(text);
    return set.value_or(Cpuset{});
}

// ---- model helpers ---------------------------------------------------------------

std::size_t count(const Model& m, ComponentType type, std::string_view kind) {
    std::size_t n = 0;
    for (ComponentId id : m.components_of_type(type))
        if (m.kind(id) == kind) ++n;
    return n;
}

ComponentId the_node(const Model& m) {
    const std::vector<ComponentId> nodes = m.components_of_type(ComponentType::Node);
    return nodes.size() == 1 ? nodes[0] : kNoComponent;
}

std::string string_attr(const Model& m, ComponentId id, std::string_view key) {
    const auto k = m.find_key(key);
    if (!k) return {};
    return std::string(m.get_string(id, *k).value_or(""));
}

// The specification of the mapping, restated independently of the loader.
ComponentType expected_type(hwloc_obj_t o) {
    switch (o->type) {
    case HWLOC_OBJ_MACHINE: return ComponentType::Node;
    case HWLOC_OBJ_PACKAGE: return ComponentType::Chip;
    case HWLOC_OBJ_DIE: case HWLOC_OBJ_GROUP: return ComponentType::Subdivision;
    case HWLOC_OBJ_NUMANODE: return ComponentType::Numa;
    case HWLOC_OBJ_MEMCACHE: return ComponentType::Memory;
    case HWLOC_OBJ_CORE: return ComponentType::Core;
    case HWLOC_OBJ_PU: return ComponentType::Thread;
    case HWLOC_OBJ_OS_DEVICE:
        switch (o->attr->osdev.type) {
        case HWLOC_OBJ_OSDEV_GPU: case HWLOC_OBJ_OSDEV_COPROC:
        case HWLOC_OBJ_OSDEV_NETWORK: case HWLOC_OBJ_OSDEV_OPENFABRICS: return ComponentType::Chip;
        case HWLOC_OBJ_OSDEV_BLOCK: return ComponentType::Storage;
        default: return ComponentType::Generic;
        }
    default:
        return hwloc_obj_type_is_cache(o->type) ? ComponentType::Cache : ComponentType::Generic;
    }
}

// First difference between the model subtree at c and hwloc's subtree at o,
// or "" when they match: type, os_index, name, identity attributes, cpusets,
// and children in the order memory, normal, I/O, Misc.
std::string tree_mismatch(const Model& m, ComponentId c, hwloc_obj_t o, bool io) {
    std::ostringstream where;
    where << hwloc_obj_type_string(o->type) << " L#" << o->logical_index << ": ";
    if (m.type(c) != expected_type(o))
        return where.str() + "component type " + std::string(to_string(m.type(c)));
    const std::int64_t os = o->os_index == HWLOC_UNKNOWN_INDEX ? -1 : static_cast<std::int64_t>(o->os_index);
    if (m.os_index(c) != os) return where.str() + "os_index " + std::to_string(m.os_index(c));
    if (o->type != HWLOC_OBJ_MACHINE && m.name(c) != (o->name ? o->name : ""))
        return where.str() + "name " + std::string(m.name(c));
    if (m.get_string(c, keys::hwloc_type) != hwloc_obj_type_string(o->type)) return where.str() + "hwloc_type";
    if (m.get_int(c, keys::logical_index) != static_cast<std::int64_t>(o->logical_index))
        return where.str() + "logical_index";
    if (o->cpuset) {
        if (m.get_cpuset(c, keys::cpuset) != from_hwloc(o->cpuset)) return where.str() + "cpuset";
        if (m.get_cpuset(c, keys::complete_cpuset) != from_hwloc(o->complete_cpuset))
            return where.str() + "complete_cpuset";
    } else if (m.has_attr(c, keys::cpuset)) {
        return where.str() + "cpuset on an object without one";
    }
    if (o->nodeset && m.get_cpuset(c, keys::nodeset) != from_hwloc(o->nodeset)) return where.str() + "nodeset";

    std::vector<hwloc_obj_t> expected;
    for (hwloc_obj_t k = o->memory_first_child; k; k = k->next_sibling) expected.push_back(k);
    for (hwloc_obj_t k = o->first_child; k; k = k->next_sibling) expected.push_back(k);
    if (io)
        for (hwloc_obj_t k = o->io_first_child; k; k = k->next_sibling) expected.push_back(k);
    for (hwloc_obj_t k = o->misc_first_child; k; k = k->next_sibling) expected.push_back(k);
    const std::vector<ComponentId> children = m.children(c);
    if (children.size() != expected.size())
        return where.str() + std::to_string(children.size()) + " children, hwloc has " +
               std::to_string(expected.size());
    for (std::size_t i = 0; i < children.size(); ++i) {
        std::string below = tree_mismatch(m, children[i], expected[i], io);
        if (!below.empty()) return where.str() + "child " + std::to_string(i) + ": " + below;
    }
    return {};
}

Cpuset thread_os_indices(const Model& m) {
    Cpuset set;
    for (ComponentId t : m.components_of_type(ComponentType::Thread)) set.set(static_cast<unsigned>(m.os_index(t)));
    return set;
}

// ---- temporary files ---------------------------------------------------------------

std::string write_temp(const std::string& contents) {
    std::string pattern = testing::TempDir() + "stacksage-hwloc-XXXXXX.xml";
    const int fd = ::mkstemps(pattern.data(), 4);
    if (fd < 0) return {};
    std::size_t done = 0;
    while (done < contents.size()) {
        const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return pattern;
}

// Removed when the test ends, even when an assertion returns early.
struct TempFile {
    explicit TempFile(const std::string& contents) : path(write_temp(contents)) {}
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() { std::remove(path.c_str()); }
    std::string path;
};

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// ======================================================================
// Every shipped topology, compared with libhwloc.

class EveryTopology : public testing::TestWithParam<std::string> {};

TEST_P(EveryTopology, MatchesLibhwloc) {
    const std::string& path = GetParam();
    SCOPED_TRACE(path);
    Result<Model> loaded = load_hwloc_xml(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    Reference ref(path, /*include_io=*/false);
    ASSERT_TRUE(ref.ok());

    EXPECT_TRUE(m.check_consistency().empty());
    const std::vector<ComponentId> roots = m.roots();
    ASSERT_EQ(roots.size(), 1u);
    EXPECT_EQ(m.type(roots[0]), ComponentType::Topology);
    ASSERT_EQ(m.child_count(roots[0]), 1u);
    const ComponentId node = m.first_child(roots[0]);
    ASSERT_EQ(m.type(node), ComponentType::Node);

    EXPECT_EQ(count(m, ComponentType::Chip, "package"), ref.count(HWLOC_OBJ_PACKAGE));
    EXPECT_EQ(m.count_of_type(ComponentType::Numa), ref.count(HWLOC_OBJ_NUMANODE));
    EXPECT_EQ(m.count_of_type(ComponentType::Core), ref.count(HWLOC_OBJ_CORE));
    EXPECT_EQ(m.count_of_type(ComponentType::Thread), ref.count(HWLOC_OBJ_PU));
    EXPECT_EQ(count(m, ComponentType::Subdivision, "die"), ref.count(HWLOC_OBJ_DIE));
    EXPECT_EQ(count(m, ComponentType::Subdivision, "group"), ref.count(HWLOC_OBJ_GROUP));
    EXPECT_EQ(count(m, ComponentType::Memory, "memory-side-cache"), ref.count(HWLOC_OBJ_MEMCACHE));
    EXPECT_EQ(count(m, ComponentType::Generic, "misc"), ref.count(HWLOC_OBJ_MISC));

    // Caches per (level, instruction or not).
    std::map<std::pair<std::int64_t, bool>, int> expected_caches, got_caches;
    const std::pair<hwloc_obj_type_t, std::pair<std::int64_t, bool>> cache_types[] = {
        {HWLOC_OBJ_L1CACHE, {1, false}}, {HWLOC_OBJ_L2CACHE, {2, false}}, {HWLOC_OBJ_L3CACHE, {3, false}},
        {HWLOC_OBJ_L4CACHE, {4, false}}, {HWLOC_OBJ_L5CACHE, {5, false}}, {HWLOC_OBJ_L1ICACHE, {1, true}},
        {HWLOC_OBJ_L2ICACHE, {2, true}}, {HWLOC_OBJ_L3ICACHE, {3, true}}};
    for (const auto& [type, level] : cache_types)
        if (const int n = ref.count(type); n > 0) expected_caches[level] = n;
    for (ComponentId c : m.components_of_type(ComponentType::Cache))
        ++got_caches[{m.get_int(c, keys::cache_level).value_or(0),
                      m.get_string(c, keys::cache_kind) == std::optional<std::string_view>("instruction")}];
    EXPECT_EQ(got_caches, expected_caches);

    // Same tree, object by object (NUMA nodes leaves, memory children first).
    EXPECT_EQ(tree_mismatch(m, node, hwloc_get_root_obj(ref.get()), false), "");
    for (ComponentId numa : m.components_of_type(ComponentType::Numa)) EXPECT_EQ(m.child_count(numa), 0u);

    // PUs: the Threads are exactly the Node's cpuset; restricted ones show both sets.
    const Cpuset cpuset = m.get_cpuset(node, keys::cpuset).value_or(Cpuset{});
    const Cpuset complete = m.get_cpuset(node, keys::complete_cpuset).value_or(Cpuset{});
    EXPECT_FALSE(cpuset.empty());
    EXPECT_EQ(thread_os_indices(m), cpuset);
    EXPECT_TRUE(cpuset.is_subset_of(complete));
    const hwloc_obj_t root = hwloc_get_root_obj(ref.get());
    const bool restricted = !hwloc_bitmap_isequal(root->cpuset, root->complete_cpuset);
    EXPECT_EQ(m.get_int(node, *m.find_key(kJobRestrictedKey)), restricted ? 1 : 0);
    EXPECT_EQ(restricted, cpuset != complete);
}

std::string test_name(const testing::TestParamInfo<std::string>& info) {
    const fs::path p(info.param);
    std::string name = p.parent_path().parent_path().filename().string() + "_" + p.stem().string();
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return name + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(ShippedXml, EveryTopology, testing::ValuesIn(all_topology_files()), test_name);

TEST(HwlocLoader, FindsAllShippedTopologies) {
    // 15 in hwloc-xml (SOURCES.md), 252 full node XMLs in the cluster sets.
    EXPECT_GE(all_topology_files().size(), 15u + 252u);
}

TEST(HwlocLoader, IoObjectsMatchLibhwlocWithIncludeIo) {
    for (const char* name : {"32em64t-2n8c2t-pci-normalio.xml", "nvidiaDGX2.xml", "cxlmem+dax.v2.xml",
                             "16intel64-manyVFs.xml", "32em64t-2n8c+1mic.xml", "devel09-pci.xml"}) {
        SCOPED_TRACE(name);
        Result<Model> loaded = load_hwloc_xml(xml(name), {.include_io = true});
        ASSERT_TRUE(loaded.ok()) << loaded.error().message;
        Reference ref(xml(name), /*include_io=*/true);
        ASSERT_TRUE(ref.ok());
        EXPECT_EQ(tree_mismatch(*loaded, the_node(*loaded), hwloc_get_root_obj(ref.get()), true), "");
        EXPECT_EQ(count(*loaded, ComponentType::Generic, "pci-device"), ref.count(HWLOC_OBJ_PCI_DEVICE));
        EXPECT_TRUE(loaded->check_consistency().empty());
    }
}

// ======================================================================
// The traps of sys-sage's parser.

// No shipped XML lists a NUMA node after its cache siblings, but hwloc accepts
// it: move Raptor Lake's NUMANode element behind the L3 subtree.
TEST(HwlocLoaderTraps, NumaNodeListedAfterCachesKeepsTheTree) {
    std::string text = read_text(xml("Intel-RaptorLake-Corei7-1370P.xml"));
    const std::size_t numa_begin = text.find("      <object type=\"NUMANode\"");
    ASSERT_NE(numa_begin, std::string::npos);
    const std::size_t numa_end = text.find('\n', numa_begin) + 1;
    const std::string numa_line = text.substr(numa_begin, numa_end - numa_begin);
    ASSERT_NE(numa_line.find("/>"), std::string::npos);  // a leaf element
    text.erase(numa_begin, numa_end - numa_begin);
    const std::size_t package_close = text.rfind("    </object>\n  </object>\n");
    ASSERT_NE(package_close, std::string::npos);
    text.insert(package_close, numa_line);
    ASSERT_LT(text.find("<object type=\"L3Cache\""), text.find("<object type=\"NUMANode\""));
    const TempFile file(text);
    const std::string& path = file.path;

    Result<Model> loaded = load_hwloc_xml(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    Reference ref(path, false);
    ASSERT_TRUE(ref.ok());
    EXPECT_EQ(tree_mismatch(m, the_node(m), hwloc_get_root_obj(ref.get()), false), "");

    const std::vector<ComponentId> numas = m.components_of_type(ComponentType::Numa);
    ASSERT_EQ(numas.size(), 1u);
    EXPECT_EQ(m.child_count(numas[0]), 0u);
    const ComponentId package = m.parent(numas[0]);
    EXPECT_EQ(m.kind(package), "package");
    const std::vector<ComponentId> package_children = m.children(package);
    ASSERT_EQ(package_children.size(), 2u);
    EXPECT_EQ(package_children[0], numas[0]);  // memory children first
    EXPECT_EQ(m.kind(package_children[1]), "L3");
    EXPECT_EQ(m.descendants_of_type(package_children[1], ComponentType::Thread).size(), 20u);
    EXPECT_TRUE(m.check_consistency().empty());
}

// KNL in SNC4 + hybrid mode: each cluster's L3 (the MCDRAM cache part) holds a
// DRAM and an MCDRAM NUMA node, and the L2s stay beside them, not under them.
TEST(HwlocLoaderTraps, SeveralNumaNodesOnOneParentEachKeepTheirPlace) {
    Result<Model> loaded = load_hwloc_xml(xml("64intel64-fakeKNL-SNC4-hybrid.xml"));
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    EXPECT_EQ(count(m, ComponentType::Numa, "DRAM"), 4u);
    EXPECT_EQ(count(m, ComponentType::Numa, "MCDRAM"), 4u);
    for (ComponentId numa : m.components_of_type(ComponentType::Numa)) {
        EXPECT_EQ(m.child_count(numa), 0u);
        const ComponentId parent = m.parent(numa);
        ASSERT_EQ(m.type(parent), ComponentType::Cache);
        EXPECT_EQ(string_attr(m, parent, "subtype"), "MemorySideCache");
        const std::vector<ComponentId> siblings = m.children(parent);
        ASSERT_EQ(siblings.size(), 4u);
        EXPECT_EQ(m.kind(siblings[0]), "DRAM");
        EXPECT_EQ(m.kind(siblings[1]), "MCDRAM");
        EXPECT_EQ(m.kind(siblings[2]), "L2");
        EXPECT_EQ(m.kind(siblings[3]), "L2");
    }
    for (ComponentId core : m.components_of_type(ComponentType::Core))
        EXPECT_EQ(m.ancestor_of_type(core, ComponentType::Numa), kNoComponent);
    // NUMA memory sizes come through.
    for (ComponentId numa : m.components_of_type(ComponentType::Numa))
        EXPECT_EQ(m.get_int(numa, keys::size_bytes), m.kind(numa) == "MCDRAM" ? (2LL << 30) : (1LL << 30));
}

// Memory-side caches: hwloc chains MemCache -> NUMANode as memory children.
TEST(HwlocLoaderTraps, MemorySideCachesSitInFrontOfTheirNumaNode) {
    Result<Model> loaded = load_hwloc_xml(xml("memorysidecaches.xml"));
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    const std::vector<ComponentId> caches = m.components_of_type(ComponentType::Memory);
    ASSERT_EQ(caches.size(), 4u);
    for (ComponentId mc : caches) {
        EXPECT_EQ(m.kind(mc), "memory-side-cache");
        EXPECT_GT(m.get_int(mc, keys::size_bytes).value_or(0), 0);
        EXPECT_EQ(m.get_int(mc, keys::cache_level), 1);
        const std::vector<ComponentId> below = m.children(mc);
        ASSERT_EQ(below.size(), 1u);
        EXPECT_EQ(m.type(below[0]), ComponentType::Numa);
        const ComponentId group = m.parent(mc);
        EXPECT_EQ(m.kind(group), "group");
        const std::vector<ComponentId> beside = m.children(group);
        EXPECT_EQ(beside.front(), mc);
        EXPECT_GT(beside.size(), 1u);
        for (std::size_t i = 1; i < beside.size(); ++i) EXPECT_EQ(m.kind(beside[i]), "L2");
    }
    for (ComponentId core : m.components_of_type(ComponentType::Core)) {
        EXPECT_EQ(m.ancestor_of_type(core, ComponentType::Memory), kNoComponent);
        EXPECT_EQ(m.ancestor_of_type(core, ComponentType::Numa), kNoComponent);
    }
}

// CXL memory expanders appear as Block(CXLMem) OS devices behind their PCI
// device; the one NUMA node stays a leaf under its Package.
TEST(HwlocLoaderTraps, CxlMemoryStaysBehindItsPciDevice) {
    Result<Model> loaded = load_hwloc_xml(xml("cxlmem+dax.v2.xml"), {.include_io = true});
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    int cxl = 0;
    for (ComponentId s : m.components_of_type(ComponentType::Storage)) {
        if (string_attr(m, s, "subtype") != "CXLMem") continue;
        ++cxl;
        EXPECT_EQ(m.kind(m.parent(s)), "pci-device");
        EXPECT_EQ(m.child_count(s), 0u);
    }
    EXPECT_EQ(cxl, 4);
    const std::vector<ComponentId> numas = m.components_of_type(ComponentType::Numa);
    ASSERT_EQ(numas.size(), 1u);
    EXPECT_EQ(m.child_count(numas[0]), 0u);
    EXPECT_EQ(m.kind(m.parent(numas[0])), "package");
}

// hwloc 1.x files made NUMA nodes parents of caches and cores (sys-sage read
// them that way). hwloc writes that format from a real file; hwloc 2 reads it
// back with NUMA nodes as memory children, and so must we.
TEST(HwlocLoaderTraps, Version1XmlKeepsNumaNodesAsLeaves) {
    for (const char* name : {"emmett.xml", "devel09-pci.xml", "AMD-17h-Zen-2xEpyc-7451.xml",
                             "64intel64-fakeKNL-SNC4-hybrid.xml", "32em64t-2n8c2t-pci-normalio.xml"}) {
        SCOPED_TRACE(name);
        Reference original(xml(name), false);
        ASSERT_TRUE(original.ok());
        const TempFile file("");
        const std::string& path = file.path;
        ASSERT_EQ(hwloc_topology_export_xml(original.get(), path.c_str(), HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1), 0);
        const std::string text = read_text(path);
        ASSERT_EQ(text.find("<topology version="), std::string::npos);  // v1 has no version
        if (original.count(HWLOC_OBJ_NUMANODE) > 1) {
            // The v1 NUMANode element encloses the objects below it.
            const std::size_t numa = text.find("type=\"NUMANode\"");
            ASSERT_NE(numa, std::string::npos);
            const std::size_t tag_end = text.find('>', numa);
            ASSERT_NE(text[tag_end - 1], '/');
        }

        Result<Model> loaded = load_hwloc_xml(path);
        ASSERT_TRUE(loaded.ok()) << loaded.error().message;
        const Model& m = *loaded;
        Reference reread(path, false);
        ASSERT_TRUE(reread.ok());
        EXPECT_EQ(tree_mismatch(m, the_node(m), hwloc_get_root_obj(reread.get()), false), "");
        EXPECT_EQ(count(m, ComponentType::Chip, "package"), original.count(HWLOC_OBJ_PACKAGE));
        EXPECT_EQ(m.count_of_type(ComponentType::Numa), original.count(HWLOC_OBJ_NUMANODE));
        EXPECT_EQ(m.count_of_type(ComponentType::Core), original.count(HWLOC_OBJ_CORE));
        EXPECT_EQ(m.count_of_type(ComponentType::Thread), original.count(HWLOC_OBJ_PU));
        for (ComponentId numa : m.components_of_type(ComponentType::Numa)) EXPECT_EQ(m.child_count(numa), 0u);
        for (ComponentId core : m.components_of_type(ComponentType::Core))
            EXPECT_EQ(m.ancestor_of_type(core, ComponentType::Numa), kNoComponent);
        EXPECT_TRUE(m.check_consistency().empty());
    }
}

// ======================================================================
// Attributes.

TEST(HwlocLoader, CacheAttributes) {
    Result<Model> loaded = load_hwloc_xml(xml("Intel-RaptorLake-Corei7-1370P.xml"));
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    EXPECT_EQ(count(m, ComponentType::Cache, "L1d"), 14u);
    EXPECT_EQ(count(m, ComponentType::Cache, "L1i"), 14u);
    EXPECT_EQ(count(m, ComponentType::Cache, "L2"), 8u);
    EXPECT_EQ(count(m, ComponentType::Cache, "L3"), 1u);
    Reference ref(xml("Intel-RaptorLake-Corei7-1370P.xml"), false);
    ASSERT_TRUE(ref.ok());
    const hwloc_obj_t l3 = hwloc_get_obj_by_type(ref.get(), HWLOC_OBJ_L3CACHE, 0);
    const ComponentId c = m.components_of_type(ComponentType::Cache)[0];
    ASSERT_EQ(m.kind(c), "L3");
    EXPECT_EQ(m.get_int(c, keys::cache_level), 3);
    EXPECT_EQ(m.get_string(c, keys::cache_kind), "unified");
    EXPECT_EQ(m.get_int(c, keys::size_bytes), static_cast<std::int64_t>(l3->attr->cache.size));
    EXPECT_EQ(m.get_int(c, keys::line_size), static_cast<std::int64_t>(l3->attr->cache.linesize));
    EXPECT_EQ(m.get_int(c, keys::associativity), l3->attr->cache.associativity);
    for (ComponentId k : m.components_of_type(ComponentType::Cache))
        if (m.kind(k) == "L1i") {
            EXPECT_EQ(m.get_string(k, keys::cache_kind), "instruction");
        }
    // hwloc infos keep their own names.
    const ComponentId package = m.components_of_type(ComponentType::Chip)[0];
    EXPECT_EQ(string_attr(m, package, "CPUModel"), "13th Gen Intel(R) Core(TM) i7-1370P");
}

TEST(HwlocLoader, HostnameFromInfoOrOptions) {
    Result<Model> loaded = load_hwloc_xml(xml("emmett.xml"));
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded->get_string(the_node(*loaded), keys::hostname), "emmett");
    EXPECT_EQ(loaded->name(the_node(*loaded)), "emmett");
    Result<Model> renamed = load_hwloc_xml(xml("emmett.xml"), {.hostname = "n01"});
    ASSERT_TRUE(renamed.ok()) << renamed.error().message;
    EXPECT_EQ(renamed->get_string(the_node(*renamed), keys::hostname), "n01");
}

TEST(HwlocLoader, JobRestrictedTopologyShowsAllowedAndExistingPus) {
    const std::string path = (kDataDir / "network/hwloc-netloc-plafrim2/hwloc/miriel032.xml").string();
    Result<Model> loaded = load_hwloc_xml(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    const ComponentId node = the_node(m);
    EXPECT_EQ(m.get_int(node, *m.find_key(kJobRestrictedKey)), 1);
    const Cpuset allowed = *m.get_cpuset(node, keys::cpuset);
    const Cpuset existing = *m.get_cpuset(node, keys::complete_cpuset);
    // SOURCES.md: cpuset 0x1 of complete_cpuset 0xffffff.
    EXPECT_EQ(allowed.to_list_string(), "0");
    EXPECT_EQ(existing.to_list_string(), "0-23");
    EXPECT_TRUE(allowed.is_subset_of(existing));
    EXPECT_EQ(m.count_of_type(ComponentType::Thread), 1u);
}

TEST(HwlocLoader, IoIsOffByDefault) {
    Result<Model> loaded = load_hwloc_xml(xml("32em64t-2n8c2t-pci-normalio.xml"));
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded->count_of_type(ComponentType::Generic), 0u);
    EXPECT_EQ(loaded->count_of_type(ComponentType::Storage), 0u);
    EXPECT_EQ(count(*loaded, ComponentType::Chip, "gpu"), 0u);
    EXPECT_EQ(count(*loaded, ComponentType::Chip, "package"), loaded->count_of_type(ComponentType::Chip));
}

TEST(HwlocLoader, IncludeIoFindsGpuAndOpenFabricsNic) {
    Result<Model> loaded = load_hwloc_xml(xml("32em64t-2n8c2t-pci-normalio.xml"), {.include_io = true});
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    const auto find = [&](std::string_view kind, std::string_view name) {
        for (ComponentId c : m.components_of_type(ComponentType::Chip))
            if (m.kind(c) == kind && m.name(c) == name) return c;
        return kNoComponent;
    };
    const ComponentId hca = find("openfabrics", "mlx5_0");
    ASSERT_NE(hca, kNoComponent);
    EXPECT_EQ(m.kind(m.parent(hca)), "pci-device");
    EXPECT_FALSE(string_attr(m, m.parent(hca), "pci_busid").empty());
    EXPECT_NE(find("gpu", "card0"), kNoComponent);
    EXPECT_NE(find("coproc", "cuda0"), kNoComponent);
    EXPECT_NE(find("nic", "ib0"), kNoComponent);
    EXPECT_GT(count(m, ComponentType::Generic, "host-bridge"), 0u);
    EXPECT_GT(count(m, ComponentType::Storage, "block"), 0u);
}

TEST(HwlocLoader, OpenFabricsDeviceKeepsItsInfinibandGids) {
    const std::string path = (kDataDir / "network/hwloc-netloc-plafrim/hwloc/mirage001.xml").string();
    Result<Model> loaded = load_hwloc_xml(path, {.include_io = true});
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    ComponentId hca = kNoComponent;
    for (ComponentId c : m.components_of_type(ComponentType::Chip))
        if (m.kind(c) == "openfabrics") hca = c;
    ASSERT_NE(hca, kNoComponent);
    // SOURCES.md: matches the CA line 0x78e7d1030024a7cd, LID 0x89, of the IB dump.
    EXPECT_EQ(string_attr(m, hca, "Port1GID0"), "fe80:0000:0000:0000:78e7:d103:0024:a7cd");
    EXPECT_EQ(string_attr(m, hca, "Port1LID"), "0x89");
    EXPECT_FALSE(string_attr(m, hca, "NodeGUID").empty());
}

// ======================================================================
// CPU kinds.

TEST(HwlocLoader, RaptorLakeHasPerformanceAndEfficiencyCores) {
    Result<Model> loaded = load_hwloc_xml(xml("Intel-RaptorLake-Corei7-1370P.xml"));
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    std::map<std::string, int> cores_by_type;
    std::map<std::string, std::int64_t> kind_by_type;
    for (ComponentId core : m.components_of_type(ComponentType::Core)) {
        const std::string type(m.get_string(core, keys::core_type).value_or("?"));
        ++cores_by_type[type];
        const std::int64_t kind = m.get_int(core, keys::cpukind).value_or(-1);
        kind_by_type[type] = kind;
        EXPECT_EQ(m.get_int(core, keys::cpukind_efficiency), kind);  // ranked 0, 1
        const std::vector<ComponentId> threads = m.children(core);
        EXPECT_EQ(threads.size(), type == "IntelCore" ? 2u : 1u);
        for (ComponentId t : threads) {
            EXPECT_EQ(m.get_int(t, keys::cpukind), kind);
            EXPECT_EQ(m.get_string(t, keys::core_type), type);
        }
    }
    EXPECT_EQ(cores_by_type, (std::map<std::string, int>{{"IntelAtom", 8}, {"IntelCore", 6}}));
    EXPECT_EQ(kind_by_type["IntelAtom"], 0);  // least performant first
    EXPECT_EQ(kind_by_type["IntelCore"], 1);
}

TEST(HwlocLoader, ArrowLakeHasThreeCpuKinds) {
    Result<Model> loaded = load_hwloc_xml(xml("Intel-ArrowLake-CoreUltra5-225U.xml"));
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    Reference ref(xml("Intel-ArrowLake-CoreUltra5-225U.xml"), false);
    ASSERT_EQ(hwloc_cpukinds_get_nr(ref.get(), 0), 3);
    std::map<std::string, int> threads_by_type;
    for (ComponentId t : m.components_of_type(ComponentType::Thread)) {
        ASSERT_TRUE(m.get_int(t, keys::cpukind).has_value());
        ++threads_by_type[std::string(m.get_string(t, keys::core_type).value_or("?"))];
    }
    EXPECT_EQ(threads_by_type.size(), 3u);
    EXPECT_TRUE(threads_by_type.count("IntelLowPower"));
}

// ======================================================================
// Distances and memory attributes.

// Off-diagonal entries hwloc reports between objects of the loaded model,
// skipping zero bandwidths (no link).
int expected_distance_paths(hwloc_topology_t topo, std::string_view name) {
    unsigned nr = 0;
    hwloc_distances_get_by_name(topo, std::string(name).c_str(), &nr, nullptr, 0);
    std::vector<hwloc_distances_s*> ds(nr);
    hwloc_distances_get_by_name(topo, std::string(name).c_str(), &nr, ds.data(), 0);
    int n = 0;
    for (hwloc_distances_s* d : ds) {
        for (unsigned i = 0; i < d->nbobjs; ++i)
            for (unsigned j = 0; j < d->nbobjs; ++j)
                if (i != j && !((d->kind & HWLOC_DISTANCES_KIND_MEANS_BANDWIDTH) && d->values[i * d->nbobjs + j] == 0))
                    ++n;
        hwloc_distances_release(topo, d);
    }
    return n;
}

std::vector<DataPathId> paths_named(const Model& m, DataPathType type, AttrKey key, std::string_view name) {
    std::vector<DataPathId> out;
    m.for_each_datapath([&](DataPathId p) {
        if (m.type(p) == type && m.get_string(p, key) == name) out.push_back(p);
    });
    return out;
}

TEST(HwlocLoader, Power8DistancesBecomeDataPaths) {
    for (bool io : {false, true}) {
        SCOPED_TRACE(io ? "with I/O" : "without I/O");
        Result<Model> loaded = load_hwloc_xml(xml("power8gpudistances.xml"), {.include_io = io});
        ASSERT_TRUE(loaded.ok()) << loaded.error().message;
        const Model& m = *loaded;
        Reference ref(xml("power8gpudistances.xml"), io);
        ASSERT_TRUE(ref.ok());

        const auto numa = paths_named(m, DataPathType::NumaDistance, keys::distance_name, "NUMALatency");
        EXPECT_EQ(static_cast<int>(numa.size()), expected_distance_paths(ref.get(), "NUMALatency"));
        ASSERT_EQ(numa.size(), 2u);
        for (DataPathId p : numa) {
            EXPECT_EQ(m.type(m.source(p)), ComponentType::Numa);
            EXPECT_EQ(m.type(m.target(p)), ComponentType::Numa);
            EXPECT_EQ(m.latency(p), 40.0);
            EXPECT_EQ(m.get_int(p, keys::value), 40);
        }
        const auto nvlink = paths_named(m, DataPathType::GpuLink, keys::distance_name, "NVLinkBandwidth");
        if (io) {
            EXPECT_EQ(static_cast<int>(nvlink.size()), expected_distance_paths(ref.get(), "NVLinkBandwidth"));
            EXPECT_EQ(nvlink.size(), 12u);  // 4 GPU-GPU + 4 GPU-Package links, both ways
            for (DataPathId p : nvlink) {
                EXPECT_EQ(m.bandwidth(p), 40000.0);
                // The matrix names the NVML GPUs (nvml0..3), GPU OS devices.
                const ComponentId gpu = m.kind(m.source(p)) == "package" ? m.target(p) : m.source(p);
                EXPECT_EQ(m.kind(gpu), "gpu");
                EXPECT_TRUE(m.name(gpu).starts_with("nvml")) << m.name(gpu);
            }
        } else {
            EXPECT_TRUE(nvlink.empty());  // the GPUs are not in the model
        }
    }
}

TEST(HwlocLoader, DistancesOfOtherMachines) {
    for (const auto& [name, io] : std::vector<std::pair<const char*, bool>>{
             {"32em64t-2n8c2t-pci-normalio.xml", false}, {"nvidiaDGX2.xml", true}}) {
        SCOPED_TRACE(name);
        Result<Model> loaded = load_hwloc_xml(xml(name), {.include_io = io});
        ASSERT_TRUE(loaded.ok()) << loaded.error().message;
        Reference ref(xml(name), io);
        ASSERT_TRUE(ref.ok());
        std::size_t expected = 0;
        for (const char* matrix : {"NUMALatency", "NVLinkBandwidth"})
            expected += static_cast<std::size_t>(expected_distance_paths(ref.get(), matrix));
        std::size_t got = 0;
        loaded->for_each_datapath([&](DataPathId p) {
            if (loaded->type(p) == DataPathType::NumaDistance || loaded->type(p) == DataPathType::GpuLink) ++got;
        });
        EXPECT_GT(got, 0u);
        EXPECT_EQ(got, expected);
    }
}

TEST(HwlocLoader, KnlMemoryAttributesGoFromClusterToNumaNode) {
    Result<Model> loaded = load_hwloc_xml(xml("64intel64-fakeKNL-SNC4-hybrid.xml"));
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    const auto paths = paths_named(m, DataPathType::MemoryAttribute, keys::memattr_name, "Bandwidth");
    ASSERT_EQ(paths.size(), 8u);
    for (DataPathId p : paths) {
        const ComponentId numa = m.target(p);
        const ComponentId initiator = m.source(p);
        ASSERT_EQ(m.type(numa), ComponentType::Numa);
        // The initiator cpuset is the cluster's: its L3, which holds the node.
        EXPECT_EQ(initiator, m.parent(numa));
        EXPECT_EQ(m.cpuset(initiator), m.cpuset(numa));
        const double expected = m.kind(numa) == "MCDRAM" ? 90000.0 : 22500.0;
        EXPECT_EQ(m.bandwidth(p), expected);
        EXPECT_EQ(m.get_int(p, keys::value), static_cast<std::int64_t>(expected));
        EXPECT_EQ(m.get_string(p, keys::unit), "MiB/s");
    }
}

// ======================================================================
// The lower-level API.

TEST(HwlocConvert, AddsNodesUnderAnExistingParent) {
    Reference ref(xml("emmett.xml"), false);
    ASSERT_TRUE(ref.ok());
    Model m;
    const ComponentId run = m.add_component(ComponentType::Topology, kNoComponent, "", "run");
    Result<ComponentId> a = add_hwloc_topology(m, ref.get(), run, {.hostname = "a"});
    Result<ComponentId> b = add_hwloc_topology(m, ref.get(), run, {.hostname = "b"});
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(m.children(run), (std::vector<ComponentId>{*a, *b}));
    EXPECT_EQ(m.name(*b), "b");
    EXPECT_EQ(m.descendants_of_type(*a, ComponentType::Thread).size(), 8u);
    EXPECT_EQ(m.descendants_of_type(*b, ComponentType::Thread).size(), 8u);
    EXPECT_TRUE(m.check_consistency().empty());

    const std::size_t before = m.component_count();
    Result<ComponentId> bad = add_hwloc_topology(m, ref.get(), ComponentId{12345}, {});
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("parent"), std::string::npos);
    EXPECT_EQ(m.component_count(), before);
}

// hwloc never hands out infinite cpusets for real objects, but a bitmap can be
// infinite ("from CPU 3 on"): the conversion must clip it, not loop forever.
TEST(HwlocConvert, InfiniteBitmapsAreClipped) {
    Reference ref(xml("emmett.xml"), false);
    ASSERT_TRUE(ref.ok());
    hwloc_obj_t pu = hwloc_get_obj_by_type(ref.get(), HWLOC_OBJ_PU, 0);
    hwloc_bitmap_set_range(pu->cpuset, 3, -1);  // 0 and 3..infinity
    {
        Model m;
        Result<ComponentId> node = add_hwloc_topology(m, ref.get(), kNoComponent, {});
        ASSERT_TRUE(node.ok());
        const ComponentId first = m.descendants_of_type(*node, ComponentType::Thread).front();
        EXPECT_EQ(m.get_cpuset(first, keys::cpuset)->to_list_string(), "0,3-7");  // the machine has 0-7
    }
    // Without a finite machine set to clip to, the finite part is kept.
    hwloc_obj_t root = hwloc_get_root_obj(ref.get());
    hwloc_bitmap_fill(root->complete_cpuset);
    Model m;
    Result<ComponentId> node = add_hwloc_topology(m, ref.get(), kNoComponent, {});
    ASSERT_TRUE(node.ok());
    EXPECT_EQ(m.get_cpuset(*node, keys::complete_cpuset)->to_list_string(), "0-63");
}

// ======================================================================
// Live discovery.

TEST(HwlocLoader, DiscoversThisMachine) {
    Result<Model> loaded = discover_this_machine();
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    const Model& m = *loaded;
    EXPECT_TRUE(m.check_consistency().empty());
    const ComponentId node = the_node(m);
    ASSERT_NE(node, kNoComponent);
    const Cpuset cpuset = m.get_cpuset(node, keys::cpuset).value_or(Cpuset{});
    EXPECT_EQ(thread_os_indices(m), cpuset);

    cpu_set_t mask;
    CPU_ZERO(&mask);
    ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
    Cpuset affinity;
    for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &mask)) affinity.set(cpu);
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    // hwloc shows the cgroup's CPUs; this process may be bound to fewer.
    EXPECT_TRUE(affinity.is_subset_of(cpuset)) << affinity.to_list_string() << " vs " << cpuset.to_list_string();
    EXPECT_LE(cpuset.count(), static_cast<unsigned>(online));
    if (affinity.count() == static_cast<unsigned>(online)) {
        EXPECT_EQ(cpuset, affinity);
    }
    EXPECT_GE(m.count_of_type(ComponentType::Numa), 1u);
    EXPECT_GE(m.count_of_type(ComponentType::Core), 1u);
}

// ======================================================================
// Bad input: one clear error naming the file, nothing on stderr.

void expect_load_error(const std::string& path, std::string_view reason) {
    SCOPED_TRACE(path);
    testing::internal::CaptureStderr();
    Result<Model> loaded = load_hwloc_xml(path);
    const std::string printed = testing::internal::GetCapturedStderr();
    ASSERT_FALSE(loaded.ok());
    const std::string& message = loaded.error().message;
    EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(printed, "");
}

TEST(HwlocLoaderBadInput, MissingFile) {
    expect_load_error(testing::TempDir() + "stacksage-no-such-topology.xml", "no such file");
}

TEST(HwlocLoaderBadInput, Directory) { expect_load_error(kXmlDir.string(), "directory"); }

TEST(HwlocLoaderBadInput, EmptyFile) {
    const TempFile file("");
    const std::string& path = file.path;
    expect_load_error(path, "empty");
}

TEST(HwlocLoaderBadInput, NotXml) {
    const TempFile file("Machine (16GB total)\n  Package L#0\n");
    const std::string& path = file.path;
    expect_load_error(path, "not XML");
}

TEST(HwlocLoaderBadInput, XmlButNotATopology) {
    const TempFile file("<?xml version=\"1.0\"?>\n<graphml><graph/></graphml>\n");
    const std::string& path = file.path;
    expect_load_error(path, "not an hwloc topology");
}

TEST(HwlocLoaderBadInput, TruncatedXml) {
    const std::string text = read_text(xml("emmett.xml"));
    const TempFile file(text.substr(0, text.size() / 2));
    const std::string& path = file.path;
    expect_load_error(path, "truncated");
}

TEST(HwlocLoaderBadInput, TruncatedInsideTheProlog) {
    const TempFile file("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYS");
    const std::string& path = file.path;
    expect_load_error(path, "truncated");
}

TEST(HwlocLoaderBadInput, UnsupportedVersion) {
    std::string text = read_text(xml("emmett.xml"));
    const std::size_t at = text.find("<topology version=\"2.0\">");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 24, "<topology version=\"3.0\">");
    const TempFile file(text);
    const std::string& path = file.path;
    expect_load_error(path, "version \"3.0\" is not supported");
}

TEST(HwlocLoaderBadInput, MalformedInsideIsRefusedBeforeHwloc) {
    // Complete and well-framed, but an object element is broken in the middle:
    // hwloc's built-in reader may crash on such markup, so it never sees it.
    std::string text = read_text(xml("emmett.xml"));
    const std::size_t at = text.find("<object type=\"Core\"");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 19, "<object type=\"Core");
    const TempFile file(text);
    const std::string& path = file.path;
    SCOPED_TRACE(path);
    Result<Model> loaded = load_hwloc_xml(path);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.error().message.find("'" + path + "'"), std::string::npos) << loaded.error().message;
    EXPECT_NE(loaded.error().message.find("not valid hwloc XML (line "), std::string::npos) << loaded.error().message;
}

TEST(HwlocLoaderBadInput, WellFormedButRejectedByHwloc) {
    // Well-formed XML with a topology root that holds no machine.
    const TempFile file("<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n</topology>\n");
    Result<Model> loaded = load_hwloc_xml(file.path);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.error().message.find("'" + file.path + "'"), std::string::npos) << loaded.error().message;
    EXPECT_NE(loaded.error().message.find("hwloc rejected"), std::string::npos) << loaded.error().message;
}

// The cpusets and nodesets of every <object> are checked before hwloc reads
// them (hwloc trusts them). Accepted: what hwloc writes and reads; each one
// accepted must also be read by hwloc_bitmap_sscanf. Refused: the rest, with
// the attribute named.
TEST(HwlocLoaderBadInput, BitmapsAreCheckedAsHwlocWritesThem) {
    // The root's complete_cpuset is its cpuset: a root whose sets share no
    // CPU is refused for that (HwlocXmlWhoseRootSetsLeaveNothing).
    auto topology_with_cpuset = [](const std::string& cpuset) {
        return "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
               "  <object type=\"Machine\" os_index=\"0\" cpuset=\"" + cpuset + "\" complete_cpuset=\"" + cpuset +
               "\" nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
               "    <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\""
               " complete_nodeset=\"0x1\"/>\n"
               "  </object>\n</topology>\n";
    };
    for (const char* good : {"0x1", "0x00000003,0xffffffff", "0x1,,0x0", "0xf...f", "0xf...f,0x1",
                             "0X0000000f", "0xffffffffffffffff", "0x00ffffff,0xffff0000,0x000000ff,0xffffffff"}) {
        const Status checked = check_hwloc_xml_text(topology_with_cpuset(good), "t.xml");
        EXPECT_TRUE(checked.ok()) << good << ": " << (checked ? "" : checked.error().message);
        hwloc_bitmap_t b = hwloc_bitmap_alloc();
        EXPECT_EQ(hwloc_bitmap_sscanf(b, good), 0) << good;
        hwloc_bitmap_free(b);
    }
    for (const char* bad : {"", ",", "0x1,", "0x1,0xg", "0x11111111111111111", "0xf...f0x1", "0x1 0x2", "1-3", "-1"}) {
        const Status checked = check_hwloc_xml_text(topology_with_cpuset(bad), "t.xml");
        ASSERT_FALSE(checked.ok()) << "accepted \"" << bad << "\"";
        EXPECT_NE(checked.error().message.find("attribute cpuset=\"" + std::string(bad) + "\" is not an hwloc bitmap"),
                  std::string::npos)
            << checked.error().message;
        EXPECT_NE(checked.error().message.find("'t.xml'"), std::string::npos) << checked.error().message;
        EXPECT_NE(checked.error().message.find("(line 3, column 3"), std::string::npos) << checked.error().message;
    }
    // The whole check on a real file passes, as the load does.
    EXPECT_TRUE(check_hwloc_xml_text(read_text(xml("emmett.xml")), "emmett.xml").ok());
}

// Every set the check lets through, hwloc reads: all strings of up to six
// bytes over the bytes of hwloc's bitmaps and a few others. (A set hwloc
// cannot read is kept empty: a root whose complete_cpuset was "0x,00" made
// hwloc crash; found by fuzzing.)
TEST(HwlocLoaderBadInput, EveryBitmapTheCheckAcceptsHwlocReads) {
    const std::string alphabet = "0xf.,1g";
    std::size_t accepted = 0;
    std::string value;
    std::function<void(std::size_t)> each = [&](std::size_t length) {
        if (!value.empty()) {
            const std::string text = "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
                                     "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\""
                                     " nodeset=\"0x1\" complete_nodeset=\"0x1\">\n"
                                     "    <cpukind cpuset=\"" + value + "\"/>\n  </object>\n</topology>\n";
            if (check_hwloc_xml_text(text, "t.xml")) {
                ++accepted;
                hwloc_bitmap_t b = hwloc_bitmap_alloc();
                EXPECT_EQ(hwloc_bitmap_sscanf(b, value.c_str()), 0) << "accepted \"" << value << "\"";
                hwloc_bitmap_free(b);
            }
        }
        if (length == 0) return;
        for (char c : alphabet) {
            value.push_back(c);
            each(length - 1);
            value.pop_back();
        }
    };
    each(6);
    EXPECT_GT(accepted, 1000u);  // the check still accepts what hwloc writes ("0x1", "0xf...f", ...)
}

// PUs and NUMA nodes need an OS index hwloc can hold in a bitmap: without
// one, or with 2^32-2, hwloc allocates half a gigabyte per object.
TEST(HwlocLoaderBadInput, PusAndNumaNodesNeedASmallOsIndex) {
    const std::string original = read_text(xml("emmett.xml"));
    struct Case {
        const char* type;
        std::string replacement;
        const char* expected;
    };
    for (const Case& c : {Case{"PU", "", "an <object type=\"PU\"> without its os_index"},
                          Case{"PU", "os_index=\"4294967294\"", "an <object type=\"PU\"> with os_index=\"4294967294\""},
                          Case{"NUMANode", "os_index=\"1048576\"", "with os_index=\"1048576\" (an OS index below 1048576"},
                          Case{"NUMANode", "os_index=\"-1\"", "with os_index=\"-1\""}}) {
        std::string text = original;
        const std::size_t object = text.find(std::string("<object type=\"") + c.type + "\"");
        ASSERT_NE(object, std::string::npos) << c.type;
        const std::size_t at = text.find("os_index=\"", object);
        const std::size_t end = text.find('"', at + 10) + 1;
        text.replace(at, end - at, c.replacement);
        const Status checked = check_hwloc_xml_text(text, "t.xml");
        ASSERT_FALSE(checked.ok()) << c.replacement;
        EXPECT_NE(checked.error().message.find(c.expected), std::string::npos) << checked.error().message;
    }
    // The largest index accepted, on a NUMA node.
    std::string text = original;
    const std::size_t object = text.find("<object type=\"NUMANode\"");
    const std::size_t at = text.find("os_index=\"", object);
    text.replace(at, text.find('"', at + 10) + 1 - at, "os_index=\"1048575\"");
    EXPECT_TRUE(check_hwloc_xml_text(text, "t.xml").ok());
}

// hwloc copies a file's cache, bridge and OS device types into enum fields
// unchecked: values it does not define must be read without undefined
// behaviour (the sanitized test run halts on any) and fall back to the
// generic kinds.
TEST(HwlocLoaderBadInput, TypeNumbersHwlocDoesNotDefine) {
    auto replace_first = [](std::string text, const std::string& from, const std::string& to) {
        const std::size_t at = text.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        if (at != std::string::npos) text.replace(at, from.size(), to);
        return text;
    };
    std::string text = read_text(std::string(STACKSAGE_TEST_DATA_DIR) + "/network/hwloc-netloc-plafrim/hwloc/manumanu.xml");
    text = replace_first(text, "osdev_type=\"2\"", "osdev_type=\"8\"");
    text = replace_first(text, "bridge_type=\"1-1\"", "bridge_type=\"2-1\"");
    const std::size_t l2 = text.find("type=\"L2Cache\"");
    ASSERT_NE(l2, std::string::npos);
    const std::size_t kind = text.find("cache_type=\"0\"", l2);
    ASSERT_NE(kind, std::string::npos);
    text.replace(kind, 14, "cache_type=\"9\"");
    Result<Model> model = load_hwloc_xml_text(text, "odd-types.xml", {.include_io = true});
    ASSERT_TRUE(model) << model.error().message;
    std::size_t os_devices = 0, unified_l2 = 0;
    for (ComponentId c : model->components_of_type(ComponentType::Generic)) os_devices += model->kind(c) == "os-device";
    for (ComponentId c : model->components_of_type(ComponentType::Cache))
        unified_l2 += model->kind(c) == "L2" && model->get_string(c, keys::cache_kind) == "unified";
    EXPECT_EQ(os_devices, 1u);
    EXPECT_GE(unified_l2, 1u);
    EXPECT_TRUE(model->check_consistency().empty());
}

TEST(HwlocLoaderBadInput, UnreadableFile) {
    const TempFile file(read_text(xml("emmett.xml")));
    const std::string& path = file.path;
    ASSERT_EQ(::chmod(path.c_str(), 0), 0);
    if (::access(path.c_str(), R_OK) != 0) {
        expect_load_error(path, "ermission denied");
    } else {
        // Root reads any file: try again in a child that gave up root.
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
            Result<Model> loaded = load_hwloc_xml(path);
            const bool good = !loaded.ok() && loaded.error().message.find("'" + path + "'") != std::string::npos &&
                              loaded.error().message.find("ermission denied") != std::string::npos;
            ::_exit(good ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status));
        if (WEXITSTATUS(status) == 2) GTEST_SKIP() << "cannot drop root privileges to make the file unreadable";
        EXPECT_EQ(WEXITSTATUS(status), 0) << "unprivileged load of an unreadable file did not fail as expected";
    }
}

}  // namespace
}  // namespace stacksage
