// The event log's schema (core/formats/event_schema.hpp) against its writer
// (the recorder, preload/) and its reader (parsers/process_log): every event
// the recorder writes is in the schema with only the schema's fields, the
// reader knows every event of the schema, and what the reader makes of a
// recorded line is what the line says, field by field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "core/formats/event_schema.hpp"
#include "parsers/event_log_reader.hpp"
#include "parsers/process_log.hpp"
#include "parsers/run_directory.hpp"
#include "parsers/node_file_reader.hpp"
#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

namespace fs = std::filesystem;
using namespace stacksage;
namespace schema = stacksage::event_schema;
using schema::EventKind;
using nlohmann::json;

namespace {

const std::string kBin = STACKSAGE_BINARY_DIR;
const std::string kCli = kBin + "/cli/stacksage";
const fs::path kSource = fs::path(STACKSAGE_TEST_DATA_DIR).parent_path().parent_path();

std::string line(const json& j) { return j.dump() + "\n"; }

json event(std::string_view name, std::int64_t t, std::int64_t tid = 7) {
    return {{schema::common::v, schema::kVersion}, {schema::common::ev, name}, {schema::common::t, t},
            {schema::common::pid, 7}, {schema::common::tid, tid}};
}

std::set<std::string_view> fields_of(EventKind kind) {
    const auto f = schema::kEvents[static_cast<std::size_t>(kind)].fields;
    std::set<std::string_view> out(f.begin(), f.end());
    out.insert(std::begin(schema::common::fields), std::end(schema::common::fields));
    return out;
}

}  // namespace

TEST(EventSchema, NamesEachEventOnceAndEachFieldOncePerEvent) {
    std::set<std::string_view> names;
    for (const schema::EventEntry& e : schema::kEvents) {
        EXPECT_TRUE(names.insert(e.name).second) << e.name;
        EXPECT_EQ(schema::event_kind(e.name), e.kind) << e.name;
        EXPECT_EQ(schema::event_name(e.kind), e.name);
        std::set<std::string_view> fields;
        for (std::string_view f : e.fields) {
            EXPECT_TRUE(fields.insert(f).second) << e.name << "." << f;
            for (std::string_view common : schema::common::fields) EXPECT_NE(f, common) << e.name;
        }
    }
    EXPECT_EQ(names.size(), schema::kEventKinds);
    EXPECT_EQ(schema::event_kind("gpu_kernel"), EventKind::unknown);
    EXPECT_EQ(schema::event_name(EventKind::unknown), "");
}

// No event of the schema ends up among the reader's unknown events, and
// each reaches the interpreter with its kind.
TEST(EventSchema, TheReaderKnowsEveryEventOfTheSchema) {
    std::string log = line(event(schema::process_start::event, 100));
    for (const schema::EventEntry& e : schema::kEvents)
        if (e.kind != EventKind::process_start) log += line(event(e.name, 200));
    std::vector<EventKind> kinds;
    auto summary = parse_event_log(log, "log.jsonl", [&](const EventLogEvent& e) {
        EXPECT_EQ(schema::event_kind(e.name), e.kind);
        kinds.push_back(e.kind);
    });
    ASSERT_TRUE(summary) << summary.error().message;
    EXPECT_TRUE(summary->unknown_events.empty());
    EXPECT_EQ(summary->events, schema::kEventKinds);
    ASSERT_EQ(kinds.size(), schema::kEventKinds);
    for (const schema::EventEntry& e : schema::kEvents) {
        EXPECT_TRUE(is_known_event(e.name)) << e.name;
        EXPECT_NE(std::find(kinds.begin(), kinds.end(), e.kind), kinds.end()) << e.name;
    }
    // The interpreter takes every one of them, in one log.
    auto image = parse_process_log(log, "log.jsonl");
    ASSERT_TRUE(image) << image.error().message;
    EXPECT_TRUE(image->summary.unknown_events.empty());
}

// The recorder names events and fields only through the schema: a literal
// where a name is expected would be a name the readers may not know.
TEST(EventSchema, TheRecorderWritesNoNameOfItsOwn) {
    const std::regex literal_name(
        R"re(\b(begin_event|write_event|emit|record|write_exec_event|add_variables|add_module)\(\s*(line,\s*)?"|\b(line|fallback)\.(field\w*|key)\(\s*")re");
    std::size_t files = 0;
    for (const fs::directory_entry& f : fs::directory_iterator(kSource / "preload")) {
        if (f.path().extension() != ".cpp") continue;
        ++files;
        std::ifstream in(f.path());
        std::string text;
        std::size_t n = 0;
        while (std::getline(in, text)) {
            ++n;
            EXPECT_FALSE(std::regex_search(text, literal_name)) << f.path().filename().string() << ":" << n << ": "
                                                                << text;
        }
    }
    EXPECT_GT(files, 10u);
}

namespace {

// A Cpuset-valued field of a line as the reader would have it.
std::optional<Cpuset> mask_of(const json& j, const char* key) {
    if (!j.contains(key) || !j[key].is_string()) return std::nullopt;
    return Cpuset::parse(j[key].get<std::string>());
}

// The mask the interpreter gives thread r at time t.
std::optional<Cpuset> mask_at(const ThreadRecord& r, std::int64_t t) {
    std::optional<Cpuset> out;
    for (const MaskChange& c : r.masks)
        if (c.t <= t) out = c.cpuset;
    return out;
}

const ThreadRecord* thread(const ProcessImage& p, std::int64_t tid, std::int64_t t) {
    const ThreadRecord* found = nullptr;
    for (const ThreadRecord& r : p.threads)
        if (r.tid == tid && r.start_t <= t && (found == nullptr || r.start_t >= found->start_t)) found = &r;
    return found;
}

std::int64_t int_or(const json& j, const char* key, std::int64_t fallback = -1) {
    return j.contains(key) && j[key].is_number_integer() ? j[key].get<std::int64_t>() : fallback;
}

std::string string_or_empty(const json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// Checks one recorded line against the schema and against the image the
// reader made of its log; returns its kind.
EventKind check_line(const json& j, const ProcessImage& p, const std::string& where) {
    const EventKind kind = schema::event_kind(j.value(schema::common::ev, ""));
    EXPECT_NE(kind, EventKind::unknown) << where << ": an event the schema does not have";
    if (kind == EventKind::unknown) return kind;
    const std::set<std::string_view> allowed = fields_of(kind);
    for (const auto& [key, value] : j.items())
        EXPECT_TRUE(allowed.count(key)) << where << ": field '" << key << "' is not in the schema";
    const std::int64_t t = j[schema::common::t];
    const std::int64_t tid = j[schema::common::tid];
    switch (kind) {
        case EventKind::process_start: {
            namespace start = schema::process_start;
            EXPECT_EQ(p.pid, j[schema::common::pid].get<std::int64_t>()) << where;
            EXPECT_EQ(p.ppid, int_or(j, start::ppid)) << where;
            EXPECT_EQ(p.host, string_or_empty(j, start::host)) << where;
            EXPECT_EQ(p.exe, string_or_empty(j, start::exe)) << where;
            EXPECT_EQ(p.origin, string_or_empty(j, start::origin)) << where;
            EXPECT_EQ(p.environment_rank, int_or(j, start::rank)) << where;
            EXPECT_EQ(p.launcher, string_or_empty(j, start::launcher)) << where;
            EXPECT_EQ(p.cgroup_cpuset, mask_of(j, start::cgroup_cpuset)) << where;
            EXPECT_EQ(p.quota_at_start.quota_us, int_or(j, start::cpu_quota_us)) << where;
            EXPECT_EQ(p.quota_at_start.period_us, int_or(j, start::cpu_period_us)) << where;
            EXPECT_EQ(p.quota_at_start.throttled, int_or(j, start::cpu_throttled)) << where;
            EXPECT_EQ(p.cpu_quota_cgroup, string_or_empty(j, start::cpu_quota_cgroup)) << where;
            EXPECT_EQ(p.cmdline.size(), j[start::cmdline].size()) << where;
            for (const auto& [key, value] : j[start::tracer].items())
                EXPECT_NE(std::find(std::begin(start::tracer_info::fields), std::end(start::tracer_info::fields), key),
                          std::end(start::tracer_info::fields))
                    << where << ": tracer." << key;
            const ThreadRecord& main = p.threads.front();
            EXPECT_TRUE(main.is_main);
            EXPECT_EQ(mask_at(main, t), mask_of(j, start::cpuset)) << where;
            break;
        }
        case EventKind::thread_start: {
            namespace start = schema::thread_start;
            const ThreadRecord* r = thread(p, tid, t);
            EXPECT_TRUE(r && r->start_t == t) << where;
            if (!r) break;
            EXPECT_EQ(r->seq, int_or(j, start::seq)) << where;
            EXPECT_EQ(r->creator_tid, int_or(j, start::creator_tid)) << where;
            EXPECT_EQ(r->creator_module, string_or_empty(j, start::creator_module)) << where;
            EXPECT_EQ(r->start_module, string_or_empty(j, start::start_module)) << where;
            EXPECT_EQ(r->pthread_handle, string_or_empty(j, start::pthread)) << where;
            EXPECT_EQ(r->create_t, int_or(j, start::create_t)) << where;
            EXPECT_EQ(r->creator_cpu_ns, int_or(j, start::creator_cpu_ns)) << where;
            EXPECT_EQ(r->first_cpu, int_or(j, start::cpu)) << where;
            EXPECT_EQ(r->attr_cpuset, mask_of(j, start::attr_cpuset)) << where;
            EXPECT_EQ(mask_at(*r, t), mask_of(j, start::cpuset)) << where;
            // A thread that ended within 1 ms: its one line is its end too.
            if (j.contains(start::end_t)) {
                EXPECT_TRUE(r->ended_itself && r->short_lived) << where;
                EXPECT_EQ(r->end_t, int_or(j, start::end_t)) << where;
                EXPECT_EQ(r->end_how, string_or_empty(j, start::how)) << where;
                EXPECT_EQ(r->last_cpu, int_or(j, start::end_cpu)) << where;
                EXPECT_EQ(r->end_t - r->start_t, int_or(j, start::duration_ns)) << where;
            }
            break;
        }
        case EventKind::thread_end: {
            namespace end = schema::thread_end;
            const ThreadRecord* r = thread(p, tid, t);
            EXPECT_TRUE(r && r->ended_itself && r->end_t == t) << where;
            if (!r) break;
            EXPECT_EQ(r->end_how, string_or_empty(j, end::how)) << where;
            EXPECT_EQ(r->short_lived, j.value(end::short_lived, false)) << where;
            EXPECT_EQ(r->last_cpu, int_or(j, end::cpu)) << where;
            EXPECT_EQ(r->nvcsw, int_or(j, end::nvcsw)) << where;
            EXPECT_EQ(r->nivcsw, int_or(j, end::nivcsw)) << where;
            if (!r->cpu_time_at_exit) {
                EXPECT_EQ(r->utime_us, int_or(j, end::utime_us)) << where;
                EXPECT_EQ(r->stime_us, int_or(j, end::stime_us)) << where;
                EXPECT_EQ(r->run_delay_ns, int_or(j, end::run_delay_ns)) << where;
                EXPECT_EQ(r->run_slices, int_or(j, end::run_slices)) << where;
            }
            EXPECT_EQ(r->end_mask ? std::optional<Cpuset>(r->end_mask->cpuset) : std::nullopt,
                      mask_of(j, end::cpuset))
                << where;
            break;
        }
        case EventKind::thread_usage_at_exit: {
            namespace usage = schema::thread_usage_at_exit;
            const ThreadRecord* r = thread(p, int_or(j, usage::target_tid), t);
            EXPECT_TRUE(r) << where;
            if (!r || r->ended_itself) break;  // its own thread_end wins
            EXPECT_TRUE(r->cpu_time_at_exit) << where;
            EXPECT_EQ(r->utime_us, int_or(j, usage::cpu_us)) << where;
            EXPECT_EQ(r->run_delay_ns, int_or(j, usage::run_delay_ns)) << where;
            EXPECT_EQ(r->untraced, j.value(usage::untraced, false)) << where;
            if (r->untraced) {
                EXPECT_EQ(r->name, string_or_empty(j, usage::name)) << where;
            }
            break;
        }
        case EventKind::join: {
            namespace join = schema::join;
            const ThreadRecord* r = thread(p, tid, t);
            EXPECT_TRUE(r) << where;
            if (!r) break;
            const auto w = std::find_if(r->waits.begin(), r->waits.end(),
                                        [&](const WaitRecord& w) { return w.end_t == t; });
            EXPECT_NE(w, r->waits.end()) << where;
            if (w == r->waits.end()) break;
            EXPECT_EQ(w->cpu_ns, int_or(j, join::cpu_ns)) << where;
            EXPECT_EQ(w->target_tid, int_or(j, join::target_tid)) << where;
            EXPECT_EQ(w->target_pthread, string_or_empty(j, join::target_pthread)) << where;
            break;
        }
        case EventKind::affinity: {
            namespace affinity = schema::affinity;
            if (int_or(j, affinity::rc) != 0 || !j.value(affinity::target_in_process, false)) break;
            const ThreadRecord* r = thread(p, int_or(j, affinity::target_tid), t);
            EXPECT_TRUE(r) << where;
            if (r) {
                EXPECT_EQ(mask_at(*r, t), mask_of(j, affinity::cpuset)) << where;
            }
            break;
        }
        case EventKind::thread_name: {
            namespace naming = schema::thread_name;
            const ThreadRecord* r = thread(p, int_or(j, naming::target_tid), t);
            if (r) {
                EXPECT_EQ(r->name, string_or_empty(j, naming::name)) << where;
            }
            break;
        }
        case EventKind::mpi_init:
        case EventKind::mpi_finalize: {
            namespace snapshot = schema::mpi_snapshot;
            EXPECT_EQ(p.mpi_rank, int_or(j, snapshot::rank)) << where;
            if (kind == EventKind::mpi_init) {
                EXPECT_EQ(p.mpi_size, int_or(j, snapshot::size)) << where;
            }
            const std::set<std::string_view> item_fields(std::begin(snapshot::thread::fields),
                                                         std::end(snapshot::thread::fields));
            for (const json& th : j[snapshot::threads]) {
                for (const auto& [key, value] : th.items())
                    EXPECT_TRUE(item_fields.count(key)) << where << ": threads[]." << key;
                const ThreadRecord* r = thread(p, int_or(th, snapshot::thread::tid), t);
                EXPECT_TRUE(r) << where;
                if (r) {
                    EXPECT_EQ(mask_at(*r, t), mask_of(th, snapshot::thread::cpuset)) << where;
                }
            }
            break;
        }
        case EventKind::process_end: {
            namespace end = schema::process_end;
            if (string_or_empty(j, end::how) == "signal") {
                // The fatal-signal path's figures: the signal stays the end.
                EXPECT_EQ(p.end_event, EventKind::signal) << where;
                EXPECT_EQ(p.end_signal, int_or(j, end::signal)) << where;
                EXPECT_FALSE(p.exit_status.has_value()) << where;
            } else {
                EXPECT_EQ(p.end_event, EventKind::process_end) << where;
                EXPECT_EQ(p.end_how, string_or_empty(j, end::how)) << where;
                EXPECT_EQ(p.exit_status, std::optional<std::int64_t>(int_or(j, end::status))) << where;
            }
            EXPECT_EQ(p.quota_at_end.quota_us, int_or(j, end::cpu_quota_us)) << where;
            EXPECT_EQ(p.quota_at_end.periods, int_or(j, end::cpu_periods)) << where;
            EXPECT_EQ(p.quota_at_end.throttled_ns, int_or(j, end::cpu_throttled_ns)) << where;
            EXPECT_EQ(p.utime_us, int_or(j, end::utime_us)) << where;
            EXPECT_EQ(p.stime_us, int_or(j, end::stime_us)) << where;
            EXPECT_EQ(p.nvcsw, int_or(j, end::nvcsw)) << where;
            EXPECT_EQ(p.nivcsw, int_or(j, end::nivcsw)) << where;
            EXPECT_EQ(p.main_cpu_us, int_or(j, end::main_cpu_us)) << where;
            EXPECT_EQ(p.recorder_cpu_us, int_or(j, end::recorder_cpu_us)) << where;
            EXPECT_EQ(p.main_run_delay_ns, int_or(j, end::main_run_delay_ns)) << where;
            EXPECT_EQ(static_cast<std::int64_t>(p.threads_untraced), int_or(j, end::threads_untraced, 0)) << where;
            break;
        }
        case EventKind::signal:
            if (j.value(schema::signal::fatal, false) && p.end_event == EventKind::signal) {
                EXPECT_EQ(p.end_signal, int_or(j, schema::signal::signal)) << where;
                EXPECT_EQ(p.end_how, "signal " + string_or_empty(j, schema::signal::name)) << where;
            }
            break;
        case EventKind::log_stopped:
            EXPECT_EQ(p.log_ends_early, "log-stopped") << where;
            EXPECT_EQ(p.log_stop_error, string_or_empty(j, schema::log_stopped::error)) << where;
            break;
        default: break;
    }
    return kind;
}

}  // namespace

// Real programs under the real recorder: each line holds only the schema's
// fields, and the reader's image agrees with it field by field. A writer
// and a reader that spelled a field differently fail here.
TEST(EventSchema, RecordedLinesAreReadAsTheyWereWritten) {
    if (!stacksage::testing::is_executable(kCli)) GTEST_SKIP() << "stacksage is not built";
    stacksage::testing::TempDir dir;
    const std::string examples = kBin + "/examples/";
    const std::vector<std::pair<std::string, std::string>> runs = {
        {"", examples + "pthreads_affinity"},
        {"OMP_NUM_THREADS=3", examples + "omp_gomp 0.02 0.1"},
        {"", examples + "fork_exec"},
        {"", examples + "thread_exit"},
        {"", examples + "busy_threads 3 0.05 0.02 join"},
        {"", examples + "crash segv"},
        {"", examples + "fault_cases exec-chain 1"},
        {"", examples + "odd_recordings glibc-threads"},
    };
    int n = 0;
    for (const auto& [env, command] : runs) {
        const std::string program = command.substr(0, command.find(' '));
        if (!stacksage::testing::is_executable(program)) continue;
        stacksage::testing::shell(env + " " + kCli + " run -q -o " + dir.str() + "/" +
                                  std::to_string(n++) + " -- " + command);
    }
    std::map<EventKind, std::size_t> seen;
    std::size_t short_threads = 0;  // thread_start lines that carry their end
    std::size_t logs = 0;
    for (const fs::directory_entry& f : fs::recursive_directory_iterator(dir.path())) {
        if (!is_node_file_name(f.path().filename().string(), formats::node_file::FileKind::events)) continue;
        auto node = read_node_file(f.path().string(), f.path().string(), formats::node_file::FileKind::events);
        ASSERT_TRUE(node) << node.error().message;
        for (const NodeStream& stream : node->streams) {
            const std::string name = node_stream_label(f.path().string(), stream.stream);
            ++logs;
            auto image = parse_process_log(stream.text, name, stream.ended);
            ASSERT_TRUE(image) << image.error().message;
            EXPECT_TRUE(image->summary.unknown_events.empty()) << name;
            std::istringstream in{std::string(stream.text)};
            std::string text;
            std::size_t line_no = 0;
            while (std::getline(in, text)) {
                ++line_no;
                const json j = json::parse(text, nullptr, false);
                ASSERT_TRUE(j.is_object()) << name << ":" << line_no;
                ++seen[check_line(j, *image, name + ":" + std::to_string(line_no))];
                if (j.contains(schema::thread_start::end_t)) ++short_threads;
            }
        }
    }
    ASSERT_GT(logs, 3u);
    for (EventKind k : {EventKind::process_start, EventKind::process_end, EventKind::thread_start,
                        EventKind::thread_end, EventKind::affinity, EventKind::thread_name, EventKind::fork,
                        EventKind::exec, EventKind::signal, EventKind::model, EventKind::thread_usage_at_exit})
        EXPECT_GT(seen[k], 0u) << schema::event_name(k) << " was not recorded: the runs above should write it";
    EXPECT_GT(short_threads, 0u) << "no thread ended within 1 ms in one line";
}
