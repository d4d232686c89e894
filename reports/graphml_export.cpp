#include "reports/graphml_export.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "reports/markup_entity.hpp"

namespace stacksage {

namespace {

void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) out += static_cast<char>(cp);
    else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

bool xml_allowed(std::uint32_t cp) {
    return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
           (cp >= 0x10000 && cp <= 0x10FFFF);
}

// Decodes one UTF-8 sequence at s[i]; returns the code point and advances i,
// or returns 0xFFFFFFFF (advancing by one byte) when the bytes are invalid.
std::uint32_t decode(std::string_view s, std::size_t& i) {
    const auto b = static_cast<unsigned char>(s[i]);
    int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
        ++i;
        return 0xFFFFFFFFu;
    }
    std::uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k < len; ++k) {
        const auto c = static_cast<unsigned char>(s[i + k]);
        if ((c >> 6) != 0x2) {
            ++i;
            return 0xFFFFFFFFu;
        }
        cp = (cp << 6) | (c & 0x3F);
    }
    static const std::uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_len[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
        ++i;
        return 0xFFFFFFFFu;
    }
    i += len;
    return cp;
}

std::string format_double(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

const char* graphml_type(AttrKind kind) {
    switch (kind) {
        case AttrKind::Int: return "long";
        case AttrKind::Float: return "double";
        default: return "string";
    }
}

AttrKind kind_of(const AttributeValue& v) { return static_cast<AttrKind>(v.index()); }

std::string value_text(const AttributeValue& v) {
    switch (v.index()) {
        case 0: return std::to_string(std::get<0>(v));
        case 1: return format_double(std::get<1>(v));
        case 2: return std::get<2>(v);
        default: return std::get<3>(v).to_list_string();
    }
}

std::string nmtoken(std::string name);

// Keys of one domain (node or edge): one per (attribute name, value kind).
class KeyTable {
public:
    KeyTable(const char* domain, const char* prefix) : domain_(domain), prefix_(prefix) {}

    void fixed(const std::string& name, const char* type) { id(name, type); }
    const std::string& id(const std::string& name, const char* type) {
        auto [it, added] = ids_.try_emplace({name, std::string(type)});
        if (added) {
            it->second = prefix_ + std::to_string(ids_.size() - 1);
            order_.push_back({name, type});
            names_[name]++;
        }
        return it->second;
    }
    void declare(std::string& out) const {
        std::map<std::string, int> seen;
        for (const auto& [name, type] : order_) {
            // A name used with two kinds of value gets its type appended the second time.
            const bool clash = names_.at(name) > 1 && seen[name]++ > 0;
            out += "  <key id=\"" + ids_.at({name, type}) + "\" for=\"" + domain_ + "\" attr.name=\"" +
                   nmtoken(clash ? name + ":" + type : name) + "\" attr.type=\"" + type + "\"/>\n";
        }
    }

private:
    std::string domain_, prefix_;
    std::map<std::pair<std::string, std::string>, std::string> ids_;
    std::vector<std::pair<std::string, std::string>> order_;
    std::map<std::string, int> names_;
};

// GraphML's attr.name is an xs:NMTOKEN: letters, digits, '.', '-', '_', ':'.
std::string nmtoken(std::string name) {
    for (char& c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == ':')) c = '_';
    return name.empty() ? "_" : name;
}

void data(std::string& out, const std::string& key, const std::string& text) {
    out += "      <data key=\"" + key + "\">" + xml_escape(text) + "</data>\n";
}

}  // namespace

std::string xml_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const std::uint32_t cp = decode(text, i);
        if (cp == 0xFFFFFFFFu || !xml_allowed(cp)) {
            append_utf8(out, 0xFFFD);
            continue;
        }
        if (!append_markup_entity(out, cp, "&apos;")) append_utf8(out, cp);
    }
    return out;
}

std::string model_to_graphml(const Model& model) {
    KeyTable node_keys("node", "n"), edge_keys("edge", "e");
    node_keys.fixed("type", "string");
    node_keys.fixed("kind", "string");
    node_keys.fixed("name", "string");
    node_keys.fixed("os_index", "long");
    edge_keys.fixed("edge_type", "string");
    edge_keys.fixed("oriented", "boolean");
    edge_keys.fixed("bandwidth", "double");
    edge_keys.fixed("latency", "double");

    std::string body;
    body.reserve(model.component_count() * 200 + model.datapath_count() * 200);
    model.for_each_component([&](ComponentId c) {
        body += "    <node id=\"c" + std::to_string(index_of(c)) + "\">\n";
        data(body, node_keys.id("type", "string"), std::string(to_string(model.type(c))));
        if (!model.kind(c).empty()) data(body, node_keys.id("kind", "string"), std::string(model.kind(c)));
        if (!model.name(c).empty()) data(body, node_keys.id("name", "string"), std::string(model.name(c)));
        if (model.os_index(c) >= 0) data(body, node_keys.id("os_index", "long"), std::to_string(model.os_index(c)));
        model.for_each_attr(c, [&](AttrKey key, const AttributeValue& v) {
            data(body, node_keys.id(std::string(model.key_name(key)), graphml_type(kind_of(v))), value_text(v));
        });
        body += "    </node>\n";
    });
    std::size_t edge = 0;
    model.for_each_component([&](ComponentId c) {
        const ComponentId p = model.parent(c);
        if (p == kNoComponent) return;
        body += "    <edge id=\"t" + std::to_string(edge++) + "\" source=\"c" + std::to_string(index_of(p)) +
                "\" target=\"c" + std::to_string(index_of(c)) + "\">\n";
        data(body, edge_keys.id("edge_type", "string"), "child");
        body += "    </edge>\n";
    });
    model.for_each_datapath([&](DataPathId d) {
        const bool oriented = model.oriented(d);
        body += "    <edge id=\"d" + std::to_string(index_of(d)) + "\" source=\"c" + std::to_string(index_of(model.source(d))) +
                "\" target=\"c" + std::to_string(index_of(model.target(d))) + "\"" + (oriented ? "" : " directed=\"false\"") + ">\n";
        data(body, edge_keys.id("edge_type", "string"), std::string(model.datapath_type_name(model.type(d))));
        data(body, edge_keys.id("oriented", "boolean"), oriented ? "true" : "false");
        if (!std::isnan(model.bandwidth(d))) data(body, edge_keys.id("bandwidth", "double"), format_double(model.bandwidth(d)));
        if (!std::isnan(model.latency(d))) data(body, edge_keys.id("latency", "double"), format_double(model.latency(d)));
        model.for_each_attr(d, [&](AttrKey key, const AttributeValue& v) {
            data(body, edge_keys.id(std::string(model.key_name(key)), graphml_type(kind_of(v))), value_text(v));
        });
        body += "    </edge>\n";
    });

    std::string out;
    out.reserve(body.size() + 4096);
    out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\"\n"
           "         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n"
           "         xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns "
           "http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n"
           "  <desc>stacksage model: components (nodes), tree and DataPaths (edges)</desc>\n";
    node_keys.declare(out);
    edge_keys.declare(out);
    out += "  <graph id=\"model\" edgedefault=\"directed\">\n";
    out += body;
    out += "  </graph>\n</graphml>\n";
    return out;
}

}  // namespace stacksage
