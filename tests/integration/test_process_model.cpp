// The process's own model, written at exit as a stream of node.models: its
// flows on the node's topology, with MayRunOn intervals that follow every
// affinity change; the same model the analyzer builds for that process.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <variant>

#include "core/component_type.hpp"
#include "core/model_json.hpp"
#include "parsers/run_loader.hpp"
#include "tests/integration/log_checks.hpp"

namespace stacksage::testing {
namespace {

struct Interval {
    unsigned cpu;
    std::int64_t start, end;
    std::string set_by;
};

std::vector<Interval> intervals(Model& m, ComponentId flow) {
    std::vector<Interval> out;
    for (DataPathId p : m.datapaths(flow, DataPathType::MayRunOn, Direction::Out)) {
        Interval i;
        i.cpu = static_cast<unsigned>(m.os_index(m.target(p)));
        i.start = m.get_int(p, keys::start_ns).value_or(-1);
        i.end = m.get_int(p, keys::end_ns).value_or(-1);
        i.set_by = std::string(m.get_string(p, m.key("set_by")).value_or(""));
        EXPECT_EQ(m.type(m.target(p)), ComponentType::Thread);
        out.push_back(i);
    }
    std::sort(out.begin(), out.end(), [](const Interval& a, const Interval& b) {
        return a.start != b.start ? a.start < b.start : a.cpu < b.cpu;
    });
    return out;
}

Cpuset cpus_at(const std::vector<Interval>& v, std::int64_t t) {
    Cpuset s;
    for (const auto& i : v)
        if (i.start <= t && t < i.end) s.set(i.cpu);
    return s;
}

// A process's part of a model as lines of text, in the model's order: the
// Process component, each Flow under it, each path out of a flow with its
// target (a PU by OS index, a flow by tid); every attribute, named, with its
// value. Two models of one process compare as these lines.
std::string attributes_of(const Model& m, const std::function<void(const std::function<void(AttrKey, const AttributeValue&)>&)>& each) {
    std::vector<std::string> attributes;
    each([&](AttrKey key, const AttributeValue& value) {
        std::string text = std::string(m.key_name(key)) + "=";
        std::visit(
            [&](const auto& v) {
                using V = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<V, std::string>) text += v;
                else if constexpr (std::is_same_v<V, Cpuset>) text += "[" + v.to_list_string() + "]";
                else text += std::to_string(v);
            },
            value);
        attributes.push_back(std::move(text));
    });
    std::sort(attributes.begin(), attributes.end());  // by name: the lines compare whatever the order set
    std::string out;
    for (const std::string& a : attributes) out += " " + a;
    return out;
}

std::string component_line(const Model& m, ComponentId c) {
    return std::string(to_string(m.type(c))) + " kind=" + std::string(m.kind(c)) + " name=" + std::string(m.name(c)) +
           " os=" + std::to_string(m.os_index(c)) +
           attributes_of(m, [&](const auto& fn) { m.for_each_attr(c, fn); });
}

std::vector<std::string> process_lines(const Model& m, ComponentId process) {
    std::vector<std::string> lines{component_line(m, process)};
    for (ComponentId flow : m.children(process)) {
        lines.push_back("  " + component_line(m, flow));
        for (DataPathId p : m.all_datapaths(flow, Direction::Out)) {
            const ComponentId target = m.target(p);
            lines.push_back("    " + std::string(m.datapath_type_name(m.type(p))) + " -> " +
                            std::string(to_string(m.type(target))) + " " + std::to_string(m.os_index(target)) +
                            attributes_of(m, [&](const auto& fn) { m.for_each_attr(p, fn); }));
        }
    }
    return lines;
}

ComponentId process_of_pid(const Model& m, std::int64_t pid) {
    for (ComponentId p : m.components_of_type(ComponentType::Process))
        if (m.os_index(p) == pid) return p;
    return kNoComponent;
}

// Runs argv under the recorder and compares the model its process wrote with
// the analyzer's model of it (stacksage's loader on the same directory).
void expect_written_model_is_the_analyzers(const std::vector<std::string>& argv,
                                           const std::map<std::string, std::string>& env = {}) {
    TempDir out;
    RunOptions o;
    o.argv = argv;
    o.output = out.path();
    o.env = env;
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    auto done = logs[0].first("model");
    ASSERT_TRUE(done);
    ASSERT_TRUE((*done)["ok"].get<bool>()) << done->dump();
    Result<Model> written = model_from_json(nlohmann::json::parse(model_text_of(logs[0]), nullptr, false));
    ASSERT_TRUE(written) << written.error().message;
    Result<LoadedRun> analysed = load_run(out.path().string());
    ASSERT_TRUE(analysed) << analysed.error().message;

    const ComponentId own = process_of_pid(*written, logs[0].pid());
    const ComponentId theirs = process_of_pid(analysed->model, logs[0].pid());
    ASSERT_NE(own, kNoComponent);
    ASSERT_NE(theirs, kNoComponent);
    const std::vector<std::string> own_lines = process_lines(*written, own);
    EXPECT_GT(own_lines.size(), 4u);  // the process, its flows and their paths
    EXPECT_EQ(own_lines, process_lines(analysed->model, theirs));
}

TEST(ProcessModel, FlowsAndTheirIntervalsOnTheTopology) {
    TempDir out;
    RunOptions o;
    o.argv = {example("pthreads_affinity")};
    o.output = out.path();
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    auto done = logs[0].first("model");
    ASSERT_TRUE(done);
    ASSERT_TRUE((*done)["ok"].get<bool>()) << done->dump();

    const nlohmann::json document = nlohmann::json::parse(model_text_of(logs[0]), nullptr, false);
    Result<Model> loaded = model_from_json(document);
    ASSERT_TRUE(loaded) << loaded.error().message;
    Model& m = *loaded;
    EXPECT_TRUE(m.check_consistency().empty());
    ASSERT_EQ(m.count_of_type(ComponentType::Node), 1u);
    auto processes = m.components_of_type(ComponentType::Process);
    ASSERT_EQ(processes.size(), 1u);
    ComponentId proc = processes[0];
    EXPECT_EQ(m.get_int(proc, m.key("pid")), logs[0].pid());
    EXPECT_EQ(m.get_int(proc, m.key("exit_status")), 0);
    EXPECT_EQ(m.children(proc).size(), 3u);  // main thread + 2

    const Cpuset allowed = own_affinity();
    const unsigned first = *allowed.first();
    unsigned last = first;
    for (unsigned c : allowed) last = c;

    auto starts = logs[0].all("thread_start");
    auto affinity = logs[0].all("affinity");
    ASSERT_EQ(affinity.size(), 2u);
    for (ComponentId f : m.children(proc)) {
        const int tid = static_cast<int>(m.get_int(f, m.key("tid")).value_or(-1));
        auto v = intervals(m, f);
        ASSERT_FALSE(v.empty()) << "tid " << tid;
        for (const auto& i : v) EXPECT_LT(i.start, i.end) << "tid " << tid;
        if (tid == logs[0].pid()) {
            EXPECT_EQ(cpus_at(v, v.front().start), allowed);
            continue;
        }
        const nlohmann::json* start = nullptr;
        for (const auto& s : starts)
            if (s["tid"] == tid) start = &s;
        ASSERT_NE(start, nullptr);
        if (start->contains("attr_cpuset")) {
            Cpuset only_last;
            only_last.set(last);
            EXPECT_EQ(m.get_cpuset(f, m.key("attr_cpuset")), only_last);
            EXPECT_EQ(cpus_at(v, v.front().start), only_last);
        } else {
            // allowed, then {first} after its own sched_setaffinity, then {first,last}.
            EXPECT_EQ(m.name(f), "binds-itself");
            const std::int64_t t1 = affinity[0]["t"], t2 = affinity[1]["t"];
            EXPECT_EQ(cpus_at(v, v.front().start), allowed);
            Cpuset one, both;
            one.set(first);
            both.set(first);
            both.set(last);
            EXPECT_EQ(cpus_at(v, t1), one);
            EXPECT_EQ(cpus_at(v, t2), both);
            for (const auto& i : v) {
                if (i.start == t1 || i.start == t2) {
                    EXPECT_EQ(i.set_by, "affinity") << "tid " << tid;
                }
            }
            EXPECT_EQ(m.get_string(f, m.key("creator_module")).value_or("").find("pthreads_affinity") !=
                          std::string_view::npos,
                      true);
        }
    }
}

// libgomp's pool is never joined: its flows take their CPU time (and wait
// for a CPU) from the thread_usage_at_exit lines, marked as read at exit.
TEST(ProcessModel, ThreadsAliveAtExitCarryTheirCpuTime) {
#ifndef STACKSAGE_HAVE_GOMP_EXAMPLE
    GTEST_SKIP() << "omp_gomp was not built (no OpenMP for the C compiler)";
#endif
    TempDir out;
    RunOptions o;
    o.argv = {example("omp_gomp"), "0.02", "0.2"};
    o.output = out.path();
    o.env = {{"OMP_NUM_THREADS", "3"}, {"OMP_WAIT_POLICY", "passive"}};
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    std::map<std::int64_t, std::int64_t> cpu_of;
    for (const auto& u : logs[0].all("thread_usage_at_exit")) cpu_of[u["target_tid"]] = u["cpu_us"];
    ASSERT_EQ(cpu_of.size(), 2u);
    const nlohmann::json document = nlohmann::json::parse(model_text_of(logs[0]), nullptr, false);
    Result<Model> loaded = model_from_json(document);
    ASSERT_TRUE(loaded) << loaded.error().message;
    Model& m = *loaded;
    const ComponentId proc = m.components_of_type(ComponentType::Process).at(0);
    std::size_t pool = 0;
    for (ComponentId f : m.children(proc)) {
        const std::int64_t tid = m.get_int(f, m.key("tid")).value_or(-1);
        if (tid == logs[0].pid()) {
            EXPECT_FALSE(m.get_int(f, m.key("cpu_time_at_exit"))) << "the main thread";
            continue;
        }
        ++pool;
        ASSERT_TRUE(cpu_of.count(tid)) << "tid " << tid;
        EXPECT_EQ(m.get_int(f, m.key("utime_us")), cpu_of[tid]);
        EXPECT_EQ(m.get_int(f, m.key("stime_us")), 0);
        EXPECT_EQ(m.get_int(f, m.key("cpu_time_at_exit")), 1);
        EXPECT_TRUE(m.get_int(f, m.key("run_delay_ns"))) << "tid " << tid;
    }
    EXPECT_EQ(pool, 2u);
}

// Affinity calls of a thread on itself, a mask in the pthread attributes,
// joins: the same process, flows, intervals, causes and waits.
TEST(ProcessModel, IsTheAnalyzersModelOfTheProcess) {
    expect_written_model_is_the_analyzers({example("pthreads_affinity")});
}

// A pool alive at exit (its CPU time read then), never joined.
TEST(ProcessModel, IsTheAnalyzersModelOfAnOpenMpProcess) {
#ifndef STACKSAGE_HAVE_GOMP_EXAMPLE
    GTEST_SKIP() << "omp_gomp was not built (no OpenMP for the C compiler)";
#endif
    expect_written_model_is_the_analyzers({example("omp_gomp"), "0.02", "0.2"},
                                          {{"OMP_NUM_THREADS", "3"}, {"OMP_WAIT_POLICY", "passive"}});
}

TEST(ProcessModel, SingleThreadedHelpersGetNoModel) {
    TempDir out;
    RunOptions o;
    o.argv = {"/bin/true"};
    o.output = out.path();
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    EXPECT_FALSE(logs[0].first("model"));
}

TEST(ProcessModel, CanBeSwitchedOff) {
    TempDir out;
    RunOptions o;
    o.argv = {example("many_threads"), "3"};
    o.output = out.path();
    o.env = {{"STACKSAGE_MODEL", "0"}};
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    EXPECT_FALSE(logs[0].first("model"));
}

}  // namespace
}  // namespace stacksage::testing
