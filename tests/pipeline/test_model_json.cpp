// JSON export and import of whole models: exact round trips, compaction of
// removed ids, and one clear message per kind of malformed input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/model.hpp"
#include "core/model_json.hpp"

#if __has_include("parsers/hwloc_loader.hpp")
#include "parsers/hwloc_loader.hpp"
#define STACKSAGE_TEST_HAVE_HWLOC_LOADER 1
#endif

namespace stacksage {
namespace {

using nlohmann::json;

// ---- Comparing two models field by field -------------------------------------------

bool same_float(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

bool same_value(const AttributeValue& a, const AttributeValue& b) {
    if (a.index() != b.index()) return false;
    if (const double* x = std::get_if<double>(&a)) return same_float(*x, std::get<double>(b));
    return a == b;
}

std::string show(const AttributeValue& v) {
    return std::visit([](const auto& x) -> std::string {
        using V = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<V, std::string>) return '"' + x + '"';
        else if constexpr (std::is_same_v<V, Cpuset>) return "cpuset " + x.to_list_string();
        else { std::ostringstream s; s << x; return s.str(); }
    }, v);
}

template <class Id>
std::vector<std::pair<std::string, AttributeValue>> attributes(const Model& m, Id id) {
    std::vector<std::pair<std::string, AttributeValue>> out;
    m.for_each_attr(id, [&](AttrKey k, const AttributeValue& v) { out.emplace_back(std::string(m.key_name(k)), v); });
    return out;
}

template <class Id>
std::string compare_attributes(const Model& a, Id ia, const Model& b, Id ib) {
    const auto x = attributes(a, ia), y = attributes(b, ib);
    if (x.size() != y.size()) return "attribute counts " + std::to_string(x.size()) + " vs " + std::to_string(y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (x[i].first != y[i].first) return "attribute " + std::to_string(i) + ": key " + x[i].first + " vs " + y[i].first;
        if (!same_value(x[i].second, y[i].second))
            return "attribute " + x[i].first + ": " + show(x[i].second) + " vs " + show(y[i].second);
    }
    return {};
}

// Live components (and DataPaths) are matched in id order, which is what the
// JSON form's compaction does. Attribute order and child order must match.
::testing::AssertionResult same_model(const Model& a, const Model& b) {
    std::vector<ComponentId> ca, cb;
    a.for_each_component([&](ComponentId id) { ca.push_back(id); });
    b.for_each_component([&](ComponentId id) { cb.push_back(id); });
    if (ca.size() != cb.size())
        return ::testing::AssertionFailure() << "component counts " << ca.size() << " vs " << cb.size();
    std::vector<std::uint32_t> rank_a(a.component_capacity()), rank_b(b.component_capacity());
    for (std::uint32_t i = 0; i < ca.size(); ++i) rank_a[index_of(ca[i])] = rank_b[index_of(cb[i])] = i;
    auto rank = [](const std::vector<std::uint32_t>& r, ComponentId id) -> std::int64_t {
        return id == kNoComponent ? -1 : r[index_of(id)];
    };
    for (std::uint32_t i = 0; i < ca.size(); ++i) {
        const ComponentId x = ca[i], y = cb[i];
        auto fail = [&](const std::string& what) {
            return ::testing::AssertionFailure() << "component " << i << " (" << to_string(a.type(x)) << " "
                                                 << a.name(x) << "): " << what;
        };
        if (a.type(x) != b.type(y)) return fail(std::string("type ") + std::string(to_string(b.type(y))));
        if (a.kind(x) != b.kind(y)) return fail("kind " + std::string(a.kind(x)) + " vs " + std::string(b.kind(y)));
        if (a.name(x) != b.name(y)) return fail("name " + std::string(a.name(x)) + " vs " + std::string(b.name(y)));
        if (a.os_index(x) != b.os_index(y)) return fail("os_index");
        if (rank(rank_a, a.parent(x)) != rank(rank_b, b.parent(y))) return fail("parent");
        std::vector<std::int64_t> kids_a, kids_b;
        for (auto c : a.children(x)) kids_a.push_back(rank(rank_a, c));
        for (auto c : b.children(y)) kids_b.push_back(rank(rank_b, c));
        if (kids_a != kids_b) return fail("children order");
        if (auto d = compare_attributes(a, x, b, y); !d.empty()) return fail(d);
    }
    std::vector<DataPathId> da, db;
    a.for_each_datapath([&](DataPathId id) { da.push_back(id); });
    b.for_each_datapath([&](DataPathId id) { db.push_back(id); });
    if (da.size() != db.size())
        return ::testing::AssertionFailure() << "datapath counts " << da.size() << " vs " << db.size();
    for (std::size_t j = 0; j < da.size(); ++j) {
        const DataPathId x = da[j], y = db[j];
        auto fail = [&](const std::string& what) { return ::testing::AssertionFailure() << "datapath " << j << ": " << what; };
        if (rank(rank_a, a.source(x)) != rank(rank_b, b.source(y))) return fail("source");
        if (rank(rank_a, a.target(x)) != rank(rank_b, b.target(y))) return fail("target");
        if (a.datapath_type_name(a.type(x)) != b.datapath_type_name(b.type(y))) return fail("type");
        if (a.oriented(x) != b.oriented(y)) return fail("oriented");
        if (!same_float(a.bandwidth(x), b.bandwidth(y))) return fail("bandwidth");
        if (!same_float(a.latency(x), b.latency(y))) return fail("latency");
        if (auto d = compare_attributes(a, x, b, y); !d.empty()) return fail(d);
    }
    return ::testing::AssertionSuccess();
}

// Exports, imports, compares, and checks that the second export is identical.
void expect_round_trip(const Model& original) {
    const json first = model_to_json(original);
    auto imported = model_from_json(first);
    ASSERT_TRUE(imported.ok()) << imported.error().message;
    EXPECT_TRUE(imported->check_consistency().empty());
    EXPECT_TRUE(same_model(original, *imported));
    EXPECT_EQ(model_to_json(*imported).dump(), first.dump());
}

std::string temp_path(const std::string& name) {
    return (std::filesystem::path(::testing::TempDir()) / ("stacksage_model_json_" + name)).string();
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// ---- Round trips ------------------------------------------------------------------------

TEST(ModelJson, SmallModelHasTheDocumentedShape) {
    Model m;
    auto topo = m.add_component(ComponentType::Topology, kNoComponent);
    auto l2 = m.add_component(ComponentType::Cache, topo, "L2", {}, -1);
    m.set_attr(l2, keys::cache_level, std::int64_t{2});
    m.set_attr(l2, keys::cpuset, Cpuset::parse_list("0-7,16-23").value());
    auto pu = m.add_component(ComponentType::Thread, l2, {}, "cpu0", 0);
    auto dp = m.add_datapath(pu, l2, DataPathType::MemoryAccess, true, Model::kUnknown, 12.5);
    m.set_attr(dp, keys::count, std::int64_t{40});

    const json expected = json::parse(R"({
      "format": "stacksage-model",
      "version": 1,
      "datapath_types": [],
      "components": [
        {"type": "Topology", "parent": null, "children": [1]},
        {"type": "Cache", "kind": "L2", "parent": 0, "children": [2],
         "attributes": [{"key": "cache_level", "kind": "int", "value": 2},
                        {"key": "cpuset", "kind": "cpuset", "value": "0-7,16-23"}]},
        {"type": "Thread", "name": "cpu0", "os_index": 0, "parent": 1}
      ],
      "datapaths": [
        {"source": 2, "target": 1, "type": "MemoryAccess", "oriented": true,
         "bandwidth": null, "latency": 12.5,
         "attributes": [{"key": "count", "kind": "int", "value": 40}]}
      ]
    })");
    EXPECT_EQ(model_to_json(m), expected) << model_to_json(m).dump(2);
    expect_round_trip(m);
}

TEST(ModelJson, EmptyModel) {
    Model m;
    expect_round_trip(m);
    EXPECT_EQ(model_to_json(m)["components"], json::array());
}

TEST(ModelJson, EveryAttributeKindAndEdgeValue) {
    Model m;
    auto c = m.add_component(ComponentType::Numa, kNoComponent, "HBM", {}, 3);
    m.set_attr(c, m.key("int_zero"), std::int64_t{0});
    m.set_attr(c, m.key("int_negative"), std::int64_t{-42});
    m.set_attr(c, m.key("int_max"), std::numeric_limits<std::int64_t>::max());
    m.set_attr(c, m.key("int_min"), std::numeric_limits<std::int64_t>::min());
    m.set_attr(c, m.key("float"), 3.25);
    m.set_attr(c, m.key("float_integral"), 2.0);  // must come back a float, not an int
    m.set_attr(c, m.key("float_tiny"), 4.9406564584124654e-324);
    m.set_attr(c, m.key("float_third"), 1.0 / 3.0);
    m.set_attr(c, m.key("float_negative_zero"), -0.0);
    m.set_attr(c, m.key("float_nan"), std::nan(""));
    m.set_attr(c, m.key("float_inf"), std::numeric_limits<double>::infinity());
    m.set_attr(c, m.key("float_minus_inf"), -std::numeric_limits<double>::infinity());
    m.set_attr(c, m.key("string"), std::string_view("DRAM"));
    m.set_attr(c, m.key("string_empty"), std::string_view(""));
    m.set_attr(c, m.key("string_special"), std::string_view("a \"quoted\" \\ back\tslash\n\x01"));
    m.set_attr(c, keys::cpuset, Cpuset::parse_list("0-7,16-23").value());
    m.set_attr(c, keys::nodeset, Cpuset());
    m.set_attr(c, keys::complete_cpuset, Cpuset::parse_list("0,2,4,1000-1023").value());
    expect_round_trip(m);

    auto back = model_from_json(model_to_json(m));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->get_float(ComponentId{0}, back->key("float_integral")), 2.0);
    EXPECT_EQ(back->get_int(ComponentId{0}, back->key("int_min")), std::numeric_limits<std::int64_t>::min());
    EXPECT_TRUE(std::isnan(back->get_float(ComponentId{0}, back->key("float_nan")).value()));
    EXPECT_EQ(back->cpuset(ComponentId{0}).to_list_string(), "0-7,16-23");
}

TEST(ModelJson, NonFiniteNumbersAreNullOrStrings) {
    Model m;
    auto a = m.add_component(ComponentType::Thread, kNoComponent, {}, {}, 0);
    auto b = m.add_component(ComponentType::Thread, kNoComponent, {}, {}, 1);
    m.add_datapath(a, b, DataPathType::Physical, false, Model::kUnknown, Model::kUnknown);
    m.add_datapath(a, b, DataPathType::Physical, true, std::numeric_limits<double>::infinity(), 0.5);
    const json j = model_to_json(m);
    EXPECT_TRUE(j["datapaths"][0]["bandwidth"].is_null());
    EXPECT_TRUE(j["datapaths"][0]["latency"].is_null());
    EXPECT_EQ(j["datapaths"][0]["oriented"], false);
    EXPECT_EQ(j["datapaths"][1]["bandwidth"], "inf");
    expect_round_trip(m);
    auto back = model_from_json(j);
    ASSERT_TRUE(back.ok());
    EXPECT_TRUE(std::isnan(back->bandwidth(DataPathId{0})));
    EXPECT_FALSE(back->oriented(DataPathId{0}));
}

TEST(ModelJson, UserDataPathTypesKeepTheirNumbers) {
    Model m;
    const DataPathType unused = m.datapath_type("never-used");
    const DataPathType link = m.datapath_type("infinity-fabric");
    auto a = m.add_component(ComponentType::Chip, kNoComponent, "package", {}, 0);
    auto b = m.add_component(ComponentType::Chip, kNoComponent, "package", {}, 1);
    auto p = m.add_datapath(a, b, link, false, 64e9, 80.0);
    m.set_attr(p, m.key("lanes"), std::int64_t{16});
    m.add_datapath(b, a, DataPathType::Physical);

    const json j = model_to_json(m);
    EXPECT_EQ(j["datapath_types"], json::parse(R"(["never-used", "infinity-fabric"])"));
    EXPECT_EQ(j["datapaths"][0]["type"], "infinity-fabric");
    expect_round_trip(m);
    auto back = model_from_json(j);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->find_datapath_type("never-used"), unused);
    EXPECT_EQ(back->type(DataPathId{0}), link);
    EXPECT_EQ(back->datapaths(ComponentId{0}, link, Direction::Out).size(), 1u);
}

TEST(ModelJson, RemovedComponentsAndPathsAreCompacted) {
    Model m;
    auto topo = m.add_component(ComponentType::Topology, kNoComponent);
    auto gone = m.add_component(ComponentType::Chip, topo, "package", {}, 0);
    m.add_component(ComponentType::Core, gone, {}, {}, 0);
    auto pkg = m.add_component(ComponentType::Chip, topo, "package", {}, 1);
    auto core = m.add_component(ComponentType::Core, pkg, {}, {}, 1);
    auto pu = m.add_component(ComponentType::Thread, core, {}, {}, 1);
    m.add_datapath(pu, gone, DataPathType::Logical);          // dies with `gone`
    auto dead = m.add_datapath(pu, pkg, DataPathType::Logical);
    m.add_datapath(pu, core, DataPathType::RanOn);
    m.remove_subtree(gone);
    m.remove_datapath(dead);
    ASSERT_EQ(m.component_capacity(), 6u);
    ASSERT_EQ(m.component_count(), 4u);

    const json j = model_to_json(m);
    ASSERT_EQ(j["components"].size(), 4u);
    EXPECT_EQ(j["components"][0]["children"], json::parse("[1]"));
    EXPECT_EQ(j["components"][1]["os_index"], 1);  // pkg, was id 3
    EXPECT_EQ(j["components"][3]["parent"], 2);    // pu, was id 5, under core (was 4)
    ASSERT_EQ(j["datapaths"].size(), 1u);
    EXPECT_EQ(j["datapaths"][0]["source"], 3);
    EXPECT_EQ(j["datapaths"][0]["target"], 2);

    expect_round_trip(m);
    auto back = model_from_json(j);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->component_capacity(), 4u);
    EXPECT_EQ(back->datapath_capacity(), 1u);
}

TEST(ModelJson, ChildOrderSurvivesMoves) {
    // After moves, siblings are no longer in id order, and a child can have a
    // lower id than its parent: both must come back as they were.
    Model m;
    auto root = m.add_component(ComponentType::Node, kNoComponent);
    auto a = m.add_component(ComponentType::Core, root, {}, {}, 0);
    auto b = m.add_component(ComponentType::Core, root, {}, {}, 1);
    auto c = m.add_component(ComponentType::Core, root, {}, {}, 2);
    auto late_parent = m.add_component(ComponentType::Chip, root, "package");
    ASSERT_TRUE(m.move_before(c, root, a));
    ASSERT_TRUE(m.move(b, late_parent));
    ASSERT_TRUE(m.move(root, kNoComponent));
    const json j = model_to_json(m);
    EXPECT_EQ(j["components"][0]["children"], json::parse("[3, 1, 4]"));
    EXPECT_EQ(j["components"][2]["parent"], 4);
    expect_round_trip(m);
}

TEST(ModelJson, FlowSubtreeWithMayRunOnPaths) {
    Model m;
    auto topo = m.add_component(ComponentType::Topology, kNoComponent);
    auto node = m.add_component(ComponentType::Node, topo, {}, "n01", 0);
    m.set_attr(node, keys::hostname, std::string_view("n01"));
    std::vector<ComponentId> pus;
    for (int i = 0; i < 4; ++i) {
        auto pu = m.add_component(ComponentType::Thread, node, {}, {}, i);
        m.set_attr(pu, keys::cpuset, Cpuset::range(i, i));
        pus.push_back(pu);
    }
    auto process = m.add_component(ComponentType::Process, kNoComponent, "mpi-rank", "rank 0", 4711);
    m.set_attr(process, m.key("rank"), std::int64_t{0});
    auto main_flow = m.add_component(ComponentType::Flow, process, "main", {}, 4711);
    auto omp = m.add_component(ComponentType::Flow, process, "openmp", "omp worker 1", 4712);
    for (auto pu : pus) {
        auto dp = m.add_datapath(main_flow, pu, DataPathType::MayRunOn);
        m.set_attr(dp, keys::start_ns, std::int64_t{1000});
        m.set_attr(dp, keys::end_ns, std::int64_t{2000});
    }
    auto ran = m.add_datapath(omp, pus[3], DataPathType::RanOn);
    m.set_attr(ran, keys::count, std::int64_t{17});
    expect_round_trip(m);

    auto back = model_from_json(model_to_json(m));
    ASSERT_TRUE(back.ok());
    ASSERT_EQ(back->roots().size(), 2u);
    EXPECT_EQ(back->type(back->roots()[1]), ComponentType::Process);
    EXPECT_EQ(back->datapaths(main_flow, DataPathType::MayRunOn, Direction::Out).size(), 4u);
    EXPECT_EQ(back->datapaths(pus[3], DataPathType::MayRunOn, Direction::In).size(), 1u);
}

TEST(ModelJson, UnicodeAndQuotesInStrings) {
    Model m;
    auto c = m.add_component(ComponentType::Node, kNoComponent, "kïnd \"q\"", "nœud-Ω 東京 \"quoted\" \\ 🚀", 0);
    m.set_attr(c, m.key("clé \"spéciale\""), std::string_view("valeur « € »"));
    auto d = m.add_component(ComponentType::Generic, c, "misc", "tab\there", -1);
    m.add_datapath(c, d, m.datapath_type("lien «spécial» \"x\""));
    expect_round_trip(m);

    const std::string path = temp_path("unicode.json");
    ASSERT_TRUE(write_model_json(m, path).ok());
    auto back = read_model_json(path);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_TRUE(same_model(m, *back));
    EXPECT_EQ(back->name(ComponentId{0}), "nœud-Ω 東京 \"quoted\" \\ 🚀");
    // UTF-8 is written as is, not as \u escapes.
    EXPECT_NE(read_file(path).find("東京"), std::string::npos);
    std::filesystem::remove(path);
}

TEST(ModelJson, FileRoundTripIsByteIdentical) {
    Model m;
    auto topo = m.add_component(ComponentType::Topology, kNoComponent);
    auto pkg = m.add_component(ComponentType::Chip, topo, "package", {}, 0);
    m.set_attr(pkg, keys::cpuset, Cpuset::range(0, 3));
    for (int i = 0; i < 4; ++i) m.add_component(ComponentType::Thread, pkg, {}, {}, i);
    m.add_datapath(ComponentId{2}, ComponentId{3}, DataPathType::Physical, false, 1.5e10);

    const std::string first = temp_path("first.json"), second = temp_path("second.json");
    ASSERT_TRUE(write_model_json(m, first).ok());
    auto back = read_model_json(first);
    ASSERT_TRUE(back.ok()) << back.error().message;
    ASSERT_TRUE(write_model_json(*back, second).ok());
    const std::string text = read_file(first);
    EXPECT_EQ(text, read_file(second));
    // One component per line, "type" first.
    EXPECT_NE(text.find("\n    {\"type\":\"Chip\",\"kind\":\"package\",\"os_index\":0,\"parent\":0,"),
              std::string::npos) << text;
    EXPECT_TRUE(text.starts_with("{\n  \"format\": \"stacksage-model\",\n  \"version\": 1,\n")) << text;
    EXPECT_FALSE(std::filesystem::exists(first + ".tmp"));
    std::filesystem::remove(first);
    std::filesystem::remove(second);
}

TEST(ModelJson, ReaderIgnoresUnknownFieldsAndAcceptsShortForms) {
    // Optional fields may be left out; fields from later minor additions are ignored.
    auto m = model_from_json(json::parse(R"({
      "format": "stacksage-model", "version": 1, "written_by": "a future stacksage",
      "components": [
        {"type": "Node", "future_field": [1, 2]},
        {"type": "Core", "parent": 0, "os_index": -1},
        {"type": "Core", "parent": 0, "os_index": null,
         "attributes": [{"key": "cpuset", "kind": "cpuset", "value": "0x00000003"}]}
      ],
      "datapaths": [{"source": 1, "target": 2, "type": "Logical"}]
    })"));
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_EQ(m->children(ComponentId{0}).size(), 2u);
    EXPECT_EQ(m->os_index(ComponentId{1}), -1);
    EXPECT_EQ(m->cpuset(ComponentId{2}).to_list_string(), "0-1");  // hwloc masks accepted
    EXPECT_TRUE(m->oriented(DataPathId{0}));
    EXPECT_TRUE(std::isnan(m->bandwidth(DataPathId{0})));
}

// ---- Malformed input --------------------------------------------------------------------

std::string error_of(const std::string& text) {
    auto m = model_from_json(json::parse(text));
    return m.ok() ? std::string("(accepted)") : m.error().message;
}

// A valid header around the given components and datapaths.
std::string doc(const std::string& components, const std::string& datapaths = "[]",
                const std::string& types = "[]") {
    return R"({"format": "stacksage-model", "version": 1, "datapath_types": )" + types +
           R"(, "components": )" + components + R"(, "datapaths": )" + datapaths + "}";
}

const std::string kTwo = R"([{"type": "Node", "parent": null}, {"type": "Core", "parent": 0}])";

TEST(ModelJsonErrors, Header) {
    EXPECT_EQ(error_of("[]"), "not a stacksage model: the document is not a JSON object");
    EXPECT_EQ(error_of("{}"), "not a stacksage model: \"format\" is missing (expected \"stacksage-model\")");
    EXPECT_EQ(error_of(R"({"format": "hwloc", "version": 1})"),
              "not a stacksage model: \"format\" is \"hwloc\" (expected \"stacksage-model\")");
    EXPECT_EQ(error_of(R"({"format": "stacksage-model"})"), "\"version\" is missing");
    EXPECT_EQ(error_of(R"({"format": "stacksage-model", "version": "1"})"),
              "\"version\" must be a positive integer, not \"1\"");
    EXPECT_EQ(error_of(R"({"format": "stacksage-model", "version": 0})"),
              "\"version\" must be a positive integer, not 0");
    EXPECT_EQ(error_of(R"({"format": "stacksage-model", "version": 2, "components": []})"),
              "format version 2 is newer than this stacksage reads (version 1): read it with a newer stacksage");
    EXPECT_EQ(error_of(R"({"format": "stacksage-model", "version": 1})"), "\"components\" is missing");
    EXPECT_EQ(error_of(R"({"format": "stacksage-model", "version": 1, "components": {}})"),
              "\"components\" must be an array");
    EXPECT_EQ(error_of(doc("[]", "{}")), "\"datapaths\" must be an array");
}

TEST(ModelJsonErrors, Components) {
    EXPECT_EQ(error_of(doc("[42]")), "component 0: must be an object, not 42");
    EXPECT_EQ(error_of(doc(R"([{"parent": null}])")), "component 0: \"type\" is missing");
    EXPECT_EQ(error_of(doc(R"([{"type": "Socket"}])")), "component 0: unknown component type \"Socket\"");
    EXPECT_EQ(error_of(doc(R"([{"type": "thread"}])")), "component 0: unknown component type \"thread\"");
    EXPECT_EQ(error_of(doc(R"([{"type": 3}])")), "component 0: \"type\" must be a string, not 3");
    EXPECT_EQ(error_of(doc(R"([{"type": "Chip", "kind": 1}])")), "component 0: \"kind\" must be a string, not 1");
    EXPECT_EQ(error_of(doc(R"([{"type": "Chip", "name": ["x"]}])")),
              "component 0: \"name\" must be a string, not [\"x\"]");
    EXPECT_EQ(error_of(doc(R"([{"type": "Thread", "os_index": -2}])")),
              "component 0: os_index -2 out of range (0 to 2147483647, or -1 for unknown)");
    EXPECT_EQ(error_of(doc(R"([{"type": "Thread", "os_index": 5000000000}])")),
              "component 0: os_index 5000000000 out of range (0 to 2147483647, or -1 for unknown)");
    EXPECT_EQ(error_of(doc(R"([{"type": "Thread", "os_index": 1.5}])")),
              "component 0: os_index 1.5 out of range (0 to 2147483647, or -1 for unknown)");
}

TEST(ModelJsonErrors, Tree) {
    std::string many = "[{\"type\": \"Node\"}";
    for (int i = 1; i <= 12; ++i) many += R"(, {"type": "Core", "parent": )" + std::string(i == 12 ? "99" : "0") + "}";
    many += "]";
    EXPECT_EQ(error_of(doc(many)), "component 12: parent 99 out of range (the file has 13 components)");
    EXPECT_EQ(error_of(doc(R"([{"type": "Node", "parent": -1}])")),
              "component 0: parent -1 out of range (the file has 1 components)");
    EXPECT_EQ(error_of(doc(R"([{"type": "Node", "parent": "0"}])")),
              "component 0: parent must be a component index or null, not \"0\"");
    EXPECT_EQ(error_of(doc(R"([{"type": "Node", "parent": 0}])")), "component 0: is its own parent");
    EXPECT_EQ(error_of(doc(R"([{"type": "Node"}, {"type": "Core", "parent": 2}, {"type": "Core", "parent": 1}])")),
              "component 1: parent links form a cycle (1 -> 2 -> 1)");
    EXPECT_EQ(error_of(doc(R"([{"type": "Node", "children": [1, 5]}, {"type": "Core", "parent": 0}])")),
              "component 0: child 5 out of range (the file has 2 components)");
    EXPECT_EQ(error_of(doc(R"([{"type": "Node", "children": 1}, {"type": "Core", "parent": 0}])")),
              "component 0: \"children\" must be an array of component indices");
    EXPECT_EQ(error_of(doc(R"([{"type": "Node", "children": [1, 1]}, {"type": "Core", "parent": 0}])")),
              "component 0: lists child 1 twice");
    EXPECT_EQ(error_of(doc(R"([{"type": "Node", "children": [1]}, {"type": "Core"}])")),
              "component 0: lists 1 as a child, but the parent of 1 is null");
    EXPECT_EQ(error_of(doc(R"([{"type": "Node", "children": []}, {"type": "Core", "parent": 0}])")),
              "component 0: \"children\" omits 1, whose parent it is");
}

TEST(ModelJsonErrors, Attributes) {
    auto with_attr = [](const std::string& attrs) {
        return doc(R"([{"type": "Node"}, {"type": "Core", "parent": 0, "attributes": )" + attrs + "}]");
    };
    EXPECT_EQ(error_of(with_attr("{}")), "component 1: \"attributes\" must be an array");
    EXPECT_EQ(error_of(with_attr("[1]")),
              "component 1: attribute 0: must be an object with \"key\", \"kind\" and \"value\"");
    EXPECT_EQ(error_of(with_attr(R"([{"kind": "int", "value": 1}])")),
              "component 1: attribute 0: \"key\" must be a non-empty string");
    EXPECT_EQ(error_of(with_attr(R"([{"key": "x", "value": 1}])")),
              "component 1: attribute \"x\": \"kind\" is missing (int, float, string or cpuset)");
    EXPECT_EQ(error_of(with_attr(R"([{"key": "x", "kind": "int"}])")), "component 1: attribute \"x\": \"value\" is missing");
    EXPECT_EQ(error_of(with_attr(R"([{"key": "x", "kind": "bool", "value": true}])")),
              "component 1: attribute \"x\": unknown kind \"bool\" (int, float, string or cpuset)");
    EXPECT_EQ(error_of(with_attr(R"([{"key": "x", "kind": "int", "value": 1.5}])")),
              "component 1: attribute \"x\": kind int needs a 64-bit integer value, not 1.5");
    EXPECT_EQ(error_of(with_attr(R"([{"key": "x", "kind": "int", "value": 18446744073709551615}])")),
              "component 1: attribute \"x\": kind int needs a 64-bit integer value, not 18446744073709551615");
    EXPECT_EQ(error_of(with_attr(R"([{"key": "x", "kind": "float", "value": "fast"}])")),
              "component 1: attribute \"x\": a float value must be a number, null (unknown), \"inf\" or \"-inf\", not \"fast\"");
    EXPECT_EQ(error_of(with_attr(R"([{"key": "x", "kind": "string", "value": 3}])")),
              "component 1: attribute \"x\": kind string needs a string value, not 3");
    EXPECT_EQ(error_of(with_attr(R"([{"key": "cpuset", "kind": "cpuset", "value": "0-x"}])")),
              "component 1: attribute \"cpuset\": bad cpuset \"0-x\" (expected a list such as \"0-7,16-23\")");
    EXPECT_EQ(error_of(with_attr(R"([{"key": "cpuset", "kind": "cpuset", "value": "7-0"}])")),
              "component 1: attribute \"cpuset\": bad cpuset \"7-0\" (expected a list such as \"0-7,16-23\")");
    EXPECT_EQ(error_of(with_attr(R"([{"key": "cpuset", "kind": "cpuset", "value": 7}])")),
              "component 1: attribute \"cpuset\": kind cpuset needs a string such as \"0-7,16-23\", not 7");
    EXPECT_EQ(error_of(with_attr(R"([{"key": "x", "kind": "int", "value": 1}, {"key": "x", "kind": "int", "value": 2}])")),
              "component 1: attribute \"x\": set twice");
}

TEST(ModelJsonErrors, DataPaths) {
    EXPECT_EQ(error_of(doc(kTwo, "[[]]")), "datapath 0: must be an object, not []");
    EXPECT_EQ(error_of(doc(kTwo, R"([{"target": 1, "type": "Logical"}])")), "datapath 0: \"source\" is missing");
    EXPECT_EQ(error_of(doc(kTwo, R"([{"source": 0, "type": "Logical"}])")), "datapath 0: \"target\" is missing");
    EXPECT_EQ(error_of(doc(kTwo, R"([{"source": 0, "target": 1, "type": "Logical"},
                                     {"source": 99, "target": 1, "type": "Logical"}])")),
              "datapath 1: source 99 out of range (the file has 2 components)");
    EXPECT_EQ(error_of(doc(kTwo, R"([{"source": 0, "target": -3, "type": "Logical"}])")),
              "datapath 0: target -3 out of range (the file has 2 components)");
    EXPECT_EQ(error_of(doc(kTwo, R"([{"source": 0, "target": null, "type": "Logical"}])")),
              "datapath 0: target must be a component index, not null");
    EXPECT_EQ(error_of(doc(kTwo, R"([{"source": 0, "target": 1}])")), "datapath 0: \"type\" is missing");
    EXPECT_EQ(error_of(doc(kTwo, R"([{"source": 0, "target": 1, "type": "MayRunon"}])")),
              "datapath 0: unknown type \"MayRunon\" (neither built-in nor listed in \"datapath_types\")");
    EXPECT_EQ(error_of(doc(kTwo, R"([{"source": 0, "target": 1, "type": "Logical", "oriented": "yes"}])")),
              "datapath 0: \"oriented\" must be true or false, not \"yes\"");
    EXPECT_EQ(error_of(doc(kTwo, R"([{"source": 0, "target": 1, "type": "Logical", "bandwidth": "fast"}])")),
              "datapath 0: \"bandwidth\" must be a number, null (unknown), \"inf\" or \"-inf\", not \"fast\"");
    EXPECT_EQ(error_of(doc(kTwo, R"([{"source": 0, "target": 1, "type": "Logical", "latency": [1]}])")),
              "datapath 0: \"latency\" must be a number, null (unknown), \"inf\" or \"-inf\", not [1]");
    EXPECT_EQ(error_of(doc(kTwo, R"([{"source": 0, "target": 1, "type": "Logical",
                                      "attributes": [{"key": "count", "kind": "int", "value": "many"}]}])")),
              "datapath 0: attribute \"count\": kind int needs a 64-bit integer value, not \"many\"");
}

TEST(ModelJsonErrors, UserTypes) {
    EXPECT_EQ(error_of(doc(kTwo, "[]", "{}")), "\"datapath_types\" must be an array of names");
    EXPECT_EQ(error_of(doc(kTwo, "[]", R"(["ok", ""])")), "datapath_types[1]: must be a non-empty string, not \"\"");
    EXPECT_EQ(error_of(doc(kTwo, "[]", R"(["GpuLink"])")),
              "datapath_types[0]: \"GpuLink\" is a built-in type; list only user-named types");
    EXPECT_EQ(error_of(doc(kTwo, "[]", R"(["a", "b", "a"])")), "datapath_types[2]: \"a\" listed twice");
}

TEST(ModelJsonErrors, LongValuesAreShortenedInMessages) {
    const std::string long_name(100, 'x');
    EXPECT_EQ(error_of(doc(R"([{"type": "Node", "parent": ")" + long_name + "\"}]")),
              "component 0: parent must be a component index or null, not \"" + std::string(36, 'x') + "...");
}

// ---- Files --------------------------------------------------------------------------------

TEST(ModelJsonFiles, MissingFile) {
    const std::string path = temp_path("does-not-exist.json");
    auto m = read_model_json(path);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().message, path + ": cannot open: No such file or directory");
}

TEST(ModelJsonFiles, InvalidJsonGivesTheBytePosition) {
    const std::string path = temp_path("broken.json");
    std::ofstream(path) << R"({"format": "stacksage-model", "version": 1,, })";
    auto m = read_model_json(path);
    ASSERT_FALSE(m.ok());
    EXPECT_TRUE(m.error().message.starts_with(path + ": invalid JSON at byte 44: ")) << m.error().message;
    std::filesystem::remove(path);

    std::ofstream(path) << "";
    m = read_model_json(path);
    ASSERT_FALSE(m.ok());
    EXPECT_TRUE(m.error().message.starts_with(path + ": invalid JSON at byte 1: ")) << m.error().message;
    std::filesystem::remove(path);
}

TEST(ModelJsonFiles, ModelErrorsNameTheFile) {
    const std::string path = temp_path("bad-parent.json");
    std::ofstream(path) << doc(R"([{"type": "Node", "parent": 7}])");
    auto m = read_model_json(path);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().message, path + ": component 0: parent 7 out of range (the file has 1 components)");
    std::filesystem::remove(path);
}

TEST(ModelJsonFiles, UnwritablePath) {
    Model m;
    const std::string path = temp_path("no-such-dir/model.json");
    auto status = write_model_json(m, path);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().message, path + ": cannot write: No such file or directory");
}

// ---- Real topologies ----------------------------------------------------------------------

#ifdef STACKSAGE_TEST_HAVE_HWLOC_LOADER
// "An export and re-import keeps every field: cache level, chip kind, generic
// components": every test topology, with its I/O objects, through a file.
TEST(ModelJsonHwloc, EveryTestTopologyRoundTrips) {
    const std::filesystem::path dir = std::filesystem::path(STACKSAGE_TEST_DATA_DIR) / "hwloc-xml";
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.path().extension() == ".xml") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    ASSERT_FALSE(files.empty());
    // What the issue names must really have been through the round trip.
    std::size_t caches_with_level = 0, packages = 0, generics = 0;
    for (const auto& file : files) {
        SCOPED_TRACE(file.filename().string());
        for (bool include_io : {false, true}) {
            HwlocLoadOptions options;
            options.include_io = include_io;
            auto loaded = load_hwloc_xml(file.string(), options);
            ASSERT_TRUE(loaded.ok()) << loaded.error().message;
            const std::string path = temp_path(file.stem().string() + ".json");
            ASSERT_TRUE(write_model_json(*loaded, path).ok());
            auto back = read_model_json(path);
            ASSERT_TRUE(back.ok()) << back.error().message;
            EXPECT_TRUE(same_model(*loaded, *back));
            EXPECT_EQ(model_to_json(*back).dump(), model_to_json(*loaded).dump());
            std::filesystem::remove(path);
            for (auto c : back->components_of_type(ComponentType::Cache))
                caches_with_level += back->get_int(c, keys::cache_level).has_value();
            for (auto c : back->components_of_type(ComponentType::Chip))
                packages += back->kind(c) == "package";
            generics += back->count_of_type(ComponentType::Generic);
        }
    }
    EXPECT_GT(caches_with_level, 100u);
    EXPECT_GT(packages, 10u);
    EXPECT_GT(generics, 100u);
}
#endif

}  // namespace
}  // namespace stacksage
