// A whole event log through the reader the run loader uses
// (read_process_log: the file read, parse_event_log, and the interpretation
// into one process image). The input is the file: many lines, torn last
// lines and NUL runs (a SIGKILLed process's mapping) included.
//
// Checked, beyond "no crash, no hang, no leak":
//  - an image or an error naming the file, never both (Result) and never an
//    error without the name;
//  - reading the file and parsing the same text in memory agree exactly;
//  - an image is closed and ordered: the main thread first, every thread's
//    masks in time order with no repeats and none after its end, and its
//    summary counts what the event callback saw;
//  - a process killed at any byte: every prefix of a log that reads is
//    readable too (or holds no complete event), with no more events; the
//    prefix followed by the zero-filled rest of its mapping reads as the
//    prefix's whole lines do (its unfinished line is a torn piece).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "parsers/event_log_reader.hpp"
#include "parsers/process_log.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace stacksage;

namespace {

void check_image(const ProcessImage& image) {
    if (image.pid < 0 || image.threads.empty() || !image.threads.front().is_main) std::abort();
    if (!image.end_known && image.end_how != "unknown") std::abort();
    for (const ThreadRecord& t : image.threads) {
        for (std::size_t i = 1; i < t.masks.size(); ++i) {
            if (t.masks[i].t < t.masks[i - 1].t) std::abort();
            if (t.masks[i].cpuset == t.masks[i - 1].cpuset) std::abort();
            if (t.masks[i].t > t.end_t) std::abort();
        }
        // Module names point into the image's own pool.
        for (std::string_view m : {t.creator_module, t.start_module}) {
            if (m.empty()) continue;
            bool found = false;
            for (const std::string& s : *image.module_pool) found = found || (s.data() == m.data() && s == m);
            if (!found) std::abort();
        }
    }
}

bool same(const Result<ProcessImage>& a, const Result<ProcessImage>& b) {
    if (a.ok() != b.ok()) return false;
    if (!a) return a.error().message == b.error().message;
    const ProcessImage &x = *a, &y = *b;
    if (x.pid != y.pid || x.threads.size() != y.threads.size() || x.end_t != y.end_t || x.end_how != y.end_how ||
        x.notes != y.notes || x.summary.events != y.summary.events || x.summary.lines != y.summary.lines ||
        x.summary.torn_lines != y.summary.torn_lines || x.summary.torn_last_line != y.summary.torn_last_line ||
        x.summary.negative_time_events != y.summary.negative_time_events ||
        x.summary.invalid_id_events != y.summary.invalid_id_events)
        return false;
    for (std::size_t i = 0; i < x.threads.size(); ++i)
        if (x.threads[i].tid != y.threads[i].tid || x.threads[i].masks.size() != y.threads[i].masks.size() ||
            x.threads[i].end_t != y.threads[i].end_t)
            return false;
    return true;
}

Result<ProcessImage> parse(std::string_view text, const std::string& name) {
    Result<ProcessImage> r = parse_process_log(text, name);
    if (!r) {
        if (r.error().message.rfind(name + ": ", 0) != 0) std::abort();
        return r;
    }
    check_image(*r);
    // The summary counts what the event reader hands on.
    std::size_t events = 0;
    auto again = parse_event_log(text, name, [&](const EventLogEvent&) { ++events; });
    if (!again || again->events != events || r->summary.events != events) std::abort();
    return r;
}

bool only_text(std::string_view s) {
    for (const char c : s)
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\r' && c != '\n') return false;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::string path = (fuzz::scratch_dir() / "pid-1.jsonl").string();
    fuzz::write_file(path, text);

    const Result<ProcessImage> from_file = read_process_log(path);
    const Result<ProcessImage> in_memory = parse(text, path);
    if (!same(from_file, in_memory)) std::abort();
    if (!in_memory || size < 2) return 0;

    // Killed at a byte chosen by the input itself.
    const std::size_t cut = (data[size - 1] * 256u + data[size - 2]) % size;
    const std::string_view prefix = text.substr(0, cut);
    const Result<ProcessImage> killed = parse(prefix, path);
    if (!killed) {
        if (killed.error().message.find("holds no complete event") == std::string::npos) std::abort();
    } else if (killed->summary.events > in_memory->summary.events) {
        std::abort();
    }
    // The rest of the mapping, zero-filled: the unfinished last line is a
    // torn piece among NULs, so the file reads as its whole lines do. (A
    // control byte next to NULs makes a file binary: plain text only.)
    if (!only_text(prefix)) return 0;
    std::string zero_filled(prefix);
    zero_filled.append(64, '\0');
    const Result<ProcessImage> mapped = parse(zero_filled, path);
    const Result<ProcessImage> whole_lines = parse(prefix.substr(0, prefix.rfind('\n') + 1), path);
    if (mapped.ok() != whole_lines.ok()) std::abort();
    if (mapped && mapped->summary.events != whole_lines->summary.events) std::abort();
    return 0;
}
