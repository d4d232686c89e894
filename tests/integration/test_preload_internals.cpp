// The recorder's allocation-free building blocks, tested directly: the JSON
// line builder, the CPU mask's list form, the environment allowlist and the
// launcher names.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "core/formats/launcher_environment.hpp"
#include "preload/cpu_mask.hpp"
#include "preload/environment.hpp"
#include "preload/json_line.hpp"

namespace stacksage::preload {
namespace {

std::string finish(JsonLine& line) {
    std::size_t n = line.finish();
    return n == 0 ? std::string() : std::string(line.data(), n);
}

TEST(JsonLine, BuildsOneParsableLine) {
    char buf[512];
    JsonLine line(buf, sizeof buf);
    line.open_object();
    line.field("s", "quote\" backslash\\ newline\n tab\t ctrl\x01 del\x7f");
    line.field("neg", std::int64_t{-42});
    line.field("min", std::int64_t{INT64_MIN});
    line.field_u("big", UINT64_MAX);
    line.field_bool("yes", true);
    line.field_hex("addr", 0x7f00ab);
    line.key("list");
    line.open_array();
    line.i64(1);
    line.str("two");
    line.open_object();
    line.field("three", std::int64_t{3});
    line.close_object();
    line.close_array();
    line.key("nothing");
    line.null();
    std::string text = finish(line);
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
    EXPECT_EQ(text.find('\n'), text.size() - 1);  // exactly one line
    auto j = nlohmann::json::parse(text);
    EXPECT_EQ(j["s"], "quote\" backslash\\ newline\n tab\t ctrl\x01 del\x7f");
    EXPECT_EQ(j["neg"], -42);
    EXPECT_EQ(j["min"], INT64_MIN);
    EXPECT_EQ(j["big"], UINT64_MAX);
    EXPECT_EQ(j["yes"], true);
    EXPECT_EQ(j["addr"], "0x7f00ab");
    EXPECT_EQ(j["list"], nlohmann::json::parse(R"([1,"two",{"three":3}])"));
    EXPECT_TRUE(j["nothing"].is_null());
}

TEST(JsonLine, OverflowIsReportedNeverTruncatedSilently) {
    char buf[32];
    JsonLine line(buf, sizeof buf);
    line.open_object();
    line.field("long", "this value does not fit in thirty-two bytes");
    EXPECT_EQ(line.finish(), 0u);
    EXPECT_TRUE(line.overflowed());
}

TEST(JsonLine, ExactFitKeepsRoomForTheNewline) {
    for (std::size_t cap = 1; cap < 40; ++cap) {
        std::string storage(cap, '\0');
        JsonLine line(storage.data(), cap);
        line.open_object();
        line.field("k", "0123456789");
        std::size_t n = line.finish();
        if (n != 0) {
            std::string text(storage.data(), n);
            EXPECT_EQ(text, "{\"k\":\"0123456789\"}\n") << cap;
        }
    }
}

// The text a strict reader gets back from str(s): parses the line with
// nlohmann::json::parse (which refuses invalid UTF-8 and raw control bytes).
std::string round_trip(const std::string& s) {
    char buf[1024];
    JsonLine line(buf, sizeof buf);
    line.open_object();
    line.key("s");
    line.str(s.data(), s.size());
    const std::string text = finish(line);
    EXPECT_FALSE(text.empty());
    return nlohmann::json::parse(text)["s"].get<std::string>();
}

// Valid UTF-8 passes through unchanged, of every length, at both ends of
// the code space and next to the surrogates.
TEST(JsonLine, ValidUtf8PassesThrough) {
    for (const std::string s : {"caf\xc3\xa9", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80",
                                "\xef\xbf\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "\xe2\x80\xa8 line separator",
                                "\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"}) {
        EXPECT_EQ(round_trip(s), s);
    }
}

// Each byte that does not belong to a valid UTF-8 sequence is written as
// the Latin-1 character of the same number (\u0080 to \u00ff): the line is
// strict JSON, and a Latin-1 name still reads right.
TEST(JsonLine, BytesThatAreNotUtf8BecomeTheirLatin1Characters) {
    struct Case {
        std::string in, out;
    };
    const Case cases[] = {
        {"caf\xe9", "caf\xc3\xa9"},                                  // Latin-1 é
        {"\xff\xfe", "\xc3\xbf\xc3\xbe"},                            // never in UTF-8
        {"\x80", "\xc2\x80"},                                        // a lone continuation byte
        {"\xc3", "\xc3\x83"},                                        // cut at the end
        {"\xc3" "a", "\xc3\x83" "a"},                                // cut in the middle
        {"\xe2\x82", "\xc3\xa2\xc2\x82"},                            // 3-byte sequence cut
        {"\xf0\x9f\x98", "\xc3\xb0\xc2\x9f\xc2\x98"},                // 4-byte sequence cut
        {"\xc0\xaf", "\xc3\x80\xc2\xaf"},                            // overlong '/'
        {"\xe0\x80\xaf", "\xc3\xa0\xc2\x80\xc2\xaf"},                // overlong, 3 bytes
        {"\xf0\x80\x80\xaf", "\xc3\xb0\xc2\x80\xc2\x80\xc2\xaf"},    // overlong, 4 bytes
        {"\xed\xa0\x80", "\xc3\xad\xc2\xa0\xc2\x80"},                // a surrogate (U+D800)
        {"\xf4\x90\x80\x80", "\xc3\xb4\xc2\x90\xc2\x80\xc2\x80"},    // past U+10FFFF
        {"\xf8\x88\x80\x80\x80", "\xc3\xb8\xc2\x88\xc2\x80\xc2\x80\xc2\x80"},  // 5-byte form
        {"ok\xff" "caf\xc3\xa9", "ok\xc3\xbf" "caf\xc3\xa9"},        // valid text around a stray byte
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(nlohmann::json(c.out).dump());
        EXPECT_EQ(round_trip(c.in), c.out);
    }
}

// Every control character (C0 and DEL) is escaped; none is left raw in the
// line, so a terminal showing a log shows no colours and no bells.
TEST(JsonLine, ControlCharactersAreEscaped) {
    std::string all;
    for (int c = 1; c < 0x20; ++c) all += static_cast<char>(c);
    all += '\x7f';
    all += "\x1b[31mred\x1b[0m";
    char buf[1024];
    JsonLine line(buf, sizeof buf);
    line.open_object();
    line.key("s");
    line.str(all.data(), all.size());
    const std::string text = finish(line);
    ASSERT_FALSE(text.empty());
    for (std::size_t i = 0; i + 1 < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        EXPECT_TRUE(c >= 0x20 && c != 0x7f) << "raw byte " << int(c) << " at " << i;
    }
    EXPECT_NE(text.find("\\u001b[31m"), std::string::npos) << text;
    EXPECT_EQ(nlohmann::json::parse(text)["s"], all);
}

// Escaping makes a string longer (a stray byte takes 6 bytes): a string that
// no longer fits is an overflow, never a cut escape.
TEST(JsonLine, EscapesThatDoNotFitOverflow) {
    const std::string stray(20, '\xff');
    for (std::size_t cap = 1; cap < 140; ++cap) {
        std::string storage(cap, '\0');
        JsonLine line(storage.data(), cap);
        line.open_object();
        line.key("s");
        line.str(stray.data(), stray.size());
        const std::size_t n = line.finish();
        if (n == 0) {
            EXPECT_TRUE(line.overflowed()) << cap;
            continue;
        }
        EXPECT_EQ(nlohmann::json::parse(std::string(storage.data(), n))["s"].get<std::string>().size(), 40u);
    }
}

// Numbers are formatted two digits at a time and hex digits in place: check
// every length against the standard library, and the exact fit.
TEST(JsonLine, NumbersOfEveryLength) {
    std::uint64_t v = 1;
    for (int digits = 1; digits <= 20; ++digits, v = v * 10 > v ? v * 10 : UINT64_MAX) {
        for (std::uint64_t x : {v - 1, v, v + 1, v * 9 / 10 * 10 - 1}) {
            char buf[64];
            JsonLine line(buf, sizeof buf);
            line.open_object();
            line.field_u("u", x);
            line.field_hex("h", x);
            char want[64];
            std::snprintf(want, sizeof want, "{\"u\":%llu,\"h\":\"0x%llx\"}\n", static_cast<unsigned long long>(x),
                          static_cast<unsigned long long>(x));
            EXPECT_EQ(finish(line), want) << x;
        }
    }
    for (std::size_t cap = 1; cap < 24; ++cap) {
        std::string storage(cap, '\0');
        JsonLine line(storage.data(), cap);
        line.open_object();
        line.field_hex("h", 0xabcdef);
        const std::size_t n = line.finish();
        if (n != 0) {
            EXPECT_EQ(std::string(storage.data(), n), "{\"h\":\"0xabcdef\"}\n") << cap;
        } else {
            EXPECT_TRUE(line.overflowed()) << cap;
        }
        if (cap >= 19) {
            EXPECT_NE(n, 0u) << cap;
        }
    }
}

TEST(CpuMask, ListForm) {
    CpuMask m;
    unsigned long long words[3] = {0, 0, 0};
    for (unsigned c : {0u, 1u, 2u, 3u, 8u, 63u, 64u, 65u, 130u}) words[c / 64] |= 1ull << (c % 64);
    m.assign(words, sizeof words);
    char out[128];
    ASSERT_GT(m.format_list(out, sizeof out), 0u);
    EXPECT_STREQ(out, "0-3,8,63-65,130");
    EXPECT_EQ(m.count(), 9u);

    // Every CPU of a 4096-CPU mask.
    unsigned long long all[64];
    for (auto& w : all) w = ~0ull;
    m.assign(all, sizeof all);
    ASSERT_GT(m.format_list(out, sizeof out), 0u);
    EXPECT_STREQ(out, "0-4095");

    // Too long for the buffer: nothing rather than a wrong set.
    for (auto& w : all) w = 0x5555555555555555ull;
    m.assign(all, sizeof all);
    EXPECT_EQ(m.format_list(out, sizeof out), 0u);
    EXPECT_STREQ(out, "");

    CpuMask empty;
    empty.assign(words, 0);
    ASSERT_EQ(empty.format_list(out, sizeof out), 0u);
    EXPECT_STREQ(out, "");
}

TEST(CpuMask, ReadsTheCallersMask) {
    CpuMask m;
    ASSERT_TRUE(m.read_thread(0));
    EXPECT_GE(m.count(), 1u);
}

bool binding(const char* name) { return is_binding_variable(name, std::strlen(name)); }
bool identity(const char* name) { return is_identity_variable(name, std::strlen(name)); }

TEST(Environment, AllowlistKeepsBindingVariablesOnly) {
    for (const char* yes : {"OMP_NUM_THREADS", "OMP_PLACES", "KMP_AFFINITY", "GOMP_CPU_AFFINITY",
                            "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "SLURM_CPU_BIND",
                            "SLURM_CPU_BIND_TYPE", "SLURM_CPUS_PER_TASK", "OMPI_MCA_hwloc_base_binding_policy",
                            "OMPI_MCA_rmaps_base_bindto", "I_MPI_PIN_DOMAIN", "MV2_ENABLE_AFFINITY",
                            "MV2_CPU_BINDING_AFFINITY", "HSA_CU_MASK", "BLIS_NUM_THREADS", "BLIS_JC_NT",
                            "GOTO_NUM_THREADS", "SLURM_CPU_BIND_LIST", "SLURM_CPU_BIND_VERBOSE"})
        EXPECT_TRUE(binding(yes)) << yes;
    for (const char* no : {"PATH", "HOME", "SECRET_TOKEN", "OMPI_MCA_btl", "SLURM_JOB_NAME", "MV2_USE_CUDA",
                           "OMP", "AWS_SECRET_ACCESS_KEY", "LD_PRELOAD", "SLURM_CPUS_ON_NODE"})
        EXPECT_FALSE(binding(no)) << no;
    for (const char* yes : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "SLURM_LOCALID",
                            "SLURM_JOB_ID", "SLURM_STEP_ID", "FLUX_TASK_RANK", "MPI_LOCALRANKID",
                            "STACKSAGE_OUTPUT"})
        EXPECT_TRUE(identity(yes)) << yes;
    // Every variable `stacksage run` takes a rank or a job id from is kept
    // (one list, core/formats/launcher_environment.hpp; PBS's and LSF's job
    // ids were missing from the recorder's own copy).
    for (const char* n : stacksage::formats::kRankVariables) EXPECT_TRUE(identity(n)) << n;
    for (const char* n : stacksage::formats::kJobIdVariables) EXPECT_TRUE(identity(n)) << n;
    // The job's size and nodes, which the analyzer checks the recorded ranks
    // and hosts against (incomplete-recording).
    for (const char* n : stacksage::formats::kJobSizeVariables) EXPECT_TRUE(identity(n)) << n;
    for (const char* n : stacksage::formats::kSlurmTaskCountVariables) EXPECT_TRUE(identity(n)) << n;
    for (const char* n : stacksage::formats::kSlurmJobNodeListVariables) EXPECT_TRUE(identity(n)) << n;
    for (const char* n : stacksage::formats::kSlurmNodeCountVariables) EXPECT_TRUE(identity(n)) << n;
    EXPECT_TRUE(identity("SLURM_STEP_NODELIST"));
    EXPECT_FALSE(identity("SLURM_JOB_NAME"));
    EXPECT_FALSE(identity("PMIX_SERVER_URI2"));
}

TEST(Environment, RankFromTheFirstLauncherVariable) {
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMIX_RANK");
    unsetenv("PMI_RANK");
    unsetenv("FLUX_TASK_RANK");
    unsetenv("SLURM_PROCID");
    EXPECT_EQ(rank_from_environment(), -1);
    setenv("SLURM_PROCID", "7", 1);
    EXPECT_EQ(rank_from_environment(), 7);
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);  // mpirun inside a Slurm allocation
    EXPECT_EQ(rank_from_environment(), 3);
    setenv("OMPI_COMM_WORLD_RANK", "x3", 1);  // not a number: skipped
    EXPECT_EQ(rank_from_environment(), 7);
    setenv("OMPI_COMM_WORLD_RANK", "3 ", 1);  // not only a number: skipped
    EXPECT_EQ(rank_from_environment(), 7);
    setenv("OMPI_COMM_WORLD_RANK", "999999999", 1);  // the largest rank taken
    EXPECT_EQ(rank_from_environment(), 999999999);
    setenv("OMPI_COMM_WORLD_RANK", "1000000000", 1);  // beyond: skipped
    EXPECT_EQ(rank_from_environment(), 7);
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("SLURM_PROCID");
}

TEST(Environment, LaunchersByName) {
    EXPECT_STREQ(launcher_name("/usr/bin/orterun", "mpirun"), "orterun");
    EXPECT_STREQ(launcher_name("/opt/x/bin/app", "/usr/bin/mpiexec"), "mpiexec");
    EXPECT_STREQ(launcher_name("/usr/sbin/slurmstepd", nullptr), "slurmstepd");
    EXPECT_STREQ(launcher_name("/usr/bin/prted", "prted"), "prted");
    EXPECT_EQ(launcher_name("/home/u/mpirun_wrapper_test", "./app"), nullptr);
    EXPECT_EQ(launcher_name("/home/u/app", "app"), nullptr);
}

}  // namespace
}  // namespace stacksage::preload
