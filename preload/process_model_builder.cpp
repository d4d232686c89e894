#include "preload/process_model_builder.hpp"

#include <algorithm>
#include <optional>

#include "core/run_model_schema.hpp"
#include "parsers/process_log.hpp"

namespace stacksage::preload {

namespace {

std::int64_t as_int(const nlohmann::json& v, std::int64_t fallback = -1) {
    return v.is_number_integer() ? v.get<std::int64_t>() : fallback;
}

std::string as_string(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : std::string(); }

// A cpuset-valued field; nullopt when absent, null (unknown) or malformed.
std::optional<Cpuset> cpuset_field(const nlohmann::json& e, const char* key) {
    auto it = e.find(key);
    if (it == e.end() || !it->is_string()) return std::nullopt;
    return Cpuset::parse_list(it->get<std::string>());
}

}  // namespace

ProcessModelBuilder::ProcessModelBuilder(Model& model, ComponentId node) : model_(model), node_(node) {}

ComponentId ProcessModelBuilder::flow(int tid) const {
    auto it = flows_.find(tid);
    return it == flows_.end() ? kNoComponent : it->second;
}

ComponentId ProcessModelBuilder::pu(unsigned cpu) {
    if (auto it = pus_.find(cpu); it != pus_.end()) return it->second;
    ComponentId id = model_.find(ComponentType::Thread, cpu, node_);
    if (id == kNoComponent && std::find(unknown_cpus_.begin(), unknown_cpus_.end(), cpu) == unknown_cpus_.end())
        unknown_cpus_.push_back(cpu);
    pus_[cpu] = id;
    return id;
}

ComponentId ProcessModelBuilder::add_flow(int tid, std::uint64_t t) {
    if (ComponentId existing = flow(tid); existing != kNoComponent) return existing;
    if (process_ == kNoComponent) process_ = model_.add_component(ComponentType::Process, kNoComponent);
    ComponentId f = model_.add_component(ComponentType::Flow, process_, "thread", {}, tid);
    model_.set_attr(f, model_.key("tid"), static_cast<std::int64_t>(tid));
    model_.set_attr(f, keys::start_ns, static_cast<std::int64_t>(t));
    flows_[tid] = f;
    return f;
}

void ProcessModelBuilder::close(ComponentId flow, std::uint64_t t) {
    auto it = open_.find(index_of(flow));
    if (it == open_.end()) return;
    for (DataPathId p : it->second.paths) model_.set_attr(p, keys::end_ns, static_cast<std::int64_t>(t));
    open_.erase(it);
}

void ProcessModelBuilder::set_mask(ComponentId flow, const std::string& cpuset, std::uint64_t t,
                                   const char* why) {
    // An empty text is an unknown mask (null in the log), not an empty one.
    auto parsed = cpuset.empty() ? std::nullopt : Cpuset::parse_list(cpuset);
    if (!parsed) return;
    if (auto it = open_.find(index_of(flow)); it != open_.end() && it->second.cpuset == cpuset) return;
    close(flow, t);
    Open& open = open_[index_of(flow)];
    open.cpuset = cpuset;
    const AttrKey reason = model_.key("reason");
    for (unsigned cpu : *parsed) {
        ComponentId target = pu(cpu);
        if (target == kNoComponent) continue;
        DataPathId p = model_.add_datapath(flow, target, DataPathType::MayRunOn);
        model_.set_attr(p, keys::start_ns, static_cast<std::int64_t>(t));
        model_.set_attr(p, reason, std::string_view(why));
        open.paths.push_back(p);
    }
}

void ProcessModelBuilder::on_process_start(const nlohmann::json& e, std::uint64_t t) {
    if (process_ == kNoComponent) process_ = model_.add_component(ComponentType::Process, kNoComponent);
    const std::string exe = as_string(e.value("exe", nlohmann::json()));
    model_.set_name(process_, exe.substr(exe.rfind('/') + 1));
    model_.set_os_index(process_, as_int(e["pid"]));
    model_.set_attr(process_, model_.key("pid"), as_int(e["pid"]));
    model_.set_attr(process_, model_.key("ppid"), as_int(e.value("ppid", nlohmann::json())));
    model_.set_attr(process_, keys::hostname, std::string_view(as_string(e.value("host", nlohmann::json()))));
    model_.set_attr(process_, model_.key("exe"), std::string_view(exe));
    if (e.contains("rank") && e["rank"].is_number_integer())
        model_.set_attr(process_, model_.key("rank"), as_int(e["rank"]));
    if (e.contains("launcher") && e["launcher"].is_string())
        model_.set_attr(process_, model_.key("launcher"), std::string_view(as_string(e["launcher"])));
    model_.set_attr(process_, keys::start_ns, static_cast<std::int64_t>(t));
    if (auto set = cpuset_field(e, "cpuset")) model_.set_attr(process_, keys::cpuset, *set);
    if (auto set = cpuset_field(e, "cgroup_cpuset"))
        model_.set_attr(process_, model_.key("cgroup_cpuset"), *set);
    ComponentId main = add_flow(static_cast<int>(as_int(e["tid"])), t);
    model_.set_kind(main, "main-thread");
    set_mask(main, as_string(e.value("cpuset", nlohmann::json())), t, "process_start");
}

void ProcessModelBuilder::on_thread_start(const nlohmann::json& e, std::uint64_t t) {
    ComponentId f = add_flow(static_cast<int>(as_int(e["tid"])), t);
    model_.set_attr(f, model_.key("seq"), as_int(e.value("seq", nlohmann::json())));
    model_.set_attr(f, model_.key("creator_tid"), as_int(e.value("creator_tid", nlohmann::json())));
    model_.set_attr(f, model_.key("creator_module"),
                    std::string_view(as_string(e.value("creator_module", nlohmann::json()))));
    model_.set_attr(f, model_.key("start_module"),
                    std::string_view(as_string(e.value("start_module", nlohmann::json()))));
    if (auto set = cpuset_field(e, "attr_cpuset"))
        model_.set_attr(f, model_.key("attr_cpuset"), *set);
    const std::string handle = as_string(e.value("pthread", nlohmann::json()));
    if (!handle.empty()) {
        by_pthread_[handle] = f;
        if (auto it = pending_names_.find(handle); it != pending_names_.end()) {
            model_.set_name(f, it->second);
            pending_names_.erase(it);
        }
    }
    set_mask(f, as_string(e.value("cpuset", nlohmann::json())), t, "thread_start");
}

void ProcessModelBuilder::on_thread_end(const nlohmann::json& e, std::uint64_t t) {
    ComponentId f = flow(static_cast<int>(as_int(e["tid"])));
    if (f == kNoComponent) return;
    // The mask at exit may differ from the last one we saw (changed behind our back).
    set_mask(f, as_string(e.value("cpuset", nlohmann::json())), t, "thread_end");
    close(f, t);
    model_.set_attr(f, keys::end_ns, static_cast<std::int64_t>(t));
    model_.set_attr(f, model_.key("end_how"), std::string_view(as_string(e.value("how", nlohmann::json()))));
    for (const std::string_view k : {run_keys::utime_us, run_keys::stime_us, run_keys::nvcsw, run_keys::nivcsw,
                                     run_keys::run_delay_ns})
        if (const auto it = e.find(k); it != e.end()) model_.set_attr(f, model_.key(k), as_int(*it));
    if (e.contains("cpu")) model_.set_attr(f, model_.key("last_cpu"), as_int(e["cpu"]));
}

void ProcessModelBuilder::on_usage_at_exit(const nlohmann::json& e) {
    ComponentId f = flow(static_cast<int>(as_int(e.value("target_tid", nlohmann::json()))));
    // A thread that ended meanwhile wrote its own, better figures.
    if (f == kNoComponent || model_.get_int(f, keys::end_ns)) return;
    const auto cpu = e.find("cpu_us");
    if (cpu == e.end() || as_int(*cpu) < 0) return;
    model_.set_attr(f, model_.key(run_keys::utime_us), as_int(*cpu));  // user + system: one clock
    model_.set_attr(f, model_.key(run_keys::stime_us), std::int64_t{0});
    model_.set_attr(f, model_.key(run_keys::cpu_time_at_exit), std::int64_t{1});
    if (const auto it = e.find(run_keys::run_delay_ns); it != e.end())
        model_.set_attr(f, model_.key(run_keys::run_delay_ns), as_int(*it));
}

void ProcessModelBuilder::on_affinity(const nlohmann::json& e, std::uint64_t t) {
    if (as_int(e.value("rc", nlohmann::json())) != 0) return;
    ComponentId f = flow(static_cast<int>(as_int(e.value("target_tid", nlohmann::json()))));
    if (f == kNoComponent) {
        auto it = by_pthread_.find(as_string(e.value("target_pthread", nlohmann::json())));
        if (it == by_pthread_.end()) return;  // another process's thread
        f = it->second;
    }
    set_mask(f, as_string(e.value("cpuset", nlohmann::json())), t, "affinity");
}

void ProcessModelBuilder::on_snapshot(const nlohmann::json& e, std::uint64_t t, const char* why) {
    if (e.contains("rank") && process_ != kNoComponent)
        model_.set_attr(process_, model_.key("mpi_rank"), as_int(e["rank"]));
    if (e.contains("size") && process_ != kNoComponent)
        model_.set_attr(process_, model_.key("mpi_size"), as_int(e["size"]));
    if (!e.contains("threads") || !e["threads"].is_array()) return;
    for (const auto& th : e["threads"]) {
        const int tid = static_cast<int>(as_int(th.value("tid", nlohmann::json())));
        if (tid <= 0) continue;
        ComponentId f = flow(tid);
        // The recorder's own, in snapshots of older recorders: never a flow.
        if (f == kNoComponent && is_recorder_thread_name(as_string(th.value("name", nlohmann::json())))) continue;
        if (f == kNoComponent) {
            // A thread the recorder did not see start (clone, or started before us).
            f = add_flow(tid, t);
            model_.set_attr(f, model_.key("untracked"), std::int64_t{1});
        }
        if (th.contains("name") && model_.name(f).empty())
            model_.set_name(f, as_string(th["name"]));
        set_mask(f, as_string(th.value("cpuset", nlohmann::json())), t, why);
    }
}

void ProcessModelBuilder::on_end(const nlohmann::json& e, std::uint64_t t) {
    if (process_ == kNoComponent) return;
    model_.set_attr(process_, keys::end_ns, static_cast<std::int64_t>(t));
    const std::string ev = as_string(e["ev"]);
    if (ev == "process_end") {
        model_.set_attr(process_, model_.key("end_how"), std::string_view(as_string(e.value("how", nlohmann::json()))));
        model_.set_attr(process_, model_.key("exit_status"), as_int(e.value("status", nlohmann::json())));
    } else {
        model_.set_attr(process_, model_.key("end_how"), std::string_view("signal"));
        model_.set_attr(process_, model_.key("signal"), as_int(e.value("signal", nlohmann::json())));
    }
}

void ProcessModelBuilder::apply(const nlohmann::json& event) {
    if (!event.is_object() || !event.contains("ev") || !event["ev"].is_string()) return;
    const std::uint64_t t = event.value("t", nlohmann::json(0)).is_number_unsigned()
                                ? event["t"].get<std::uint64_t>()
                                : last_t_;
    last_t_ = std::max(last_t_, t);
    const std::string ev = event["ev"].get<std::string>();
    if (ev == "process_start")
        on_process_start(event, t);
    else if (ev == "thread_start")
        on_thread_start(event, t);
    else if (ev == "thread_end")
        on_thread_end(event, t);
    else if (ev == "thread_usage_at_exit")
        on_usage_at_exit(event);
    else if (ev == "affinity")
        on_affinity(event, t);
    else if (ev == "mpi_init")
        on_snapshot(event, t, "mpi_init");
    else if (ev == "mpi_finalize")
        on_snapshot(event, t, "mpi_finalize");
    else if (ev == "thread_name") {
        ComponentId f = flow(static_cast<int>(as_int(event.value("target_tid", nlohmann::json()))));
        const std::string handle = as_string(event.value("target_pthread", nlohmann::json()));
        if (f == kNoComponent)
            if (auto it = by_pthread_.find(handle); it != by_pthread_.end()) f = it->second;
        if (f != kNoComponent)
            model_.set_name(f, as_string(event["name"]));
        else if (!handle.empty())
            pending_names_[handle] = as_string(event["name"]);
    } else if (ev == "process_end" || (ev == "signal" && event.value("fatal", false)))
        on_end(event, t);
}

void ProcessModelBuilder::finish(std::uint64_t end_ns) {
    std::vector<std::uint32_t> open;
    for (const auto& [flow_index, _] : open_) open.push_back(flow_index);
    for (std::uint32_t f : open) close(ComponentId{f}, end_ns);
    for (const auto& [tid, f] : flows_)
        if (!model_.get_int(f, keys::end_ns)) model_.set_attr(f, keys::end_ns, static_cast<std::int64_t>(end_ns));
    if (process_ != kNoComponent && !model_.get_int(process_, keys::end_ns))
        model_.set_attr(process_, keys::end_ns, static_cast<std::int64_t>(end_ns));
}

}  // namespace stacksage::preload
