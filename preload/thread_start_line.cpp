#include "preload/thread_start_line.hpp"

#include "core/formats/event_schema.hpp"
#include "preload/json_line.hpp"
#include "preload/module_table.hpp"
#include "preload/number_digits.hpp"

namespace stacksage::preload {

namespace {

// Room for everything but the module paths, the masks and `how`: the keys
// and every number at its longest (439 bytes; checked by the test's line of
// extreme values). Kept tight: the line is built in a buffer on the stack
// when its room fits there (thread_launch.cpp, write_start_line).
constexpr std::size_t kFixedRoom = 440;

// A literal's bytes, its NUL left out, copied with a length known at compile time.
template <std::size_t N>
char* put(char* out, const char (&literal)[N]) {
    __builtin_memcpy(out, literal, N - 1);
    return out + N - 1;
}

std::size_t module_room(const Module* m) {
    if (m == nullptr) return 4;                       // null
    if (m->json != nullptr) return m->json_len;
    const std::size_t n = m->path != nullptr ? __builtin_strlen(m->path) : 0;
    return 6 * n + 2;  // every byte escaped as \u00XX, and the quotes
}

// The module as a JSON string (escaped once when the table was made), or null.
char* put_module(char* out, const Module* m, std::size_t room) {
    if (m == nullptr) return put(out, "null");
    if (m->json != nullptr) {
        __builtin_memcpy(out, m->json, m->json_len);
        return out + m->json_len;
    }
    JsonLine escaped(out, room + 1);  // +1: JsonLine keeps a byte for its '\n'
    escaped.str(m->path);
    return out + escaped.size();
}

std::size_t mask_room(const CpuMask& m) { return m.valid ? m.max_list_length() + 3 : 4; }

// The mask's list form as a JSON string, or null when unknown.
char* put_mask(char* out, const CpuMask& m) {
    if (!m.valid) return put(out, "null");
    *out++ = '"';
    out += m.format_list(out, m.max_list_length() + 1);  // +1: its NUL
    *out++ = '"';
    return out;
}

char* put_hex(char* out, std::uint64_t v) {
    out = put(out, "\"0x");
    out = write_hex_digits(out, v);
    *out++ = '"';
    return out;
}

}  // namespace

std::size_t thread_start_line_room(const Launch& l, const ThreadEnding* ending) {
    std::size_t room = kFixedRoom + module_room(l.creator) + module_room(l.start_module) + mask_room(l.start_mask);
    if (l.attr_mask_given) room += mask_room(l.attr_mask);
    if (ending != nullptr) room += __builtin_strlen(ending->how);
    return room;
}

std::size_t format_thread_start_line(char* out, std::size_t cap, const Launch& l, int pid,
                                     const ThreadEnding* ending) {
    if (cap < thread_start_line_room(l, ending)) return 0;
    const std::uint64_t start_ns = l.start_ns.load(std::memory_order_relaxed);
    // The keys are event_schema's (common, then thread_start), each with the
    // comma before it.
    char* p = out;
    p = put(p, "{\"v\":");
    p = write_decimal(p, event_schema::kVersion);
    p = put(p, ",\"ev\":\"thread_start\",\"t\":");
    p = write_decimal(p, start_ns);
    p = put(p, ",\"pid\":");
    p = write_signed_decimal(p, pid);
    p = put(p, ",\"tid\":");
    p = write_signed_decimal(p, l.tid);
    p = put(p, ",\"seq\":");
    p = write_decimal(p, l.seq);
    // The handle joins this thread to thread_name and affinity events that
    // named it before it had started (and registered its tid).
    p = put(p, ",\"pthread\":");
    p = put_hex(p, l.pthread);
    p = put(p, ",\"creator_tid\":");
    p = write_signed_decimal(p, l.creator_tid);
    p = put(p, ",\"creator_module\":");
    p = put_module(p, l.creator, module_room(l.creator));
    p = put(p, ",\"start_module\":");
    p = put_module(p, l.start_module, module_room(l.start_module));
    if (l.start_module != nullptr) {
        p = put(p, ",\"start_offset\":");
        p = put_hex(p, reinterpret_cast<std::uintptr_t>(l.start) - l.start_module->start);
    }
    p = put(p, ",\"create_t\":");
    p = write_decimal(p, l.create_ns);
    if (l.creator_cpu_ns >= 0) {
        p = put(p, ",\"creator_cpu_ns\":");
        p = write_signed_decimal(p, l.creator_cpu_ns);
    }
    if (l.attr_mask_given) {
        p = put(p, ",\"attr_cpuset\":");
        p = put_mask(p, l.attr_mask);
    }
    p = put(p, ",\"cpuset\":");
    p = put_mask(p, l.start_mask);
    p = put(p, ",\"cpu\":");
    p = write_signed_decimal(p, l.start_cpu);
    if (ending != nullptr) {
        p = put(p, ",\"end_t\":");
        p = write_decimal(p, ending->end_ns);
        // `how` is one of our literals, which need no escaping.
        p = put(p, ",\"how\":\"");
        const std::size_t how_len = __builtin_strlen(ending->how);
        __builtin_memcpy(p, ending->how, how_len);
        p += how_len;
        p = put(p, "\",\"end_cpu\":");
        p = write_signed_decimal(p, ending->cpu);
        p = put(p, ",\"duration_ns\":");
        p = write_decimal(p, ending->end_ns - start_ns);
    }
    p = put(p, "}\n");
    return static_cast<std::size_t>(p - out);
}

}  // namespace stacksage::preload
