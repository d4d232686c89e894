// bench_json_readers: our event-log line reader (parsers/json_document)
// against nlohmann::json's SAX interface and simdjson (On-Demand, and its
// fully validating DOM parser), on real event logs (issue 19, part 6;
// docs/PERFORMANCE.md, section "Readers against the libraries").
//
//   bench_json_readers [--check] [google-benchmark flags] NAME=DIR...
//
// Every *.jsonl under each DIR is one input set. Each candidate parses every
// line into the fields the loader reads (parsers/process_log.cpp): the common
// ones ("v", "ev", "t", "pid", "tid", "truncated") and, per event, the ones
// its handler reads (ids, times, modules, masks, the command line, the
// environment, the threads of an MPI snapshot). The candidates must agree on
// a checksum of what they read before anything is timed. Lines are split
// beforehand (the same for all); blank lines and lines with NUL bytes (the
// torn tails the loader sets aside) are left out.
//
// --check: runs broken and hostile lines through every candidate and prints
// which accept them and what each says (no timing).
#include <benchmark/benchmark.h>

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/event_log_reader.hpp"
#include "parsers/json_document.hpp"

namespace {

using stacksage::JsonDocument;
using stacksage::JsonType;

// ---------------------------------------------------------------------------
// What the loader reads.

enum class Kind : std::uint8_t { Int, String, Bool };

struct Key {
    std::string_view name;
    Kind kind;
};

// Top-level keys read by parsers/event_log_reader.cpp and process_log.cpp.
constexpr std::array<Key, 50> kKeys = {{
    {"v", Kind::Int},
    {"ev", Kind::String},
    {"t", Kind::Int},
    {"pid", Kind::Int},
    {"tid", Kind::Int},
    {"truncated", Kind::Bool},
    {"seq", Kind::Int},
    {"creator_tid", Kind::Int},
    {"cpu", Kind::Int},
    {"create_t", Kind::Int},
    {"creator_cpu_ns", Kind::Int},
    {"utime_us", Kind::Int},
    {"stime_us", Kind::Int},
    {"run_delay_ns", Kind::Int},
    {"run_slices", Kind::Int},
    {"nvcsw", Kind::Int},
    {"nivcsw", Kind::Int},
    {"target_tid", Kind::Int},
    {"rank", Kind::Int},
    {"size", Kind::Int},
    {"thread_level", Kind::Int},
    {"status", Kind::Int},
    {"main_run_delay_ns", Kind::Int},
    {"main_run_slices", Kind::Int},
    {"main_cpu_us", Kind::Int},
    {"threads_untraced", Kind::Int},
    {"ppid", Kind::Int},
    {"cpu_us", Kind::Int},
    {"begin_t", Kind::Int},
    {"cpu_ns", Kind::Int},
    {"rc", Kind::Int},
    {"creator_module", Kind::String},
    {"start_module", Kind::String},
    {"attr_cpuset", Kind::String},
    {"cpuset", Kind::String},
    {"pthread", Kind::String},
    {"how", Kind::String},
    {"name", Kind::String},
    {"target_pthread", Kind::String},
    {"error", Kind::String},
    {"host", Kind::String},
    {"exe", Kind::String},
    {"origin", Kind::String},
    {"launcher", Kind::String},
    {"cgroup_cpuset", Kind::String},
    {"online_cpus", Kind::String},
    {"short_lived", Kind::Bool},
    {"fatal", Kind::Bool},
    {"ok", Kind::Bool},
    {"target_in_process", Kind::Bool},
}};
constexpr int kSlots = static_cast<int>(kKeys.size());

// Slot of a key, or -1: what a streaming reader does with each key it meets.
// A switch on the length, then a compare: the same for both streamers.
int slot_of(std::string_view key) {
    static const auto table = [] {
        std::array<std::vector<int>, 24> by_length{};
        for (int i = 0; i < kSlots; ++i) by_length[kKeys[static_cast<std::size_t>(i)].name.size()].push_back(i);
        return by_length;
    }();
    if (key.size() >= table.size()) return -1;
    for (int i : table[key.size()])
        if (std::memcmp(kKeys[static_cast<std::size_t>(i)].name.data(), key.data(), key.size()) == 0) return i;
    return -1;
}

int slot(std::string_view name) {
    for (int i = 0; i < kSlots; ++i)
        if (kKeys[static_cast<std::size_t>(i)].name == name) return i;
    std::abort();
}

// Per event: the slots its handler reads, and which nested values.
enum Nested : unsigned { kCmdline = 1, kEnv = 2, kIdentity = 4, kThreads = 8 };
struct EventKeys {
    std::vector<int> slots;
    unsigned nested = 0;
};

const EventKeys& keys_of(std::string_view ev) {
    static const std::vector<std::pair<std::string_view, EventKeys>> table = [] {
        auto s = [](std::initializer_list<std::string_view> names) {
            std::vector<int> out;
            for (auto n : names) out.push_back(slot(n));
            return out;
        };
        std::vector<std::pair<std::string_view, EventKeys>> t;
        t.push_back({"process_start",
                     {s({"ppid", "rank", "host", "exe", "origin", "launcher", "cpuset", "cgroup_cpuset", "online_cpus",
                         "cpu"}),
                      kCmdline | kEnv | kIdentity}});
        t.push_back({"thread_start",
                     {s({"seq", "creator_tid", "creator_module", "start_module", "attr_cpuset", "cpuset", "cpu",
                         "pthread", "create_t", "creator_cpu_ns"}),
                      0}});
        t.push_back({"thread_end",
                     {s({"how", "short_lived", "utime_us", "stime_us", "run_delay_ns", "run_slices", "nvcsw", "nivcsw",
                         "cpu", "cpuset"}),
                      0}});
        t.push_back({"join", {s({"begin_t", "cpu_ns", "target_tid", "target_pthread"}), 0}});
        t.push_back({"thread_usage_at_exit", {s({"target_tid", "cpu_us", "run_delay_ns", "run_slices"}), 0}});
        t.push_back({"affinity", {s({"rc", "target_tid", "target_in_process", "cpuset"}), 0}});
        t.push_back({"thread_name", {s({"target_tid", "name", "target_pthread"}), 0}});
        t.push_back({"mpi_init", {s({"rank", "size", "thread_level"}), kThreads}});
        t.push_back({"mpi_finalize", {s({"rank", "size", "thread_level"}), kThreads}});
        t.push_back({"process_end",
                     {s({"how", "status", "utime_us", "stime_us", "nvcsw", "nivcsw", "main_run_delay_ns",
                         "main_run_slices", "main_cpu_us", "threads_untraced"}),
                      0}});
        t.push_back({"signal", {s({"fatal", "name"}), 0}});
        t.push_back({"topology", {s({"ok", "error"}), 0}});
        return t;
    }();
    static const EventKeys none;
    for (const auto& [name, keys] : table)
        if (name == ev) return keys;
    return none;
}

constexpr std::array<int, 6> kCommon = {0, 1, 2, 3, 4, 5};

// What one line gave. A slot holds the first occurrence of its key (as
// JsonDocument::find does), when of the right type.
struct Fields {
    std::array<bool, kSlots> taken{};    // its key was met (with a value of any type)
    std::array<bool, kSlots> present{};  // and the value was of the slot's type
    std::array<std::int64_t, kSlots> integer{};
    std::array<std::string_view, kSlots> text{};
    std::array<bool, kSlots> boolean{};
    // Nested values, summed: count, then string bytes / tids.
    std::uint64_t cmdline = 0, env = 0, identity = 0, threads = 0;

    void clear() {
        present.fill(false);
        taken.fill(false);
        cmdline = env = identity = threads = 0;
    }
    void set_int(int s, std::int64_t v) {
        if (s < 0 || taken[static_cast<std::size_t>(s)] || kKeys[static_cast<std::size_t>(s)].kind != Kind::Int) return;
        present[static_cast<std::size_t>(s)] = taken[static_cast<std::size_t>(s)] = true;
        integer[static_cast<std::size_t>(s)] = v;
    }
    void set_string(int s, std::string_view v) {
        if (s < 0 || taken[static_cast<std::size_t>(s)] || kKeys[static_cast<std::size_t>(s)].kind != Kind::String) return;
        present[static_cast<std::size_t>(s)] = taken[static_cast<std::size_t>(s)] = true;
        text[static_cast<std::size_t>(s)] = v;
    }
    void set_bool(int s, bool v) {
        if (s < 0 || taken[static_cast<std::size_t>(s)] || kKeys[static_cast<std::size_t>(s)].kind != Kind::Bool) return;
        present[static_cast<std::size_t>(s)] = taken[static_cast<std::size_t>(s)] = true;
        boolean[static_cast<std::size_t>(s)] = v;
    }
    // A key met again after a value of another type: the first one wins.
    void seen(int s) {
        if (s >= 0) taken[static_cast<std::size_t>(s)] = true;
    }
};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

// The checksum of what the loader would take from the line: the common
// fields and its event's own.
std::uint64_t fold(const Fields& f) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    auto one = [&](int s) {
        const auto i = static_cast<std::size_t>(s);
        if (!f.present[i]) return void(h = mix(h, 1));
        switch (kKeys[i].kind) {
            case Kind::Int: h = mix(h, static_cast<std::uint64_t>(f.integer[i])); break;
            case Kind::Bool: h = mix(h, f.boolean[i] ? 3 : 2); break;
            case Kind::String:
                h = mix(h, f.text[i].size());
                for (char c : f.text[i]) h = mix(h, static_cast<unsigned char>(c));
                break;
        }
    };
    for (int s : kCommon) one(s);
    const EventKeys& k = keys_of(f.present[1] ? f.text[1] : std::string_view());
    for (int s : k.slots) one(s);
    if (k.nested & kCmdline) h = mix(h, f.cmdline);
    if (k.nested & kEnv) h = mix(h, f.env);
    if (k.nested & kIdentity) h = mix(h, f.identity);
    if (k.nested & kThreads) h = mix(h, f.threads);
    return h;
}

// Nested values are summed the same way by every reader.
std::uint64_t add_string(std::uint64_t acc, std::string_view s) { return acc * 31 + s.size() + 1; }
std::uint64_t add_member(std::uint64_t acc, std::string_view k, std::string_view v) {
    return acc * 31 + k.size() * 7 + v.size() + 1;
}
std::uint64_t add_thread(std::uint64_t acc, std::int64_t tid, std::string_view name, std::string_view cpuset) {
    return acc * 31 + static_cast<std::uint64_t>(tid) * 5 + name.size() * 3 + cpuset.size() + 1;
}

// ---------------------------------------------------------------------------
// Candidate 1: ours, as process_log.cpp uses it (get_* by key on the parsed line).

struct Ours {
    JsonDocument doc;
    bool read(std::string_view line, Fields& f, std::string* error) {
        f.clear();
        if (!doc.parse(line)) {
            if (error) *error = std::string(doc.error()) + " at byte " + std::to_string(doc.error_offset() + 1);
            return false;
        }
        if (doc.type(doc.root()) != JsonType::Object) {
            if (error) *error = "not a JSON object";
            return false;
        }
        for (int s : kCommon) get(s, f);
        const EventKeys& k = keys_of(doc.get_string("ev").value_or(std::string_view()));
        for (int s : k.slots) get(s, f);
        if (k.nested & kCmdline) {
            const auto cmd = doc.find(doc.root(), "cmdline");
            for (auto a = doc.first_child(cmd); a != JsonDocument::kNone; a = doc.next(a))
                if (auto s = doc.as_string(a)) f.cmdline = add_string(f.cmdline, *s);
        }
        auto members = [&](std::string_view object, std::uint64_t& acc) {
            const auto o = doc.find(doc.root(), object);
            if (doc.type(o) != JsonType::Object) return;
            for (auto m = doc.first_child(o); m != JsonDocument::kNone; m = doc.next(m))
                if (auto s = doc.as_string(m)) acc = add_member(acc, doc.key(m), *s);
        };
        if (k.nested & kEnv) members("env", f.env);
        if (k.nested & kIdentity) members("identity", f.identity);
        if (k.nested & kThreads) {
            const auto threads = doc.find(doc.root(), "threads");
            if (doc.type(threads) == JsonType::Array)
                for (auto th = doc.first_child(threads); th != JsonDocument::kNone; th = doc.next(th)) {
                    const auto tid = doc.as_int(doc.find(th, "tid"));
                    if (!tid) continue;
                    f.threads = add_thread(f.threads, *tid, doc.as_string(doc.find(th, "name")).value_or(""),
                                           doc.as_string(doc.find(th, "cpuset")).value_or(""));
                }
        }
        return true;
    }
    void get(int s, Fields& f) const {
        const std::string_view name = kKeys[static_cast<std::size_t>(s)].name;
        switch (kKeys[static_cast<std::size_t>(s)].kind) {
            case Kind::Int:
                if (auto v = doc.get_int(name)) f.set_int(s, *v);
                break;
            case Kind::String:
                if (auto v = doc.get_string(name)) f.set_string(s, *v);
                break;
            case Kind::Bool:
                if (auto v = doc.get_bool(name)) f.set_bool(s, *v);
                break;
        }
    }
};

// ---------------------------------------------------------------------------
// Candidate 2: nlohmann::json's SAX interface (no tree). Strings arrive in
// the lexer's buffer, reused for the next one: the fields kept are copied
// into an arena reserved to the line's size (decoded strings are never
// longer), so that no view moves.

constexpr std::size_t kMaxDepth = 64;  // as JsonDocument

struct NlohmannSax {
    using json = nlohmann::json;
    Fields* f = nullptr;
    std::string arena;
    std::string* error = nullptr;
    std::size_t depth = 0;
    int pending = -1;  // slot of the root member whose value comes next
    enum class In { None, Cmdline, Env, Identity, Threads, Thread } in = In::None;
    std::size_t in_depth = 0;
    std::string_view member;  // key inside env / identity / a thread
    std::int64_t th_tid = 0;
    bool th_has_tid = false;
    std::string_view th_name, th_cpuset;
    bool th_name_set = false, th_cpuset_set = false;

    std::string_view keep(const std::string& s) {
        const std::size_t at = arena.size();
        arena.append(s);
        return std::string_view(arena).substr(at);
    }
    void scalar_at_root() { pending = -1; }

    bool null() {
        if (depth == 1) f->seen(pending), scalar_at_root();
        return true;
    }
    bool boolean(bool v) {
        if (depth == 1) {
            f->set_bool(pending, v);
            f->seen(pending);
            scalar_at_root();
        }
        return true;
    }
    bool integer(std::int64_t v) {
        if (depth == 1) {
            f->set_int(pending, v);
            f->seen(pending);
            scalar_at_root();
        } else if (in == In::Thread && depth == 3 && member == "tid" && !th_has_tid) {
            th_tid = v;
            th_has_tid = true;
        }
        return true;
    }
    bool number_integer(json::number_integer_t v) { return integer(v); }
    bool number_unsigned(json::number_unsigned_t v) {
        if (v <= static_cast<json::number_unsigned_t>(INT64_MAX)) return integer(static_cast<std::int64_t>(v));
        return null();  // beyond int64: not an integer to the loader
    }
    bool number_float(json::number_float_t, const std::string&) { return null(); }
    bool string(std::string& v) {
        if (depth == 1) {
            if (pending >= 0 && kKeys[static_cast<std::size_t>(pending)].kind == Kind::String &&
                !f->taken[static_cast<std::size_t>(pending)])
                f->set_string(pending, keep(v));
            f->seen(pending);
            scalar_at_root();
        } else if (in == In::Cmdline && depth == 2) {
            f->cmdline = add_string(f->cmdline, v);
        } else if (in == In::Env && depth == 2) {
            f->env = add_member(f->env, member, v);
        } else if (in == In::Identity && depth == 2) {
            f->identity = add_member(f->identity, member, v);
        } else if (in == In::Thread && depth == 3) {
            if (member == "name" && !th_name_set) th_name = keep(v), th_name_set = true;
            else if (member == "cpuset" && !th_cpuset_set) th_cpuset = keep(v), th_cpuset_set = true;
        }
        return true;
    }
    bool binary(json::binary_t&) { return true; }
    bool open(bool object) {
        if (depth == 0) root_was_object = object;
        if (++depth > kMaxDepth + 1) {
            if (error) *error = "nesting too deep";
            return false;
        }
        if (depth == 2) {
            // A container as a root member's value.
            const std::string_view k = pending_key;
            if (!object && k == "cmdline") in = In::Cmdline;
            else if (object && k == "env") in = In::Env;
            else if (object && k == "identity") in = In::Identity;
            else if (!object && k == "threads") in = In::Threads;
            else in = In::None;
            if (in != In::None && seen_container(k)) in = In::None;  // only the first one counts
            f->seen(pending);
            pending = -1;
        } else if (depth == 3 && in == In::Threads && object) {
            in = In::Thread;
            th_has_tid = th_name_set = th_cpuset_set = false;
            th_name = th_cpuset = {};
        }
        return true;
    }
    bool close() {
        if (depth == 3 && in == In::Thread) {
            if (th_has_tid) f->threads = add_thread(f->threads, th_tid, th_name, th_cpuset);
            in = In::Threads;
        }
        if (depth == 2) in = In::None;
        --depth;
        return true;
    }
    bool start_object(std::size_t) { return open(true); }
    bool end_object() { return close(); }
    bool start_array(std::size_t) { return open(false); }
    bool end_array() { return close(); }
    std::string pending_key;
    unsigned containers_seen = 0;
    bool seen_container(std::string_view k) {
        const unsigned bit = k == "cmdline" ? 1 : k == "env" ? 2 : k == "identity" ? 4 : 8;
        const bool was = containers_seen & bit;
        containers_seen |= bit;
        return was;
    }
    bool key(std::string& k) {
        if (depth == 1) {
            pending = slot_of(k);
            pending_key = k;  // short keys: kept in its small buffer
        } else {
            member = keep(k);
        }
        return true;
    }
    bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
        if (error) *error = ex.what() + std::string(" (byte ") + std::to_string(position) + ")";
        return false;
    }

    bool read(std::string_view line, Fields& fields, std::string* err) {
        fields.clear();
        f = &fields;
        error = err;
        arena.clear();
        if (arena.capacity() < line.size()) arena.reserve(line.size());
        depth = 0;
        pending = -1;
        in = In::None;
        containers_seen = 0;
        root_was_object = false;
        if (!json::sax_parse(line.begin(), line.end(), this)) return false;
        // The root must be an object (the loader refuses anything else).
        if (!root_was_object) {
            if (err) *err = "not a JSON object";
            return false;
        }
        return true;
    }
    bool root_was_object = false;
};

using NlohmannReader = NlohmannSax;

// ---------------------------------------------------------------------------
// Candidate 3: simdjson On-Demand. Each line is iterated in place: the file's
// buffer carries SIMDJSON_PADDING bytes after its end, so every line has its
// padding. On-Demand checks only what it is asked for: the values of keys
// the loader does not read are skipped, not validated (see --check).

struct SimdOnDemand {
    simdjson::ondemand::parser parser;
    SimdOnDemand() {
        if (parser.allocate(1 << 20, kMaxDepth + 1)) std::abort();
    }

    bool read(simdjson::padded_string_view line, Fields& f, std::string* error) {
        f.clear();
        auto fail = [&](simdjson::error_code e) {
            if (error) *error = simdjson::error_message(e);
            return false;
        };
        simdjson::ondemand::document doc;
        if (auto e = parser.iterate(line).get(doc)) return fail(e);
        simdjson::ondemand::object obj;
        if (auto e = doc.get_object().get(obj)) return fail(e);
        unsigned containers_seen = 0;
        for (auto field_result : obj) {
            simdjson::ondemand::field field;
            if (auto e = std::move(field_result).get(field)) return fail(e);
            std::string_view key;
            if (auto e = field.unescaped_key().get(key)) return fail(e);
            simdjson::ondemand::value value = field.value();
            const int s = slot_of(key);
            if (s >= 0 && !f.taken[static_cast<std::size_t>(s)]) {
                simdjson::ondemand::json_type type;
                if (auto e = value.type().get(type)) return fail(e);
                switch (kKeys[static_cast<std::size_t>(s)].kind) {
                    case Kind::Int:
                        if (type == simdjson::ondemand::json_type::number) {
                            simdjson::ondemand::number_type nt;
                            if (auto e = value.get_number_type().get(nt)) return fail(e);
                            if (nt == simdjson::ondemand::number_type::signed_integer) {
                                std::int64_t v;
                                if (auto e = value.get_int64().get(v)) return fail(e);
                                f.set_int(s, v);
                            } else if (nt == simdjson::ondemand::number_type::unsigned_integer) {
                                std::uint64_t v;
                                if (auto e = value.get_uint64().get(v)) return fail(e);
                                if (v <= static_cast<std::uint64_t>(INT64_MAX)) f.set_int(s, static_cast<std::int64_t>(v));
                            }
                        }
                        break;
                    case Kind::String:
                        if (type == simdjson::ondemand::json_type::string) {
                            std::string_view v;
                            if (auto e = value.get_string().get(v)) return fail(e);
                            f.set_string(s, v);
                        }
                        break;
                    case Kind::Bool:
                        if (type == simdjson::ondemand::json_type::boolean) {
                            bool v;
                            if (auto e = value.get_bool().get(v)) return fail(e);
                            f.set_bool(s, v);
                        }
                        break;
                }
                f.seen(s);
                continue;
            }
            const unsigned bit = key == "cmdline" ? 1 : key == "env" ? 2 : key == "identity" ? 4 : key == "threads" ? 8 : 0;
            if (bit == 0 || (containers_seen & bit)) continue;
            containers_seen |= bit;
            simdjson::ondemand::json_type type;
            if (auto e = value.type().get(type)) return fail(e);
            if (bit == 1 && type == simdjson::ondemand::json_type::array) {
                for (auto a : value.get_array()) {
                    std::string_view v;
                    if (a.get_string().get(v) == simdjson::SUCCESS) f.cmdline = add_string(f.cmdline, v);
                }
            } else if ((bit == 2 || bit == 4) && type == simdjson::ondemand::json_type::object) {
                std::uint64_t& acc = bit == 2 ? f.env : f.identity;
                for (auto m : value.get_object()) {
                    std::string_view k, v;
                    if (auto e = m.unescaped_key().get(k)) return fail(e);
                    std::string kept(k);  // the key's buffer is reused by the value
                    if (m.value().get_string().get(v) == simdjson::SUCCESS) acc = add_member(acc, kept, v);
                }
            } else if (bit == 8 && type == simdjson::ondemand::json_type::array) {
                for (auto th : value.get_array()) {
                    simdjson::ondemand::object o;
                    if (th.get_object().get(o)) continue;
                    std::int64_t tid = 0;
                    bool has_tid = false;
                    std::string_view name, cpuset;
                    bool name_set = false, cpuset_set = false;
                    for (auto m : o) {
                        std::string_view k;
                        if (auto e = m.unescaped_key().get(k)) return fail(e);
                        if (k == "tid" && !has_tid) {
                            if (m.value().get_int64().get(tid) == simdjson::SUCCESS) has_tid = true;
                        } else if (k == "name" && !name_set) {
                            if (m.value().get_string().get(name) == simdjson::SUCCESS) name_set = true;
                        } else if (k == "cpuset" && !cpuset_set) {
                            if (m.value().get_string().get(cpuset) == simdjson::SUCCESS) cpuset_set = true;
                        }
                    }
                    if (has_tid) f.threads = add_thread(f.threads, tid, name, cpuset);
                }
            }
        }
        // simdjson 3.0 has no document::at_end(): a location still in
        // bounds after the object means text after it.
        const char* rest = nullptr;
        if (doc.current_location().get(rest) == simdjson::SUCCESS) {
            if (error) *error = "unexpected text after the JSON value";
            return false;
        }
        return true;
    }
};

// ---------------------------------------------------------------------------
// Candidate 4: simdjson's DOM parser: validates the whole line (as ours
// does), then the fields are read from its tape.

struct SimdDom {
    simdjson::dom::parser parser;
    SimdDom() {
        if (parser.allocate(1 << 20, kMaxDepth + 1)) std::abort();
    }

    bool read(simdjson::padded_string_view line, Fields& f, std::string* error) {
        f.clear();
        simdjson::dom::element root;
        if (auto e = parser.parse(line.data(), line.size(), false).get(root)) {
            if (error) *error = simdjson::error_message(e);
            return false;
        }
        simdjson::dom::object obj;
        if (root.get_object().get(obj)) {
            if (error) *error = "not a JSON object";
            return false;
        }
        unsigned containers_seen = 0;
        for (auto [key, value] : obj) {
            const int s = slot_of(key);
            if (s >= 0) {
                if (!f.taken[static_cast<std::size_t>(s)]) {
                    switch (kKeys[static_cast<std::size_t>(s)].kind) {
                        case Kind::Int:
                            if (value.is_int64()) f.set_int(s, value.get_int64().value_unsafe());
                            break;
                        case Kind::String:
                            if (value.is_string()) f.set_string(s, value.get_string().value_unsafe());
                            break;
                        case Kind::Bool:
                            if (value.is_bool()) f.set_bool(s, value.get_bool().value_unsafe());
                            break;
                    }
                    f.seen(s);
                }
                continue;
            }
            const unsigned bit = key == "cmdline" ? 1 : key == "env" ? 2 : key == "identity" ? 4 : key == "threads" ? 8 : 0;
            if (bit == 0 || (containers_seen & bit)) continue;
            containers_seen |= bit;
            if (bit == 1 && value.is_array()) {
                const simdjson::dom::array arr = value.get_array().value_unsafe();
                for (auto a : arr)
                    if (a.is_string()) f.cmdline = add_string(f.cmdline, a.get_string().value_unsafe());
            } else if ((bit == 2 || bit == 4) && value.is_object()) {
                std::uint64_t& acc = bit == 2 ? f.env : f.identity;
                const simdjson::dom::object o = value.get_object().value_unsafe();
                for (auto [k, v] : o)
                    if (v.is_string()) acc = add_member(acc, k, v.get_string().value_unsafe());
            } else if (bit == 8 && value.is_array()) {
                const simdjson::dom::array arr = value.get_array().value_unsafe();
                for (auto th : arr) {
                    if (!th.is_object()) continue;
                    simdjson::dom::element tid, name, cpuset;
                    if (th["tid"].get(tid) || !tid.is_int64()) continue;
                    std::string_view n, c;
                    if (th["name"].get(name) == simdjson::SUCCESS && name.is_string()) n = name.get_string().value_unsafe();
                    if (th["cpuset"].get(cpuset) == simdjson::SUCCESS && cpuset.is_string())
                        c = cpuset.get_string().value_unsafe();
                    f.threads = add_thread(f.threads, tid.get_int64().value_unsafe(), n, c);
                }
            }
        }
        return true;
    }
};

// ---------------------------------------------------------------------------
// Inputs.

struct LogFile {
    std::string name;
    std::string text;  // with SIMDJSON_PADDING bytes of capacity after its size
};

struct InputSet {
    std::string name;
    std::vector<LogFile> files;
    std::vector<std::string_view> lines;  // into files' texts
    std::size_t bytes = 0;                // of the lines, newlines included
};

std::vector<InputSet> g_inputs;

void load_set(const std::string& name, const std::string& dir) {
    InputSet set;
    set.name = name;
    std::vector<std::filesystem::path> paths;
    for (auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".jsonl") paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    set.files.reserve(paths.size());
    for (const auto& p : paths) {
        std::ifstream in(p, std::ios::binary);
        LogFile f{p.string(), {}};
        f.text.reserve(std::filesystem::file_size(p) + simdjson::SIMDJSON_PADDING);
        f.text.assign(std::istreambuf_iterator<char>(in), {});
        set.files.push_back(std::move(f));
    }
    for (const LogFile& f : set.files) {
        std::string_view t = f.text;
        while (!t.empty()) {
            std::size_t end = t.find('\n');
            std::string_view line = t.substr(0, end);
            t.remove_prefix(end == std::string_view::npos ? t.size() : end + 1);
            if (line.find('\0') != std::string_view::npos) continue;
            if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
            set.lines.push_back(line);
            set.bytes += line.size() + 1;
        }
    }
    g_inputs.push_back(std::move(set));
}

// The padding a line has: up to its file's allocation's end.
simdjson::padded_string_view padded(const InputSet& set, std::string_view line) {
    for (const LogFile& f : set.files) {
        const char* b = f.text.data();
        if (line.data() >= b && line.data() <= b + f.text.size())
            return simdjson::padded_string_view(line.data(), line.size(),
                                                static_cast<std::size_t>(b + f.text.capacity() - line.data()));
    }
    std::abort();
}

struct PaddedLines {
    std::vector<simdjson::padded_string_view> lines;
};

std::vector<PaddedLines> g_padded;

// ---------------------------------------------------------------------------
// Benchmarks.

template <class Reader>
std::uint64_t run_plain(Reader& r, const InputSet& set, std::size_t* failures) {
    Fields f;
    std::uint64_t sum = 0;
    for (std::string_view line : set.lines) {
        if (r.read(line, f, nullptr)) sum += fold(f);
        else ++*failures;
    }
    return sum;
}

template <class Reader>
std::uint64_t run_padded(Reader& r, const PaddedLines& lines, std::size_t* failures) {
    Fields f;
    std::uint64_t sum = 0;
    for (const auto& line : lines.lines) {
        if (r.read(line, f, nullptr)) sum += fold(f);
        else ++*failures;
    }
    return sum;
}

// Ours through the loader's own entry point: parse_event_log on each file
// (its line splitting, torn-line and NUL handling, common-field checks
// included), the event's fields read in the callback. Not comparable by
// checksum (it skips unknown events); shows what the loader adds around the
// reader.
bool is_event_log(const LogFile& f) { return !std::string_view(f.name).ends_with(".samples.jsonl"); }

std::uint64_t run_event_log_reader(const InputSet& set, std::size_t* failures) {
    std::uint64_t sum = 0;
    Fields f;
    for (const LogFile& file : set.files) {
        if (!is_event_log(file)) continue;  // sampling summaries: another reader
        auto r = stacksage::parse_event_log(file.text, file.name, [&](const stacksage::EventLogEvent& ev) {
            f.clear();
            const EventKeys& k = keys_of(ev.name);
            f.set_int(0, ev.version);
            f.set_string(1, ev.name);
            f.set_int(2, ev.t);
            f.set_int(3, ev.pid);
            f.set_int(4, ev.tid);
            f.set_bool(5, ev.truncated);
            for (int s : k.slots) {
                const std::string_view name = kKeys[static_cast<std::size_t>(s)].name;
                switch (kKeys[static_cast<std::size_t>(s)].kind) {
                    case Kind::Int:
                        if (auto v = ev.doc->get_int(name)) f.set_int(s, *v);
                        break;
                    case Kind::String:
                        if (auto v = ev.doc->get_string(name)) f.set_string(s, *v);
                        break;
                    case Kind::Bool:
                        if (auto v = ev.doc->get_bool(name)) f.set_bool(s, *v);
                        break;
                }
            }
            sum += fold(f);
        });
        if (!r) ++*failures;
    }
    return sum;
}

void finish(benchmark::State& state, const InputSet& set, std::size_t failures, std::size_t bytes = 0) {
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (bytes ? bytes : set.bytes)));
    state.counters["lines"] = static_cast<double>(set.lines.size());
    if (failures) state.SkipWithError("a line was refused");
}

void register_all() {
    for (std::size_t i = 0; i < g_inputs.size(); ++i) {
        const InputSet& set = g_inputs[i];
        const PaddedLines& padded_lines = g_padded[i];
        benchmark::RegisterBenchmark(("json/ours/" + set.name).c_str(), [&set](benchmark::State& state) {
            Ours r;
            std::size_t failures = 0;
            for (auto _ : state) benchmark::DoNotOptimize(run_plain(r, set, &failures));
            finish(state, set, failures);
        });
        benchmark::RegisterBenchmark(("json/ours_event_log_reader/" + set.name).c_str(), [&set](benchmark::State& state) {
            std::size_t failures = 0;
            for (auto _ : state) benchmark::DoNotOptimize(run_event_log_reader(set, &failures));
            std::size_t bytes = 0;
            for (const LogFile& f : set.files)
                if (is_event_log(f)) bytes += f.text.size();
            finish(state, set, failures, bytes);
        });
        benchmark::RegisterBenchmark(("json/nlohmann_sax/" + set.name).c_str(), [&set](benchmark::State& state) {
            NlohmannReader r;
            std::size_t failures = 0;
            for (auto _ : state) benchmark::DoNotOptimize(run_plain(r, set, &failures));
            finish(state, set, failures);
        });
        benchmark::RegisterBenchmark(("json/simdjson_ondemand/" + set.name).c_str(),
                                     [&set, &padded_lines](benchmark::State& state) {
                                         SimdOnDemand r;
                                         std::size_t failures = 0;
                                         for (auto _ : state)
                                             benchmark::DoNotOptimize(run_padded(r, padded_lines, &failures));
                                         finish(state, set, failures);
                                     });
        benchmark::RegisterBenchmark(("json/simdjson_dom/" + set.name).c_str(),
                                     [&set, &padded_lines](benchmark::State& state) {
                                         SimdDom r;
                                         std::size_t failures = 0;
                                         for (auto _ : state)
                                             benchmark::DoNotOptimize(run_padded(r, padded_lines, &failures));
                                         finish(state, set, failures);
                                     });
    }
}

// Every candidate must read the same fields from every line.
bool cross_check() {
    bool ok = true;
    for (std::size_t i = 0; i < g_inputs.size(); ++i) {
        const InputSet& set = g_inputs[i];
        Ours ours;
        NlohmannReader nl;
        SimdOnDemand od;
        SimdDom dom;
        Fields a, b, c, d;
        std::size_t differ = 0;
        for (std::size_t l = 0; l < set.lines.size(); ++l) {
            std::string ea, eb, ec, ed;
            const bool ra = ours.read(set.lines[l], a, &ea);
            const bool rb = nl.read(set.lines[l], b, &eb);
            const bool rc = od.read(g_padded[i].lines[l], c, &ec);
            const auto ha = ra ? fold(a) : 0;
            const auto hb = rb ? fold(b) : 0;
            const auto hc = rc ? fold(c) : 0;
            const bool rd = dom.read(g_padded[i].lines[l], d, &ed);
            const auto hd = rd ? fold(d) : 0;
            if (!ra || !rb || !rc || !rd || ha != hb || ha != hc || ha != hd) {
                if (differ++ < 5)
                    std::cerr << set.name << ": line " << l << " differs (ours " << ra << " " << ea << ", nlohmann "
                              << rb << " " << eb << ", ondemand " << rc << " " << ec << ", dom " << rd << " " << ed
                              << "): " << set.lines[l].substr(0, 200) << "\n";
            }
        }
        std::cerr << set.name << ": " << set.files.size() << " files, " << set.lines.size() << " lines, " << set.bytes
                  << " bytes; candidates " << (differ ? "DIFFER on " + std::to_string(differ) + " lines" : "agree")
                  << "\n";
        ok = ok && differ == 0;
    }
    return ok;
}

// ---------------------------------------------------------------------------
// --check: broken and hostile lines.

int check() {
    using namespace std::string_literals;
    const std::string common = R"("v":1,"ev":"thread_end","t":5,"pid":7,"tid":8)";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"empty", ""},
        {"open brace", "{"},
        {"missing value", R"({"a":})"},
        {"trailing comma", R"({"a":1,})"},
        {"missing colon", R"({"a" 1})"},
        {"missing comma", "[1 2]"},
        {"bad literal", R"({"a":tru})"},
        {"leading zero", R"({"a":01})"},
        {"unterminated string", R"({"a":"x)"},
        {"bad escape", R"({"a":"\q"})"},
        {"text after the value", "{} x"},
        {"raw control char", "{\"a\":\"\x01\"}"},
        {"torn line", R"({"v":1,"ev":"thr)"},
        {"200 nested arrays", std::string(200, '[') + std::string(200, ']')},
        {"second object on the line", "{" + common + "}{}"},
        {"bad literal in a key the loader does not read", "{" + common + R"(,"zzz":tru})"},
        {"unterminated array in a key not read", "{" + common + R"(,"zzz":[1,2})"},
        {"bad number in a key not read", "{" + common + R"(,"zzz":01})"},
        {"invalid UTF-8 in a string", "{" + common + ",\"how\":\"\xff\xfe\"}"},
        {"lone surrogate escape", "{" + common + R"(,"how":"\ud800"})"},
        {"number beyond double", "{" + common + R"(,"x":1e999})"},
        {"duplicate key", "{" + common + R"(,"tid":9})"},
        {"not an object", "[1,2]"},
    };
    Ours ours;
    NlohmannReader nl;
    SimdOnDemand od;
    SimdDom dom;
    std::printf("%-48s | %-40s | %-40s | %-40s | %s\n", "line", "ours", "nlohmann SAX", "simdjson On-Demand",
                "simdjson DOM");
    for (const auto& [what, text] : cases) {
        simdjson::padded_string p(text);
        Fields f;
        auto say = [](bool ok, const std::string& e) { return ok ? "accepted"s : "refused: " + e.substr(0, 30); };
        std::string e1, e2, e3, e4;
        const bool r1 = ours.read(text, f, &e1);
        const bool r2 = nl.read(text, f, &e2);
        const bool r3 = od.read(p, f, &e3);
        const bool r4 = dom.read(p, f, &e4);
        std::printf("%-48s | %-40s | %-40s | %-40s | %s\n", what.c_str(), say(r1, e1).c_str(), say(r2, e2).c_str(),
                    say(r3, e3).c_str(), say(r4, e4).c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    bool check_only = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--check") {
            check_only = true;
            continue;
        }
        const auto eq = a.find('=');
        if (eq == std::string::npos) {
            std::cerr << "usage: bench_json_readers [--check] [benchmark flags] NAME=DIR...\n";
            return 2;
        }
        load_set(a.substr(0, eq), a.substr(eq + 1));
    }
    if (check_only) return check();
    if (g_inputs.empty()) {
        std::cerr << "bench_json_readers: no input (NAME=DIR with *.jsonl under it)\n";
        return 2;
    }
    for (const InputSet& set : g_inputs) {
        PaddedLines p;
        for (std::string_view line : set.lines) p.lines.push_back(padded(set, line));
        g_padded.push_back(std::move(p));
    }
    // simdjson's stage 1 (finding the structure, checking UTF-8: the SIMD
    // part) runs on the kernel chosen at run time for this CPU; On-Demand's
    // stage 2 (walking the values) is compiled into this program for the
    // build's target (SIMDJSON_BUILTIN_IMPLEMENTATION, "fallback" for plain
    // x86-64; a -march=haswell build measured the same, docs/PERFORMANCE.md).
#define STACKSAGE_STR2(x) #x
#define STACKSAGE_STR(x) STACKSAGE_STR2(x)
    std::cerr << "simdjson " << STACKSAGE_STR(SIMDJSON_VERSION) << ": stage 1 on "
              << simdjson::get_active_implementation()->name() << " (run time), On-Demand stage 2 compiled for "
              << STACKSAGE_STR(SIMDJSON_BUILTIN_IMPLEMENTATION) << "\n";
    if (!cross_check()) return 1;
    register_all();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
