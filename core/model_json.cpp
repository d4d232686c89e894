#include "core/model_json.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>

namespace stacksage {

namespace {

constexpr std::string_view kFormat = "stacksage-model";
constexpr std::uint32_t kNil = 0xffffffffu;

// ---- Writing -------------------------------------------------------------------

std::string_view attr_kind_name(const AttributeValue& v) {
    switch (static_cast<AttrKind>(v.index())) {
        case AttrKind::Int: return "int";
        case AttrKind::Float: return "float";
        case AttrKind::String: return "string";
        case AttrKind::Cpuset: return "cpuset";
    }
    return "int";
}

// JSON has no NaN or infinity: unknown (NaN) is null, infinities are strings.
template <class Json>
Json float_to_json(double v) {
    if (std::isnan(v)) return Json(nullptr);
    if (std::isinf(v)) return Json(v > 0 ? "inf" : "-inf");
    return Json(v);
}

template <class Json, class Id>
Json attributes_to_json(const Model& model, Id id) {
    Json out = Json::array();
    model.for_each_attr(id, [&](AttrKey key, const AttributeValue& value) {
        Json a = Json::object();
        a["key"] = std::string(model.key_name(key));
        a["kind"] = std::string(attr_kind_name(value));
        std::visit([&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, double>) a["value"] = float_to_json<Json>(v);
            else if constexpr (std::is_same_v<V, Cpuset>) a["value"] = v.to_list_string();
            else a["value"] = v;
        }, value);
        out.push_back(std::move(a));
    });
    return out;
}

// Built once for both json flavours: nlohmann::json for the API, ordered_json
// for files, so that a file line reads "type" first.
template <class Json>
Json to_json(const Model& model) {
    std::vector<std::uint32_t> compact(model.component_capacity(), kNil);
    std::uint32_t next = 0;
    model.for_each_component([&](ComponentId id) { compact[index_of(id)] = next++; });
    auto compact_id = [&](ComponentId id) -> Json {
        return id == kNoComponent ? Json(nullptr) : Json(compact[index_of(id)]);
    };

    Json doc = Json::object();
    doc["format"] = std::string(kFormat);
    doc["version"] = kModelJsonVersion;

    // User types in number order, so that a reader numbers them the same way.
    Json user_types = Json::array();
    for (std::uint32_t t = kFirstUserDataPathType;; ++t) {
        const std::string_view name = model.datapath_type_name(static_cast<DataPathType>(t));
        if (name.empty()) break;
        user_types.push_back(std::string(name));
    }
    doc["datapath_types"] = std::move(user_types);

    Json components = Json::array();
    model.for_each_component([&](ComponentId id) {
        Json c = Json::object();
        c["type"] = std::string(to_string(model.type(id)));
        if (!model.kind(id).empty()) c["kind"] = std::string(model.kind(id));
        if (!model.name(id).empty()) c["name"] = std::string(model.name(id));
        if (model.os_index(id) >= 0) c["os_index"] = model.os_index(id);
        c["parent"] = compact_id(model.parent(id));
        if (model.first_child(id) != kNoComponent) {
            Json children = Json::array();
            for (ComponentId ch = model.first_child(id); ch != kNoComponent; ch = model.next_sibling(ch))
                children.push_back(compact[index_of(ch)]);
            c["children"] = std::move(children);
        }
        Json attrs = attributes_to_json<Json>(model, id);
        if (!attrs.empty()) c["attributes"] = std::move(attrs);
        components.push_back(std::move(c));
    });
    doc["components"] = std::move(components);

    Json datapaths = Json::array();
    model.for_each_datapath([&](DataPathId id) {
        Json d = Json::object();
        d["source"] = compact_id(model.source(id));
        d["target"] = compact_id(model.target(id));
        d["type"] = std::string(model.datapath_type_name(model.type(id)));
        d["oriented"] = model.oriented(id);
        d["bandwidth"] = float_to_json<Json>(model.bandwidth(id));
        d["latency"] = float_to_json<Json>(model.latency(id));
        Json attrs = attributes_to_json<Json>(model, id);
        if (!attrs.empty()) d["attributes"] = std::move(attrs);
        datapaths.push_back(std::move(d));
    });
    doc["datapaths"] = std::move(datapaths);
    return doc;
}

// One component or DataPath per line: small diffs, greppable, and far shorter
// than fully indented JSON for models with thousands of PUs.
std::string format_document(const nlohmann::ordered_json& doc) {
    constexpr auto kReplace = nlohmann::ordered_json::error_handler_t::replace;
    std::string out = "{\n";
    bool first_item = true;
    for (const auto& [key, value] : doc.items()) {
        if (!first_item) out += ",\n";
        first_item = false;
        out += "  " + nlohmann::ordered_json(key).dump() + ": ";
        if (value.is_array() && !value.empty() && value.front().is_object()) {
            out += "[\n";
            for (std::size_t i = 0; i < value.size(); ++i) {
                out += "    " + value[i].dump(-1, ' ', false, kReplace);
                out += i + 1 < value.size() ? ",\n" : "\n";
            }
            out += "  ]";
        } else {
            out += value.dump(-1, ' ', false, kReplace);
        }
    }
    out += "\n}\n";
    return out;
}

// ---- Reading ---------------------------------------------------------------------

using nlohmann::json;

// Validation runs deep; one exception carries the first problem out to
// model_from_json, which turns it into an Error value.
struct Invalid {
    std::string message;
};

[[noreturn]] void fail(std::string message) { throw Invalid{std::move(message)}; }

std::string json_quoted(std::string_view s) { return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace); }

// A short description of a JSON value for messages: the value when small.
std::string describe(const json& v) {
    std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
}

struct ParsedAttr {
    std::string key;
    AttributeValue value;
};

struct ParsedComponent {
    ComponentType type = ComponentType::Generic;
    std::string kind, name;
    std::int64_t os_index = -1;
    std::uint32_t parent = kNil;
    bool has_children = false;
    std::vector<std::uint32_t> children;
    std::vector<ParsedAttr> attrs;
};

struct ParsedDataPath {
    std::uint32_t source = 0, target = 0;
    DataPathType type = DataPathType::Logical;
    bool oriented = true;
    double bandwidth = Model::kUnknown, latency = Model::kUnknown;
    std::vector<ParsedAttr> attrs;
};

const json* member(const json& object, const char* name) {
    auto it = object.find(name);
    return it == object.end() ? nullptr : &*it;
}

std::optional<std::string> optional_string(const json& object, const char* name, const std::string& where) {
    const json* v = member(object, name);
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_string()) fail(fmt::format("{}: \"{}\" must be a string, not {}", where, name, describe(*v)));
    return v->get<std::string>();
}

// A JSON integer within [lo, hi], or nullopt when it is not an integer.
std::optional<std::int64_t> as_int64(const json& v) {
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
        return static_cast<std::int64_t>(u);
    }
    if (v.is_number_integer()) return v.get<std::int64_t>();
    return std::nullopt;
}

// A component index of the file, or kNil for null.
std::uint32_t component_ref(const json& v, std::size_t count, const std::string& where, const char* what,
                            bool null_allowed) {
    if (v.is_null() && null_allowed) return kNil;
    const auto i = as_int64(v);
    if (!i) fail(fmt::format("{}: {} must be a component index{}, not {}", where, what,
                             null_allowed ? " or null" : "", describe(v)));
    if (*i < 0 || static_cast<std::uint64_t>(*i) >= count)
        fail(fmt::format("{}: {} {} out of range (the file has {} components)", where, what, *i, count));
    return static_cast<std::uint32_t>(*i);
}

double float_from_json(const json& v, const std::string& where, const std::string& what) {
    if (v.is_null()) return Model::kUnknown;
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    fail(fmt::format("{}: {} must be a number, null (unknown), \"inf\" or \"-inf\", not {}", where, what,
                     describe(v)));
}

std::vector<ParsedAttr> parse_attributes(const json& owner, const std::string& where) {
    std::vector<ParsedAttr> out;
    const json* list = member(owner, "attributes");
    if (!list || list->is_null()) return out;
    if (!list->is_array()) fail(fmt::format("{}: \"attributes\" must be an array", where));
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const json& a = (*list)[i];
        std::string at = fmt::format("{}: attribute {}", where, i);
        if (!a.is_object()) fail(fmt::format("{}: must be an object with \"key\", \"kind\" and \"value\"", at));
        const auto key = optional_string(a, "key", at);
        if (!key || key->empty()) fail(fmt::format("{}: \"key\" must be a non-empty string", at));
        at = fmt::format("{}: attribute {}", where, json_quoted(*key));
        if (!seen.insert(*key).second) fail(fmt::format("{}: set twice", at));
        const auto kind = optional_string(a, "kind", at);
        const json* value = member(a, "value");
        if (!kind) fail(fmt::format("{}: \"kind\" is missing (int, float, string or cpuset)", at));
        if (!value) fail(fmt::format("{}: \"value\" is missing", at));

        ParsedAttr p{*key, std::int64_t{0}};
        if (*kind == "int") {
            const auto i = as_int64(*value);
            if (!i) fail(fmt::format("{}: kind int needs a 64-bit integer value, not {}", at, describe(*value)));
            p.value = *i;
        } else if (*kind == "float") {
            p.value = float_from_json(*value, at, "a float value");
        } else if (*kind == "string") {
            if (!value->is_string()) fail(fmt::format("{}: kind string needs a string value, not {}", at, describe(*value)));
            p.value = value->get<std::string>();
        } else if (*kind == "cpuset") {
            if (!value->is_string())
                fail(fmt::format("{}: kind cpuset needs a string such as \"0-7,16-23\", not {}", at, describe(*value)));
            auto set = Cpuset::parse(value->get_ref<const std::string&>());
            if (!set) fail(fmt::format("{}: bad cpuset {} (expected a list such as \"0-7,16-23\")", at, describe(*value)));
            p.value = std::move(*set);
        } else {
            fail(fmt::format("{}: unknown kind {} (int, float, string or cpuset)", at, json_quoted(*kind)));
        }
        out.push_back(std::move(p));
    }
    return out;
}

void check_header(const json& doc) {
    if (!doc.is_object()) fail("not a stacksage model: the document is not a JSON object");
    const json* format = member(doc, "format");
    if (!format) fail(fmt::format("not a stacksage model: \"format\" is missing (expected \"{}\")", kFormat));
    if (!format->is_string() || format->get_ref<const std::string&>() != kFormat)
        fail(fmt::format("not a stacksage model: \"format\" is {} (expected \"{}\")", describe(*format), kFormat));
    const json* version = member(doc, "version");
    if (!version) fail("\"version\" is missing");
    const auto v = as_int64(*version);
    if (!v || *v < 1) fail(fmt::format("\"version\" must be a positive integer, not {}", describe(*version)));
    if (*v > kModelJsonVersion)
        fail(fmt::format("format version {} is newer than this stacksage reads (version {}): "
                         "read it with a newer stacksage",
                         *v, kModelJsonVersion));
}

std::vector<std::string> parse_user_types(const json& doc) {
    std::vector<std::string> out;
    const json* list = member(doc, "datapath_types");
    if (!list || list->is_null()) return out;
    if (!list->is_array()) fail("\"datapath_types\" must be an array of names");
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i < list->size(); ++i) {
        const json& t = (*list)[i];
        if (!t.is_string() || t.get_ref<const std::string&>().empty())
            fail(fmt::format("datapath_types[{}]: must be a non-empty string, not {}", i, describe(t)));
        const auto& name = t.get_ref<const std::string&>();
        if (builtin_datapath_type_from_name(name))
            fail(fmt::format("datapath_types[{}]: {} is a built-in type; list only user-named types", i, json_quoted(name)));
        if (!seen.insert(name).second) fail(fmt::format("datapath_types[{}]: {} listed twice", i, json_quoted(name)));
        out.push_back(name);
    }
    return out;
}

ParsedComponent parse_component(const json& c, std::size_t index, std::size_t count) {
    const std::string where = fmt::format("component {}", index);
    if (!c.is_object()) fail(fmt::format("{}: must be an object, not {}", where, describe(c)));
    ParsedComponent p;
    const auto type = optional_string(c, "type", where);
    if (!type) fail(fmt::format("{}: \"type\" is missing", where));
    const auto t = component_type_from_string(*type);
    if (!t) fail(fmt::format("{}: unknown component type {}", where, json_quoted(*type)));
    p.type = *t;
    p.kind = optional_string(c, "kind", where).value_or("");
    p.name = optional_string(c, "name", where).value_or("");
    if (const json* os = member(c, "os_index"); os && !os->is_null()) {
        const auto i = as_int64(*os);
        // The model stores 32 bits; -1 is "unknown", as in the API.
        if (!i || *i < -1 || *i > std::numeric_limits<std::int32_t>::max())
            fail(fmt::format("{}: os_index {} out of range (0 to {}, or -1 for unknown)", where, describe(*os),
                             std::numeric_limits<std::int32_t>::max()));
        p.os_index = *i;
    }
    if (const json* parent = member(c, "parent"))
        p.parent = component_ref(*parent, count, where, "parent", true);
    if (p.parent == index) fail(fmt::format("{}: is its own parent", where));
    if (const json* children = member(c, "children"); children && !children->is_null()) {
        if (!children->is_array()) fail(fmt::format("{}: \"children\" must be an array of component indices", where));
        p.has_children = true;
        for (const json& ch : *children) p.children.push_back(component_ref(ch, count, where, "child", false));
    }
    p.attrs = parse_attributes(c, where);
    return p;
}

// Fails on the first cycle in the parent links, naming the components on it.
void check_no_cycles(const std::vector<ParsedComponent>& components) {
    enum : std::uint8_t { Unvisited, OnPath, Done };
    std::vector<std::uint8_t> state(components.size(), Unvisited);
    std::vector<std::uint32_t> path;
    for (std::uint32_t start = 0; start < components.size(); ++start) {
        path.clear();
        std::uint32_t at = start;
        while (at != kNil && state[at] == Unvisited) {
            state[at] = OnPath;
            path.push_back(at);
            at = components[at].parent;
        }
        if (at != kNil && state[at] == OnPath) {
            std::string chain;
            auto it = std::find(path.begin(), path.end(), at);
            for (std::size_t n = 0; it != path.end(); ++it, ++n) {
                if (n == 8) { chain += " -> ..."; break; }
                chain += fmt::format("{} -> ", *it);
            }
            if (!chain.ends_with("...")) chain += std::to_string(at);
            fail(fmt::format("component {}: parent links form a cycle ({})", at, chain));
        }
        for (auto p : path) state[p] = Done;
    }
}

// The children of each component in order: the file's "children" list where
// given (checked against the parent links), otherwise index order.
std::vector<std::vector<std::uint32_t>> ordered_children(const std::vector<ParsedComponent>& components) {
    const auto n = components.size();
    std::vector<std::vector<std::uint32_t>> by_parent(n);
    for (std::uint32_t i = 0; i < n; ++i)
        if (components[i].parent != kNil) by_parent[components[i].parent].push_back(i);
    std::vector<std::uint8_t> listed(n, 0);
    for (std::uint32_t p = 0; p < n; ++p) {
        const auto& c = components[p];
        if (!c.has_children) continue;
        for (auto ch : c.children) {
            if (components[ch].parent != p)
                fail(fmt::format("component {}: lists {} as a child, but the parent of {} is {}", p, ch, ch,
                                 components[ch].parent == kNil ? std::string("null")
                                                                : std::to_string(components[ch].parent)));
            if (listed[ch]) fail(fmt::format("component {}: lists child {} twice", p, ch));
            listed[ch] = 1;
        }
        for (auto ch : by_parent[p])
            if (!listed[ch])
                fail(fmt::format("component {}: \"children\" omits {}, whose parent it is", p, ch));
        by_parent[p] = c.children;
    }
    return by_parent;
}

ParsedDataPath parse_datapath(const json& d, std::size_t index, std::size_t count, const Model& model) {
    const std::string where = fmt::format("datapath {}", index);
    if (!d.is_object()) fail(fmt::format("{}: must be an object, not {}", where, describe(d)));
    ParsedDataPath p;
    const json* source = member(d, "source");
    const json* target = member(d, "target");
    if (!source) fail(fmt::format("{}: \"source\" is missing", where));
    if (!target) fail(fmt::format("{}: \"target\" is missing", where));
    p.source = component_ref(*source, count, where, "source", false);
    p.target = component_ref(*target, count, where, "target", false);
    const auto type = optional_string(d, "type", where);
    if (!type) fail(fmt::format("{}: \"type\" is missing", where));
    const auto t = model.find_datapath_type(*type);
    if (!t || type->empty())
        fail(fmt::format("{}: unknown type {} (neither built-in nor listed in \"datapath_types\")", where,
                         json_quoted(*type)));
    p.type = *t;
    if (const json* oriented = member(d, "oriented"); oriented && !oriented->is_null()) {
        if (!oriented->is_boolean()) fail(fmt::format("{}: \"oriented\" must be true or false, not {}", where, describe(*oriented)));
        p.oriented = oriented->get<bool>();
    }
    if (const json* bw = member(d, "bandwidth")) p.bandwidth = float_from_json(*bw, where, "\"bandwidth\"");
    if (const json* lat = member(d, "latency")) p.latency = float_from_json(*lat, where, "\"latency\"");
    p.attrs = parse_attributes(d, where);
    return p;
}

Model build_model(const json& doc) {
    check_header(doc);
    Model model;
    for (const auto& name : parse_user_types(doc)) model.datapath_type(name);

    const json* list = member(doc, "components");
    if (!list) fail("\"components\" is missing");
    if (!list->is_array()) fail("\"components\" must be an array");
    const std::size_t n = list->size();
    if (n >= kNil) fail(fmt::format("too many components ({})", n));
    std::vector<ParsedComponent> components;
    components.reserve(n);
    for (std::size_t i = 0; i < n; ++i) components.push_back(parse_component((*list)[i], i, n));
    check_no_cycles(components);
    const auto children = ordered_children(components);

    // All components first, so that file index i is model id i; then the
    // links, in each parent's child order (move appends as last child).
    for (const auto& c : components) model.add_component(c.type, kNoComponent, c.kind, c.name, c.os_index);
    for (std::uint32_t p = 0; p < n; ++p)
        for (auto ch : children[p]) model.move(ComponentId{ch}, ComponentId{p});
    for (std::uint32_t i = 0; i < n; ++i)
        for (const auto& a : components[i].attrs) model.set_attr(ComponentId{i}, model.key(a.key), a.value);

    const json* paths = member(doc, "datapaths");
    if (paths && !paths->is_null()) {
        if (!paths->is_array()) fail("\"datapaths\" must be an array");
        std::vector<ParsedDataPath> parsed;
        parsed.reserve(paths->size());
        for (std::size_t j = 0; j < paths->size(); ++j) parsed.push_back(parse_datapath((*paths)[j], j, n, model));
        for (const auto& d : parsed) {
            const DataPathId id = model.add_datapath(ComponentId{d.source}, ComponentId{d.target}, d.type,
                                                     d.oriented, d.bandwidth, d.latency);
            for (const auto& a : d.attrs) model.set_attr(id, model.key(a.key), a.value);
        }
    }
    return model;
}

}  // namespace

nlohmann::json model_to_json(const Model& model) { return to_json<nlohmann::json>(model); }

Result<Model> model_from_json(const nlohmann::json& document) {
    try {
        return build_model(document);
    } catch (const Invalid& e) {
        return make_error(e.message);
    } catch (const nlohmann::json::exception& e) {
        // Every access is checked first; this is a safety net, not a path.
        return make_error(fmt::format("unexpected JSON content: {}", e.what()));
    }
}

Status write_model_json(const Model& model, const std::string& path) {
    const std::string text = format_document(to_json<nlohmann::ordered_json>(model));
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out) return make_error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        out.close();
        if (!out) {
            const int saved = errno;
            std::remove(temporary.c_str());
            return make_error(fmt::format("{}: write failed: {}", path, std::strerror(saved)));
        }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        const int saved = errno;
        std::remove(temporary.c_str());
        return make_error(fmt::format("{}: cannot write: {}", path, std::strerror(saved)));
    }
    return Ok{};
}

Result<Model> read_model_json(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return make_error(fmt::format("{}: read failed: {}", path, std::strerror(errno)));

    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        // what() starts with "[json.exception.parse_error.101] ": noise for users.
        std::string_view detail = e.what();
        if (auto close = detail.find("] "); close != std::string_view::npos) detail.remove_prefix(close + 2);
        return make_error(fmt::format("{}: invalid JSON at byte {}: {}", path, e.byte, detail));
    }
    auto model = model_from_json(doc);
    if (!model) return make_error(fmt::format("{}: {}", path, model.error().message));
    return model;
}

}  // namespace stacksage
