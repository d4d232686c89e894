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
    namespace rk = run_keys;
    namespace mk = memory_access_keys;
    fn(rk::pid, k.pid);
    fn(rk::ppid, k.ppid);
    fn(rk::tid, k.tid);
    fn(rk::rank, k.rank);
    fn(rk::launcher, k.launcher);
    fn(rk::exe, k.exe);
    fn(rk::cmdline, k.cmdline);
    fn(rk::log_file, k.log_file);
    fn(rk::end_how, k.end_how);
    fn(rk::end_known, k.end_known);
    fn(rk::log_ends_early, k.log_ends_early);
    fn(rk::log_stop_error, k.log_stop_error);
    fn(rk::untraced, k.untraced);
    fn(rk::exit_status, k.exit_status);
    fn(rk::utime_us, k.utime_us);
    fn(rk::stime_us, k.stime_us);
    fn(rk::nvcsw, k.nvcsw);
    fn(rk::nivcsw, k.nivcsw);
    fn(rk::run_delay_ns, k.run_delay_ns);
    fn(rk::run_slices, k.run_slices);
    fn(rk::cpu_time_derived, k.cpu_time_derived);
    fn(rk::cpu_time_at_exit, k.cpu_time_at_exit);
    fn(rk::cgroup_cpuset, k.cgroup_cpuset);
    fn(rk::program_start_cpuset, k.program_start_cpuset);
    fn(rk::online_cpus, k.online_cpus);
    fn(rk::program_start_ns, k.program_start_ns);
    fn(rk::cpu_quota_us, k.cpu_quota_us);
    fn(rk::cpu_period_us, k.cpu_period_us);
    fn(rk::cpu_quota_cgroup, k.cpu_quota_cgroup);
    fn(rk::cpu_periods_start, k.cpu_periods_start);
    fn(rk::cpu_throttled_start, k.cpu_throttled_start);
    fn(rk::cpu_throttled_ns_start, k.cpu_throttled_ns_start);
    fn(rk::cpu_periods_end, k.cpu_periods_end);
    fn(rk::cpu_throttled_end, k.cpu_throttled_end);
    fn(rk::cpu_throttled_ns_end, k.cpu_throttled_ns_end);
    fn(rk::mpi_size, k.mpi_size);
    fn(rk::mpi_thread_level, k.mpi_thread_level);
    fn(rk::mpi_init_ns, k.mpi_init_ns);
    fn(rk::mpi_finalize_ns, k.mpi_finalize_ns);
    fn(rk::seq, k.seq);
    fn(rk::creator_tid, k.creator_tid);
    fn(rk::creator_module, k.creator_module);
    fn(rk::start_module, k.start_module);
    fn(rk::attr_cpuset, k.attr_cpuset);
    fn(rk::create_ns, k.create_ns);
    fn(rk::creator_cpu_ns, k.creator_cpu_ns);
    fn(rk::last_cpu, k.last_cpu);
    fn(rk::set_by, k.set_by);
    fn(rk::set_by_api, k.set_by_api);
    fn(rk::set_by_tid, k.set_by_tid);
    fn(rk::set_by_module, k.set_by_module);
    fn(rk::wait_cpu_ns, k.wait_cpu_ns);
    fn(rk::topology_source, k.topology_source);
    fn(rk::job_restricted, k.job_restricted);
    fn(rk::hwloc_host_name, k.hwloc_host_name);
    fn(rk::run_command, k.run_command);
    fn(rk::run_start, k.run_start);
    fn(rk::run_tool_version, k.run_tool_version);
    fn(rk::run_job_id, k.run_job_id);
    fn(mk::level, k.level);
    fn(mk::backend, k.backend);
    fn(mk::loads, k.loads);
    fn(mk::stores, k.stores);
    fn(mk::missed, k.missed);
    fn(mk::weight_sum, k.weight_sum);
    fn(mk::weight_max, k.weight_max);
    fn(mk::latency_histogram, k.latency_histogram);
    fn(mk::numa_node, k.numa_node);
    fn(mk::remote, k.remote);
    fn(mk::hops, k.hops);
    fn(mk::misses, k.misses);
    fn(mk::counter, k.counter);
    fn(mk::cpu_time_ns, k.cpu_time_ns);
    fn(mk::migrations, k.migrations);
    fn(mk::samples_lost, k.samples_lost);
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
