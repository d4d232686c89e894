// Code and data attribution, live (docs/sample-file.md, "Code and data";
// docs/analysis.md): `stacksage run --sample=pagefault` on a program of
// known shape (examples/memory_attribution.c: a serial first touch of a
// malloc'd array in first_touch_loop, a static array in
// touch_static_table, a parallel first touch of a second malloc'd array by
// threads in parallel_touch), then `stacksage report --format json` and the
// text report. The call sites and data objects reported must be those,
// whichever way the program was built: with frame pointers (the kernel's
// call chain), without (stack copies unwound after the run), and without
// debug information (functions, no lines, and a note that says why).
#include <gtest/gtest.h>

#include <unistd.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

namespace {

using nlohmann::json;
using stacksage::testing::Shell;
using stacksage::testing::shell;
using stacksage::testing::TempDir;

const std::string kBin = STACKSAGE_BINARY_DIR;
const std::string kCli = kBin + "/cli/stacksage";

struct Recorded {
    json report;       // the JSON report
    std::string text;  // the terminal report
};

// Records the example `name` with `args` under page-fault sampling (one
// fault in 64, the default) and reports it.
Recorded record(const TempDir& dir, const std::string& name, const std::string& args) {
    const std::string out = dir.str() + "/out";
    const Shell run = shell(kCli + " run -q --sample=pagefault -o " + out +
                            " -- " + kBin + "/examples/" + name + " " + args);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    Recorded r;
    const Shell report = shell(kCli + " report " + out + " --format json");
    EXPECT_EQ(report.exit_code, 0) << report.output;
    r.report = json::parse(report.output, nullptr, false);
    r.text = shell(kCli + " report " + out).output;
    return r;
}

// The host's memory section: first-touch sites and the objects.
const json& memory_of(const json& report) {
    static const json none = json::object();
    if (!report.contains("memory") || report["memory"].empty()) return none;
    return report["memory"][0];
}

// First touches per site, by the site's function (the label up to " (" or " in ").
std::map<std::string, std::int64_t> first_touch_by_function(const json& memory) {
    std::map<std::string, std::int64_t> out;
    for (const json& s : memory.value("sites", json::array())) {
        std::string label = s["site"];
        const std::size_t cut = std::min(label.find(" ("), label.find(" in "));
        out[label.substr(0, cut)] += s["first_touch"].get<std::int64_t>();
    }
    return out;
}

const json* object_containing(const json& memory, const std::string& words) {
    if (!memory.contains("objects")) return nullptr;
    for (const json& o : memory["objects"])
        if (o["object"].get<std::string>().find(words) != std::string::npos) return &o;
    return nullptr;
}

bool sampling_works_here() {
    // The plan's own verdict: `stacksage run --sample=pagefault` says why not where it cannot.
    return shell("cat /proc/sys/kernel/perf_event_paranoid").output.substr(0, 1) <= "2";
}

class CodeAttributionLive : public ::testing::TestWithParam<std::string> {};

}  // namespace

// 32 MiB serial (8,192 pages: 128 samples), 8 MiB static (2,048 pages:
// 32 samples), 32 MiB by 2 threads (128 samples). A sample the kernel
// could not deliver is counted as lost, not attributed: the bounds leave
// room for a few.
TEST_P(CodeAttributionLive, TheKnownLoopsAndArraysAreNamed) {
    if (!stacksage::testing::is_executable(kBin + "/examples/" + GetParam())) GTEST_SKIP() << "not built";
    if (!sampling_works_here()) GTEST_SKIP() << "perf_event_paranoid > 2: no page-fault sampling";
    TempDir dir;
    const Recorded r = record(dir, GetParam(), "--mib 32 --threads 2");
    const json& memory = memory_of(r.report);
    ASSERT_TRUE(memory.contains("sites")) << r.report.dump(1).substr(0, 4000);
    const std::map<std::string, std::int64_t> by_function = first_touch_by_function(memory);
    auto samples_in = [&](const std::string& function) {
        return by_function.count(function) ? by_function.at(function) : 0;
    };
    EXPECT_GE(samples_in("first_touch_loop"), 110) << r.text;
    EXPECT_GE(samples_in("parallel_touch"), 110) << r.text;
    EXPECT_GE(samples_in("touch_static_table"), 25) << r.text;
    EXPECT_LE(samples_in("first_touch_loop"), 130) << r.text;

    // The objects: the two heap blocks with their allocation sites, the static array.
    const json* mesh = object_containing(memory, "allocate_array");
    const json* field = object_containing(memory, "allocate_field");
    const json* table = object_containing(memory, "g_static_table");
    ASSERT_NE(mesh, nullptr) << memory["objects"].dump(1);
    ASSERT_NE(field, nullptr) << memory["objects"].dump(1);
    ASSERT_NE(table, nullptr) << memory["objects"].dump(1);
    EXPECT_EQ((*mesh)["kind"], "heap");
    EXPECT_NE((*mesh)["object"].get<std::string>().find("32 MiB"), std::string::npos) << (*mesh)["object"];
    EXPECT_GE((*mesh)["first_touch"].get<std::int64_t>(), 110);
    EXPECT_GE((*field)["first_touch"].get<std::int64_t>(), 110);
    EXPECT_EQ((*table)["kind"], "static");
    EXPECT_GE((*table)["first_touch"].get<std::int64_t>(), 25);

    // Lines where the program has debug information; where not, functions and a note saying why.
    const bool debug = GetParam().find("nodebug") == std::string::npos;
    for (const json& s : memory["sites"]) {
        const std::string label = s["site"];
        if (label.rfind("first_touch_loop", 0) != 0) continue;
        if (debug) {
            EXPECT_NE(label.find("(memory_attribution.c:"), std::string::npos) << label;
        } else {
            EXPECT_EQ(label.find("memory_attribution.c"), std::string::npos) << label;
        }
        EXPECT_NE(s["call_path"].get<std::string>().find("< main"), std::string::npos) << s["call_path"];
    }
    // The parallel loop's path is the thread's own: no recorder frame in it.
    for (const json& s : memory["sites"])
        if (s["site"].get<std::string>().rfind("parallel_touch", 0) == 0) {
            EXPECT_EQ(s["call_path"].get<std::string>().find("stacksage"), std::string::npos) << s["call_path"];
        }
    if (!debug) {
        EXPECT_NE(r.text.find("no line information"), std::string::npos) << r.text;
    }
    // The text report names the top sites and the objects.
    EXPECT_NE(r.text.find("call sites: "), std::string::npos) << r.text;
    EXPECT_NE(r.text.find("heap block of 32 MiB allocated at"), std::string::npos) << r.text;
}

INSTANTIATE_TEST_SUITE_P(Builds, CodeAttributionLive,
                         ::testing::Values("memory_attribution_fp", "memory_attribution_nofp",
                                           "memory_attribution_nodebug"));
