#include "core/model_print.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>

#include "core/model.hpp"

namespace stacksage {

namespace {

std::string attribute_text(const AttributeValue& value) {
    return std::visit([](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) return fmt::format("\"{}\"", v);
        else if constexpr (std::is_same_v<V, Cpuset>) return v.empty() ? "none" : v.to_list_string();
        else return fmt::format("{}", v);
    }, value);
}

// "[out MemoryAccess:3 RanOn:1]"; types in number order so output is stable
// whatever order the paths were added in.
std::string datapath_counts(const Model& model, ComponentId id, Direction direction) {
    std::vector<DataPathType> types = model.datapath_types_on(id, direction);
    if (types.empty()) return {};
    std::sort(types.begin(), types.end());
    std::string out = direction == Direction::Out ? " [out" : " [in";
    for (DataPathType t : types)
        out += fmt::format(" {}:{}", model.datapath_type_name(t), model.datapaths(id, t, direction).size());
    out += ']';
    return out;
}

}  // namespace

std::string human_size(std::int64_t bytes) {
    static constexpr std::array<const char*, 7> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 0)
        return "-" + human_size(bytes == std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::max() : -bytes);
    double value = static_cast<double>(bytes);
    std::size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < kUnits.size()) {
        value /= 1024.0;
        ++unit;
    }
    if (unit == 0) return fmt::format("{} B", bytes);
    std::string number = fmt::format("{:.2f}", value);
    // "1.50" -> "1.5", "32.00" -> "32".
    while (number.back() == '0') number.pop_back();
    if (number.back() == '.') number.pop_back();
    return fmt::format("{} {}", number, kUnits[unit]);
}

std::string component_summary(const Model& model, ComponentId id, const PrintOptions& options) {
    if (!model.is_alive(id)) return {};
    std::string line(to_string(model.type(id)));
    if (!model.kind(id).empty()) line += fmt::format("({})", model.kind(id));
    const auto logical = model.get_int(id, keys::logical_index);
    if (logical) line += fmt::format(" L#{}", *logical);
    if (model.os_index(id) >= 0) line += fmt::format(" P#{}", model.os_index(id));
    const auto size = model.get_int(id, keys::size_bytes);
    if (size) line += ' ' + human_size(*size);
    const auto cpuset = model.get_cpuset(id, keys::cpuset);
    if (cpuset) line += " cpuset=" + (cpuset->empty() ? std::string("none") : cpuset->to_list_string());
    if (!model.name(id).empty()) line += fmt::format(" \"{}\"", model.name(id));

    if (options.show_attributes) {
        std::string attrs;
        model.for_each_attr(id, [&](AttrKey key, const AttributeValue& value) {
            // Skip what the line already shows, and only in the form it shows it.
            if ((key == keys::logical_index && logical) || (key == keys::size_bytes && size) ||
                (key == keys::cpuset && cpuset))
                return;
            attrs += fmt::format("{}{}={}", attrs.empty() ? "" : ", ", model.key_name(key), attribute_text(value));
        });
        if (!attrs.empty()) line += " {" + attrs + '}';
    }
    if (options.show_datapaths) {
        line += datapath_counts(model, id, Direction::Out);
        line += datapath_counts(model, id, Direction::In);
    }
    return line;
}

namespace {

// A hash of what a subtree looks like, ignoring indices and cpusets: equal
// for the 80 L2 caches of a package, different for a P-core and an E-core.
std::uint64_t shape_of(const Model& model, ComponentId id) {
    std::uint64_t h = std::hash<std::string_view>{}(model.kind(id)) * 31 + static_cast<std::uint64_t>(model.type(id));
    h = h * 1000003 + static_cast<std::uint64_t>(model.get_int(id, keys::size_bytes).value_or(0));
    h = h * 1000003 + std::hash<std::string_view>{}(model.get_string(id, keys::core_type).value_or(""));
    for (ComponentId c = model.first_child(id); c != kNoComponent; c = model.next_sibling(c))
        h = h * 0x100000001b3ull ^ shape_of(model, c);
    return h;
}

}  // namespace

std::string print_subtree(const Model& model, ComponentId root, const PrintOptions& options) {
    if (!model.is_alive(root)) return {};
    std::string out;
    const int indent = std::max(options.indent, 0);
    // Explicit stack instead of walk_subtree: walk_subtree cannot skip the
    // children of a component at max_depth, which matters for big subtrees.
    // An entry with a fold count prints the "N more alike" line instead.
    struct Entry {
        ComponentId id;
        int depth;
        std::size_t folded = 0;
        Cpuset folded_cpus;
    };
    std::vector<Entry> stack{{root, 0, 0, {}}};
    while (!stack.empty()) {
        Entry e = std::move(stack.back());
        stack.pop_back();
        out.append(static_cast<std::size_t>(e.depth * indent), ' ');
        if (e.folded) {
            out += fmt::format("... {} more alike", e.folded);
            if (!e.folded_cpus.empty()) out += ", cpuset=" + e.folded_cpus.to_list_string();
            out += '\n';
            continue;
        }
        out += component_summary(model, e.id, options);
        out += '\n';
        if (options.max_depth >= 0 && e.depth >= options.max_depth) continue;
        std::vector<Entry> children;
        for (ComponentId c = model.first_child(e.id); c != kNoComponent;) {
            ComponentId next = model.next_sibling(c);
            children.push_back({c, e.depth + 1, 0, {}});
            if (options.fold_alike_siblings) {
                const std::uint64_t shape = shape_of(model, c);
                Entry fold{c, e.depth + 1, 0, {}};
                while (next != kNoComponent && shape_of(model, next) == shape) {
                    ++fold.folded;
                    fold.folded_cpus |= model.cpuset(next);
                    next = model.next_sibling(next);
                }
                if (fold.folded) children.push_back(std::move(fold));
            }
            c = next;
        }
        // Pushed last first so that the first child is printed first.
        for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(std::move(*it));
    }
    return out;
}

}  // namespace stacksage
