#include "core/run_model_schema.hpp"

#include <array>
#include <utility>

#include "core/enum_words.hpp"
#include "core/model.hpp"

namespace stacksage {

namespace {

// A vocabulary: each value's word, in the enum's order.
constexpr std::array<std::string_view, 2> kProcessKinds = {"process", "launcher"};
constexpr std::array<std::string_view, 4> kFlowKinds = {"main", "thread", "discovered", "unseen"};
constexpr std::array<std::string_view, 2> kTopologySources = {"hwloc", "cpusets-seen"};

// Calls fn(name, key) for every name of the schema and its key in table k
// (a RunModelKeys, const or not), in one fixed order.
template <class Table, class Fn> void for_each_entry(Table& k, Fn&& fn) {
#define STACKSAGE_VISIT_RUN(T, id, name) fn(run_keys::id, k.id);
#define STACKSAGE_VISIT_MEMORY_ACCESS(T, id, name) fn(memory_access_keys::id, k.id);
    STACKSAGE_RUN_ATTRIBUTES(STACKSAGE_VISIT_RUN)
    STACKSAGE_MEMORY_ACCESS_ATTRIBUTES(STACKSAGE_VISIT_MEMORY_ACCESS)
#undef STACKSAGE_VISIT_RUN
#undef STACKSAGE_VISIT_MEMORY_ACCESS
}

}  // namespace

std::string_view to_string(ProcessKind kind) { return word_of(kProcessKinds, kind); }
std::string_view to_string(FlowKind kind) { return word_of(kFlowKinds, kind); }
std::string_view to_string(TopologySource source) { return word_of(kTopologySources, source); }

std::optional<ProcessKind> process_kind_from_string(std::string_view word) {
    return enum_of_word<ProcessKind>(kProcessKinds, word);
}
std::optional<FlowKind> flow_kind_from_string(std::string_view word) { return enum_of_word<FlowKind>(kFlowKinds, word); }
std::optional<TopologySource> topology_source_from_string(std::string_view word) {
    return enum_of_word<TopologySource>(kTopologySources, word);
}

RunModelKeys RunModelKeys::interned(Model& model) {
    RunModelKeys k;
    for_each_entry(k, [&]<class T>(AttrName<T> name, Key<T>& key) { key.id = model.key(name); });
    k.waited_for = model.datapath_type(run_keys::waited_for);
    return k;
}

RunModelKeys RunModelKeys::found(const Model& model) {
    RunModelKeys k;
    for_each_entry(k, [&]<class T>(AttrName<T> name, Key<T>& key) {
        key.id = model.find_key(name).value_or(kAbsentKey);
    });
    k.waited_for = model.find_datapath_type(run_keys::waited_for);
    return k;
}

bool RunModelKeys::complete() const {
    bool all = waited_for.has_value();
    for_each_entry(*this, [&](std::string_view, const auto& key) { all = all && key.present(); });
    return all;
}

void RunModelKeys::for_each(const std::function<void(std::string_view name, AttrKey key)>& fn) const {
    for_each_entry(*this, [&](std::string_view name, const auto& key) { fn(name, key.id); });
}

}  // namespace stacksage
