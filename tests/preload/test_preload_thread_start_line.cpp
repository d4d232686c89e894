// The thread_start line's own formatter (preload/thread_start_line.hpp) and
// the digit writers under it (preload/number_digits.hpp): byte for byte the
// line JsonLine builds, whatever the fields hold.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "preload/module_table.hpp"
#include "preload/number_digits.hpp"
#include "preload/thread_start_line.hpp"
#include "tests/preload/thread_start_line_reference.hpp"

using stacksage::preload::CpuMask;
using stacksage::preload::format_thread_start_line;
using stacksage::preload::Launch;
using stacksage::preload::Module;
using stacksage::preload::thread_start_line_room;
using stacksage::preload::ThreadEnding;
using stacksage::preload::testing::reference_thread_start_line;

namespace {

std::string reference(const Launch& l, int pid, const ThreadEnding* ending) {
    std::vector<char> buf(1 << 20);
    const std::size_t n = reference_thread_start_line(buf.data(), buf.size(), l, pid, ending);
    EXPECT_NE(n, 0u);
    return std::string(buf.data(), n);
}

// Formats into a buffer of exactly the room it asks for, and checks that
// nothing past the line was touched.
std::string formatted(const Launch& l, int pid, const ThreadEnding* ending) {
    const std::size_t room = thread_start_line_room(l, ending);
    std::vector<char> buf(room + 64, '\x5a');
    const std::size_t n = format_thread_start_line(buf.data(), room, l, pid, ending);
    EXPECT_NE(n, 0u);
    EXPECT_LE(n, room);
    for (std::size_t i = n; i < buf.size(); ++i)
        if (buf[i] != '\x5a') {
            ADD_FAILURE() << "byte " << i << " written past the line's " << n;
            break;
        }
    return std::string(buf.data(), n);
}

void set_mask(CpuMask& m, std::initializer_list<unsigned> cpus, unsigned used_words) {
    m.used_words = used_words;
    m.valid = true;
    for (unsigned i = 0; i < used_words; ++i) m.words[i] = 0;
    for (unsigned cpu : cpus) m.words[cpu / 64] |= std::uint64_t{1} << (cpu % 64);
}

void* start_routine(void*) { return nullptr; }

// A short thread as the recorder sees one: its creator's and its start
// routine's modules known, two CPUs.
struct TypicalThread {
    Module program;
    std::string program_json = "\"/usr/local/bin/solver\"";
    Launch l;
    TypicalThread() {
        program.start = reinterpret_cast<std::uintptr_t>(&start_routine) - 0x1234;
        program.path = "/usr/local/bin/solver";
        program.json = program_json.c_str();
        program.json_len = program_json.size();
        l.start = &start_routine;
        l.creator_tid = 4100;
        l.creator = &program;
        l.start_module = &program;
        l.create_ns = 1'234'567'890'123;
        l.creator_cpu_ns = 52'000'100;
        set_mask(l.start_mask, {0, 1}, 1);
        l.start_ns.store(1'234'567'905'000);
        l.tid = 4107;
        l.seq = 7;
        l.start_cpu = 1;
        l.pthread = 0x7f12'3456'7000;
    }
};

}  // namespace

TEST(ThreadStartLine, AShortThreadsLineIsTheGenericBuildersByteForByte) {
    TypicalThread t;
    const ThreadEnding ending{"return", 1'234'567'910'000, 0};
    const std::string line = formatted(t.l, 4100, &ending);
    EXPECT_EQ(line, reference(t.l, 4100, &ending));
    EXPECT_EQ(line,
              "{\"v\":1,\"ev\":\"thread_start\",\"t\":1234567905000,\"pid\":4100,\"tid\":4107,\"seq\":7,"
              "\"pthread\":\"0x7f1234567000\",\"creator_tid\":4100,\"creator_module\":\"/usr/local/bin/solver\","
              "\"start_module\":\"/usr/local/bin/solver\",\"start_offset\":\"0x1234\",\"create_t\":1234567890123,"
              "\"creator_cpu_ns\":52000100,\"cpuset\":\"0-1\",\"cpu\":1,\"end_t\":1234567910000,\"how\":\"return\","
              "\"end_cpu\":0,\"duration_ns\":5000}\n");
    // Without its end: a thread that lives on, written by the start-line writer.
    EXPECT_EQ(formatted(t.l, 4100, nullptr), reference(t.l, 4100, nullptr));
}

TEST(ThreadStartLine, OptionalFieldsComeAndGoAsTheGenericBuildersDo) {
    TypicalThread t;
    t.l.creator_cpu_ns = -1;             // not read: left out
    t.l.start_module = nullptr;          // null, and no offset
    set_mask(t.l.attr_mask, {3}, 1);     // the attributes' mask
    t.l.attr_mask_given = true;
    t.l.start_mask.clear();              // unknown: null
    t.l.start_cpu = -1;
    const ThreadEnding ending{"pthread_exit", t.l.start_ns.load() + 1, -1};
    EXPECT_EQ(formatted(t.l, 1, &ending), reference(t.l, 1, &ending));
    // A module whose JSON form was not made: its path escaped here.
    Module odd;
    odd.path = "/tmp/we\"ird\\dir/\x01lib\xff\xc3\xa9.so";
    t.l.creator = &odd;
    t.l.start_module = &odd;
    t.l.start = reinterpret_cast<void* (*)(void*)>(odd.start + 0x10);
    EXPECT_EQ(formatted(t.l, 1, &ending), reference(t.l, 1, &ending));
    odd.path = nullptr;
    EXPECT_EQ(formatted(t.l, 1, &ending), reference(t.l, 1, &ending));
    // An empty mask is an empty string, not null.
    set_mask(t.l.start_mask, {}, 2);
    EXPECT_EQ(formatted(t.l, 1, nullptr), reference(t.l, 1, nullptr));
}

TEST(ThreadStartLine, ExtremeValuesStillFitTheRoomItAsksFor) {
    TypicalThread t;
    t.l.create_ns = UINT64_MAX;
    t.l.creator_cpu_ns = INT64_MAX;
    t.l.start_ns.store(UINT64_MAX - 1);
    t.l.tid = INT_MIN;
    t.l.creator_tid = INT_MIN;
    t.l.seq = UINT32_MAX;
    t.l.start_cpu = INT_MIN;
    t.l.pthread = UINTPTR_MAX;
    CpuMask& every = t.l.start_mask;
    every.used_words = CpuMask::kWords;
    every.valid = true;
    for (auto& w : every.words) w = 0x5555'5555'5555'5555ull;  // 2048 CPUs, no ranges
    t.l.attr_mask = every;
    t.l.attr_mask_given = true;
    const ThreadEnding ending{"pthread_exit", 0, INT_MIN};  // ended "before" it started: wraps as before
    EXPECT_EQ(formatted(t.l, INT_MIN, &ending), reference(t.l, INT_MIN, &ending));
}

// Every number at its longest, the rest empty: the room asked for is the
// line's length, give or take a byte per piece, so a room too small for the
// numbers fails here.
TEST(ThreadStartLine, TheRoomForTheNumbersIsTight) {
    TypicalThread t;
    static const char empty_json[] = "\"\"";
    t.program.json = empty_json;
    t.program.json_len = 2;
    t.program.start = 0;
    t.l.start = reinterpret_cast<void* (*)(void*)>(UINTPTR_MAX);
    t.l.create_ns = UINT64_MAX;
    t.l.creator_cpu_ns = INT64_MAX;
    t.l.start_ns.store(UINT64_MAX);
    t.l.tid = INT_MIN;
    t.l.creator_tid = INT_MIN;
    t.l.seq = UINT32_MAX;
    t.l.start_cpu = INT_MIN;
    t.l.pthread = UINTPTR_MAX;
    set_mask(t.l.start_mask, {}, 1);
    set_mask(t.l.attr_mask, {}, 1);
    t.l.attr_mask_given = true;
    const ThreadEnding ending{"pthread_exit", UINT64_MAX - 1, INT_MIN};  // duration wraps to 19 digits + 1
    const std::string line = formatted(t.l, INT_MIN, &ending);
    EXPECT_EQ(line, reference(t.l, INT_MIN, &ending));
    EXPECT_GE(thread_start_line_room(t.l, &ending), line.size());
    EXPECT_LE(thread_start_line_room(t.l, &ending), line.size() + 8);
}

TEST(ThreadStartLine, TooSmallABufferGetsNothingWritten) {
    TypicalThread t;
    const ThreadEnding ending{"cancel", 1, 0};
    const std::size_t room = thread_start_line_room(t.l, &ending);
    std::vector<char> buf(room, '\x5a');
    EXPECT_EQ(format_thread_start_line(buf.data(), room - 1, t.l, 1, &ending), 0u);
    EXPECT_EQ(std::string(buf.begin(), buf.end()), std::string(room, '\x5a'));
}

// Random fields of every kind, compared with the generic builder's line.
TEST(ThreadStartLine, RandomFieldsMatchTheGenericBuilder) {
    std::mt19937_64 rng(20261127);
    auto number = [&] {
        // Every length of number, and the edges of each: 9, 10, 99, 100, ...
        const unsigned digits = static_cast<unsigned>(rng() % 21);
        std::uint64_t v = 1;
        for (unsigned i = 0; i < digits && v <= UINT64_MAX / 10; ++i) v *= 10;
        switch (rng() % 4) {
            case 0: return v;
            case 1: return v - 1;
            case 2: return rng();
            default: return rng() % (v + 1);
        }
    };
    const char* paths[] = {"/lib/a.so", "/\xe2\x82\xac/\"q\"/\t\x7f", "\xc0\x80\xed\xa0\x80", ""};
    const char* hows[] = {"return", "cancel", "pthread_exit"};
    std::vector<Module> modules(4);
    std::vector<std::string> jsons(4);
    for (std::size_t i = 0; i < modules.size(); ++i) {
        modules[i].path = paths[i];
        modules[i].start = rng();
        if (i % 2 == 0) {
            jsons[i] = "\"" + std::string(paths[i]) + "\"";  // plain paths: their JSON is themselves quoted
            modules[i].json = jsons[i].c_str();
            modules[i].json_len = jsons[i].size();
        }
    }
    auto pick_module = [&]() -> const Module* {
        const std::size_t i = rng() % (modules.size() + 1);
        return i == modules.size() ? nullptr : &modules[i];
    };
    auto random_mask = [&](CpuMask& m) {
        m.clear();
        if (rng() % 4 == 0) return;  // unknown
        m.valid = true;
        m.used_words = 1 + static_cast<unsigned>(rng() % 4) * (rng() % 2 == 0 ? 1 : 16);
        for (unsigned i = 0; i < m.used_words; ++i) m.words[i] = rng() & rng();
    };
    for (int round = 0; round < 3000; ++round) {
        Launch l;
        l.creator = pick_module();
        l.start_module = pick_module();
        l.start = reinterpret_cast<void* (*)(void*)>(rng());
        l.creator_tid = static_cast<int>(static_cast<std::uint32_t>(number()));
        l.create_ns = number();
        l.creator_cpu_ns = static_cast<std::int64_t>(number());
        random_mask(l.attr_mask);
        l.attr_mask_given = rng() % 2 == 0;
        random_mask(l.start_mask);
        l.start_ns.store(number());
        l.tid = static_cast<int>(static_cast<std::uint32_t>(number()));
        l.seq = static_cast<std::uint32_t>(number());
        l.start_cpu = static_cast<int>(static_cast<std::uint32_t>(number()));
        l.pthread = static_cast<std::uintptr_t>(number());
        const int pid = static_cast<int>(static_cast<std::uint32_t>(number()));
        const ThreadEnding ending{hows[rng() % 3], number(), static_cast<int>(static_cast<std::uint32_t>(number()))};
        const ThreadEnding* maybe_ending = rng() % 2 == 0 ? &ending : nullptr;
        ASSERT_EQ(formatted(l, pid, maybe_ending), reference(l, pid, maybe_ending)) << "round " << round;
    }
}

TEST(NumberDigits, DecimalAndHexAreWhatPrintfWrites) {
    std::vector<std::uint64_t> values = {0, 1, 9, 10, 11, 99, 100, 101, UINT64_MAX, UINT64_MAX - 1};
    for (std::uint64_t p = 1; p <= UINT64_MAX / 10; p *= 10) {
        values.push_back(p * 10 - 1);
        values.push_back(p * 10);
        values.push_back(p * 10 + 1);
    }
    std::mt19937_64 rng(7);
    for (int i = 0; i < 20000; ++i) values.push_back(rng() >> (rng() % 64));
    for (std::uint64_t v : values) {
        char got[32], want[32];
        std::memset(got, 'x', sizeof got);
        char* end = stacksage::preload::write_decimal(got, v);
        EXPECT_EQ(end[0], 'x') << "written past the digits of " << v;
        *end = '\0';
        std::snprintf(want, sizeof want, "%llu", static_cast<unsigned long long>(v));
        EXPECT_STREQ(got, want);
        *stacksage::preload::write_hex_digits(got, v) = '\0';
        std::snprintf(want, sizeof want, "%llx", static_cast<unsigned long long>(v));
        EXPECT_STREQ(got, want);
        const auto s = static_cast<std::int64_t>(v);
        *stacksage::preload::write_signed_decimal(got, s) = '\0';
        std::snprintf(want, sizeof want, "%lld", static_cast<long long>(s));
        EXPECT_STREQ(got, want);
    }
}
