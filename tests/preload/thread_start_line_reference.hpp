// The thread_start line as the generic builder makes it (JsonLine, the
// common fields, then event_schema::thread_start's in order): what the
// recorder wrote before its line had a formatter of its own
// (preload/thread_start_line.hpp), and the oracle its output must equal byte
// for byte. Shared by its test and its micro-benchmark.
#pragma once

#include <cstddef>

#include "core/formats/event_schema.hpp"
#include "preload/json_line.hpp"
#include "preload/module_table.hpp"
#include "preload/thread_launch.hpp"

namespace stacksage::preload::testing {

inline void add_reference_module(JsonLine& line, const char* key, const Module* m) {
    line.key(key);
    if (m != nullptr && m->json != nullptr)
        line.json_value(m->json, m->json_len);
    else if (m != nullptr)
        line.str(m->path);
    else
        line.null();
}

// Returns the line's length, 0 when it did not fit.
inline std::size_t reference_thread_start_line(char* buf, std::size_t cap, const Launch& l, int pid,
                                               const ThreadEnding* ending) {
    namespace common = event_schema::common;
    namespace start = event_schema::thread_start;
    const std::uint64_t start_ns = l.start_ns.load(std::memory_order_relaxed);
    JsonLine line(buf, cap);
    line.open_object();
    line.field(common::v, static_cast<std::int64_t>(event_schema::kVersion));
    line.field(common::ev, start::event);
    line.field_u(common::t, start_ns);
    line.field(common::pid, static_cast<std::int64_t>(pid));
    line.field(common::tid, static_cast<std::int64_t>(l.tid));
    line.field_u(start::seq, l.seq);
    line.field_hex(start::pthread, l.pthread);
    line.field(start::creator_tid, static_cast<std::int64_t>(l.creator_tid));
    add_reference_module(line, start::creator_module, l.creator);
    add_reference_module(line, start::start_module, l.start_module);
    if (l.start_module != nullptr)
        line.field_hex(start::start_offset, reinterpret_cast<std::uintptr_t>(l.start) - l.start_module->start);
    line.field_u(start::create_t, l.create_ns);
    if (l.creator_cpu_ns >= 0) line.field(start::creator_cpu_ns, l.creator_cpu_ns);
    if (l.attr_mask_given) line.field_mask(start::attr_cpuset, l.attr_mask);
    line.field_mask(start::cpuset, l.start_mask);
    line.field(start::cpu, static_cast<std::int64_t>(l.start_cpu));
    if (ending != nullptr) {
        line.field_u(start::end_t, ending->end_ns);
        line.field(start::how, ending->how);
        line.field(start::end_cpu, static_cast<std::int64_t>(ending->cpu));
        line.field_u(start::duration_ns, ending->end_ns - start_ns);
    }
    return line.finish();
}

}  // namespace stacksage::preload::testing
