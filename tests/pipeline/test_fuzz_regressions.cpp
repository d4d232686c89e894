// Inputs the fuzzers found (tests/fuzz/regressions/), kept as tests: each
// must give a clean answer, never a crash, a hang or a read out of bounds.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/snapshot.hpp"
#include "parsers/hwloc_loader.hpp"
#include "parsers/hwloc_xml_check.hpp"
#include "parsers/run_loader.hpp"
#include "parsers/sample_file_reader.hpp"
#include "parsers/xml_wellformed.hpp"
#include "tests/fuzz/run_split.hpp"

namespace fs = std::filesystem;
using namespace stacksage;

namespace {
const fs::path kRegressions = fs::path(STACKSAGE_TEST_DATA_DIR).parent_path() / "fuzz" / "regressions";

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// The regression XML `file` must be refused with one error that names the
// file and says `expected`.
void expect_hwloc_xml_refused(const char* file, const std::string& expected, const HwlocLoadOptions& options = {}) {
    const fs::path path = kRegressions / file;
    ASSERT_TRUE(fs::exists(path)) << path;
    auto model = load_hwloc_xml(path.string(), options);
    ASSERT_FALSE(model) << file;
    EXPECT_NE(model.error().message.find("'" + path.string() + "'"), std::string::npos) << model.error().message;
    EXPECT_NE(model.error().message.find(expected), std::string::npos) << model.error().message;
}
}  // namespace

// hwloc's own XML reader gives up on this file (and leaks inside libhwloc
// while doing so, see tests/sanitizers/lsan.supp); we must report it cleanly.
TEST(FuzzRegressions, HwlocXmlThatHwlocGivesUpOn) {
    auto path = kRegressions / "hwloc-xml-import-leak.xml";
    ASSERT_TRUE(fs::exists(path));
    auto model = load_hwloc_xml(path.string());
    if (model) {
        EXPECT_TRUE(model->check_consistency().empty());
    } else {
        EXPECT_NE(model.error().message.find(path.string()), std::string::npos);
    }
}

// Malformed markup on which hwloc's built-in XML reader crashes (so does
// `HWLOC_LIBXML_IMPORT=0 lstopo-no-graphics -i FILE`): refused before hwloc
// sees it, with the line of the problem.
TEST(FuzzRegressions, HwlocXmlThatCrashesHwlocsReader) {
    // The last one is well-formed, but hwloc 2.9 (either XML reader) crashes
    // on an object without a type and with an empty cpuset.
    for (const char* name : {"hwloc-xml-unclosed-attribute.xml", "hwloc-xml-unquoted-root.xml",
                             "hwloc-xml-object-without-type.xml", "hwloc-xml-abbreviated-types.xml"})
        expect_hwloc_xml_refused(name, "not valid hwloc XML");
}

// hwloc reads this file (a POWER8 node whose Machine was renamed Package; its
// cpukind cpuset, also damaged by the fuzzer, repaired) and
// makes the Package the root: refused with the file's name, where the
// conversion used to fail with a message for programmers (and no file name).
TEST(FuzzRegressions, HwlocXmlWhoseRootIsNotAMachine) {
    for (bool io : {false, true}) {
        HwlocLoadOptions options;
        options.include_io = io;
        expect_hwloc_xml_refused("hwloc-xml-package-root.xml", "its root object is a Package, not a Machine", options);
    }
}

// A PU whose os_index attribute was misspelt: hwloc then takes 2^32-1 as its
// OS index and allocates a 512 MB bitmap per object holding it (seconds per
// load, timeouts under the fuzzer). Refused before hwloc sees it.
TEST(FuzzRegressions, HwlocXmlWithAPuWithoutOsIndex) {
    expect_hwloc_xml_refused("hwloc-xml-pu-without-os-index.xml", "an <object type=\"PU\"> without its os_index");
}

// NUL bytes inside the <topology> tag's version: hwloc's reader stops at the
// first NUL, mid-attribute, and crashes (so does lstopo on this file).
// Refused first, with the line and column of the NUL.
TEST(FuzzRegressions, HwlocXmlWithANulByte) {
    expect_hwloc_xml_refused("hwloc-xml-nul-in-attribute.xml",
                             "line 3, column 23: a NUL byte, which XML does not allow");
}

// A <cpukind> whose cpuset is "5x00000303,...": hwloc_bitmap_sscanf asserts
// (the process aborts). Bitmaps of every element are checked first. (Two
// other damages the fuzzer made, refused first since, were repaired: a
// "su\xd9type" attribute and a complete_nodeset starting with a comma.)
TEST(FuzzRegressions, HwlocXmlWithABadCpukindCpuset) {
    expect_hwloc_xml_refused("hwloc-xml-cpukind-bad-cpuset.xml",
                             "attribute cpuset=\"5x00000303,0x03030000,,0x03030303\" of <cpukind> is not an "
                             "hwloc bitmap");
}

// The Raptor Lake laptop's only NUMA node turned into a memory-side cache
// (the fuzzer's input, less an unrelated change): hwloc 2.9 counts it as
// memory, passes its "no NUMA node" test, then fails an assertion
// (memattrs.c, guessing memory tiers) that aborts the process; lstopo too.
TEST(FuzzRegressions, HwlocXmlWithAMemorySideCacheButNoNumaNode) {
    expect_hwloc_xml_refused("hwloc-xml-memcache-without-numa.xml",
                             "it has a memory-side cache, <object type=\"MemCache\">, but no NUMA node");
}

// A POWER8 node whose first NUMA node became a memory-side cache and whose
// second NUMA node hwloc drops with its damaged package (the fuzzer's input):
// the file names a NUMA node, so it passes the rule above, but hwloc ends up
// with none and its guess of memory tiers asserted (the process aborted).
// The loader turns that guess off (HWLOC_MEMTIERS_GUESS=none unless the user
// set it): the file now loads or is refused, and never aborts.
TEST(FuzzRegressions, HwlocXmlWhoseNumaNodesHwlocDrops) {
    const fs::path path = kRegressions / "hwloc-xml-memcache-numa-dropped.xml";
    ASSERT_TRUE(fs::exists(path));
    auto model = load_hwloc_xml(path.string());
    if (model) {
        EXPECT_TRUE(model->check_consistency().empty());
    } else {
        EXPECT_NE(model.error().message.find(path.string()), std::string::npos) << model.error().message;
    }
}

// The rule needs a NUMA node somewhere, not below each memory-side cache:
// the real Optane memory-mode file (NUMA nodes behind memory-side caches)
// still loads.
TEST(FuzzRegressions, MemorySideCachesWithTheirNumaNodesStillLoad) {
    auto model = load_hwloc_xml(std::string(STACKSAGE_TEST_DATA_DIR) + "/hwloc-xml/memorysidecaches.xml");
    ASSERT_TRUE(model) << model.error().message;
}

// The KNL file with a stretch cut out (hwloc reads it with an "out-of-order"
// warning) and a PU with an attribute named "a3": hwloc's reader takes
// attribute names of a-z and _ only, loses its place in the tag, and
// crashes (SIGSEGV in hwloc_bitmap_compare_first; lstopo too). Refused by
// the name, with its line.
TEST(FuzzRegressions, HwlocXmlWithAnAttributeNameHwlocCannotRead) {
    expect_hwloc_xml_refused("hwloc-xml-attribute-name-with-digit.xml",
                             "attribute a3 of <object>: hwloc reads attribute names of a-z and _ only");
}

// The same rule for names XML allows and hwloc never writes: upper case,
// '-', '.', ':' in attribute names; anything but a-z, 0-9 and _ in element
// names.
TEST(FuzzRegressions, NamesHwlocCannotReadAreRefused) {
    const std::string path = std::string(STACKSAGE_TEST_DATA_DIR) + "/hwloc-xml/emmett.xml";
    std::string text = read_file(path);
    ASSERT_FALSE(text.empty());
    const std::size_t machine = text.find("<object type=\"Machine\"");
    ASSERT_NE(machine, std::string::npos);
    const std::size_t after = text.find('>', machine) + 1;
    for (const char* inserted : {"<info Name=\"x\" value=\"y\"/>", "<info na-me=\"x\" value=\"y\"/>",
                                 "<info xml:name=\"x\" value=\"y\"/>", "<Info name=\"x\" value=\"y\"/>",
                                 "<in.fo name=\"x\" value=\"y\"/>"}) {
        std::string bad = text;
        bad.insert(after, inserted);
        auto model = load_hwloc_xml_text(bad, "named.xml");
        ASSERT_FALSE(model) << inserted;
        EXPECT_NE(model.error().message.find("hwloc reads"), std::string::npos) << model.error().message;
    }
    // hwloc's own names, digits in element names included, still load.
    auto model = load_hwloc_xml_text(text, "emmett.xml");
    EXPECT_TRUE(model) << model.error().message;
}

// The name rule reads 16 bytes at a time: a byte hwloc cannot read is
// found at every place of names of every length (across a block's end),
// and names of hwloc's bytes alone still pass.
TEST(FuzzRegressions, NameRuleHoldsAtEveryLengthAndPlace) {
    const std::string text = read_file(std::string(STACKSAGE_TEST_DATA_DIR) + "/hwloc-xml/emmett.xml");
    const std::size_t machine = text.find("<object type=\"Machine\"");
    ASSERT_NE(machine, std::string::npos);
    const std::size_t after = text.find('>', machine) + 1;
    for (std::size_t length = 1; length <= 40; ++length) {
        const std::string good(length, 'n');
        for (const std::string& element : {"<" + good + "/>", "<info " + good + "=\"x\" value=\"y\"/>"}) {
            std::string fine = text;
            fine.insert(after, element);
            EXPECT_TRUE(check_hwloc_xml_text(fine, "named.xml")) << element;
        }
        for (std::size_t place = 0; place < length; ++place) {
            for (char rare : {'N', '3'}) {
                std::string name = good;
                name[place] = rare;
                if (place == 0 && rare == '3') continue;  // not an XML name at all
                std::string bad = text;
                bad.insert(after, "<info " + name + "=\"x\" value=\"y\"/>");
                const Status checked = check_hwloc_xml_text(bad, "named.xml");
                ASSERT_FALSE(checked) << name;
                EXPECT_NE(checked.error().message.find("hwloc reads attribute names"), std::string::npos)
                    << checked.error().message;
                if (rare == '3') continue;  // digits are fine in element names
                bad = text;
                bad.insert(after, "<" + name + "/>");
                ASSERT_FALSE(check_hwloc_xml_text(bad, "named.xml")) << name;
            }
        }
    }
}

// A PU's cpuset ",0x00000001,0x0": hwloc_bitmap_sscanf counts the words
// from the second byte on, finds one more than it counted and asserts (the
// process aborts; lstopo too). Bitmaps may not start with a comma.
TEST(FuzzRegressions, HwlocXmlWithABitmapStartingWithAComma) {
    expect_hwloc_xml_refused("hwloc-xml-bitmap-leading-comma.xml",
                             "attribute cpuset=\",0x00000001,0x0\" is not an hwloc bitmap");
}

// Crashes of hwloc 2.9 found by studying its XML import (2026-11-23), each
// reproduced with the library (lstopo and `stacksage topo` crashed or
// aborted on each before the check), each file emmett.xml changed in one
// place; refused with the reason.
TEST(FuzzRegressions, HwlocXmlStudyCasesAreRefused) {
    const std::pair<const char*, const char*> cases[] = {
        // hwloc drops a root it cannot use, then inserts its children under nothing.
        {"hwloc-xml-study-c2-root-pcidev-nosets-badbusid.xml", "its root object is a PCIDev, not a Machine"},
        {"hwloc-xml-study-r-v1-root-misc-cpuset-only.xml", "its root object is a Misc, not a Machine"},
        {"hwloc-xml-study-f-v1-root-cache.xml", "its root object is a Cache, not a Machine"},
        // Attributes hwloc computes itself: a given value trips its assertions.
        {"hwloc-xml-study-h-memattr-capacity.xml", "<memattr name=\"Capacity\">: hwloc computes"},
        {"hwloc-xml-study-h-memattr-locality.xml", "<memattr name=\"Locality\">: hwloc computes"},
        // Allowed sets disjoint from the root's: an empty topology, then a NULL root.
        {"hwloc-xml-study-k-root-allowed-both-empty.xml", "shares no CPU or NUMA node"},
        {"hwloc-xml-study-k2-allowed-cpu-disjoint-node-disjoint.xml", "shares no CPU or NUMA node"},
    };
    for (const auto& [file, reason] : cases) expect_hwloc_xml_refused(file, reason);
}

// A root without children whose cpuset shares no CPU with its
// complete_cpuset (the fuzzer's file: the Machine's sets written twice, the
// last ones disjoint), or whose CPUs in both are all outside allowed_cpuset:
// hwloc 2.9 says "Topology became empty" and then dereferences a NULL root
// (SIGSEGV; lstopo too). Refused by the sets.
TEST(FuzzRegressions, HwlocXmlWhoseRootSetsLeaveNothing) {
    expect_hwloc_xml_refused("hwloc-xml-root-cpuset-outside-complete.xml",
                             "the root's cpuset or nodeset shares no CPU or NUMA node with its complete and allowed sets");
    expect_hwloc_xml_refused("hwloc-xml-root-cpuset-complete-allowed-disjoint.xml",
                             "the root's cpuset or nodeset shares no CPU or NUMA node with its complete and allowed sets");
    // Found 20 minutes after the fix above: the complete_cpuset
    // "0x000000A2,0x,00", whose empty "0x" word our syntax check let
    // through and hwloc_bitmap_sscanf cannot read: hwloc keeps the set
    // empty, and the root's sets then leave nothing. Such words are refused
    // now (and the rule above reads sets with hwloc's own parser).
    expect_hwloc_xml_refused("hwloc-xml-root-complete-cpuset-empty-word.xml",
                             "attribute complete_cpuset=\"0x000000A2,0x,00\" is not an hwloc bitmap");
}

// nbobjs * nbobjs is computed in 32 bits by hwloc: 65537 wraps and hwloc
// reads past its buffer (<distances2>, <distances2hetero>), 2^31 wraps to 0
// and the 1.x <distances> reader writes past a 0-byte buffer. The crashing
// files are large (the values must be there); the rule needs only the
// count, so small files show it.
TEST(FuzzRegressions, HwlocXmlWithMoreDistanceObjectsThanTheFileHolds) {
    const std::string path = std::string(STACKSAGE_TEST_DATA_DIR) + "/hwloc-xml/emmett.xml";
    const std::string text = read_file(path);
    const std::size_t end = text.rfind("</topology>");
    ASSERT_NE(end, std::string::npos);
    for (const char* element : {"<distances2 type=\"PU\" nbobjs=\"65537\" kind=\"5\" name=\"NUMALatency\" "
                                "indexing=\"os\"><indexes length=\"2\">0 1</indexes><u64values length=\"2\">1 "
                                "2</u64values></distances2>",
                                "<distances2hetero nbobjs=\"65537\" kind=\"5\" name=\"X\"></distances2hetero>",
                                "<distances2 type=\"PU\" nbobjs=\"200\" kind=\"5\" name=\"X\"></distances2>"}) {
        std::string bad = text;
        bad.insert(end, element);
        auto model = load_hwloc_xml_text(bad, "distances.xml");
        ASSERT_FALSE(model) << element;
        EXPECT_NE(model.error().message.find("more objects than the file can hold distances for"), std::string::npos)
            << model.error().message;
    }
}

// 20,000 nested Groups (or 30,000 Misc objects) overflow hwloc's recursive
// reader (SIGSEGV): no
// document nested deeper than kMaxXmlDepth is accepted.
TEST(FuzzRegressions, DeeplyNestedXmlIsRefused) {
    std::string deep = "<?xml version=\"1.0\"?>\n<topology version=\"2.0\"><object type=\"Machine\" "
                       "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\">";
    for (int i = 0; i < 300; ++i) deep += "<object type=\"Misc\">";
    for (int i = 0; i <= 300; ++i) deep += "</object>";
    deep += "</topology>\n";
    auto model = load_hwloc_xml_text(deep, "deep.xml");
    ASSERT_FALSE(model);
    EXPECT_NE(model.error().message.find("elements nested deeper than 256 levels"), std::string::npos)
        << model.error().message;
    XmlProblem problem;
    std::string ok = "<a>";
    for (std::size_t i = 1; i < kMaxXmlDepth; ++i) ok += "<b>";
    for (std::size_t i = 1; i < kMaxXmlDepth; ++i) ok += "</b>";
    ok += "</a>";
    EXPECT_TRUE(is_well_formed_xml(ok, &problem)) << problem.what;
}

// hwloc's reader takes only ' ', '\t' and '\n' for white space: carriage
// returns between a PU's attributes (the fuzzer's input: the KNL file with
// "\r" x 50 after one cpuset) made it lose its place and crash (SIGSEGV in
// hwloc_bitmap_compare_first), and it refused any file with Windows line
// ends. hwloc now gets '\r' as spaces: both load, as the same model as the
// file without them.
TEST(FuzzRegressions, CarriageReturnsAreWhiteSpace) {
    const std::string path = std::string(STACKSAGE_TEST_DATA_DIR) + "/hwloc-xml/emmett.xml";
    const std::string text = read_file(path);
    auto plain = load_hwloc_xml_text(text, "emmett.xml");
    ASSERT_TRUE(plain) << plain.error().message;

    std::string in_tag = text;
    const std::size_t pu = in_tag.find("<object type=\"PU\"");
    ASSERT_NE(pu, std::string::npos);
    const std::size_t after_cpuset = in_tag.find("\" ", in_tag.find("cpuset=", pu)) + 1;
    in_tag.insert(after_cpuset, std::string(50, '\r'));
    std::string windows;
    for (char c : text) {
        if (c == '\n') windows += '\r';
        windows += c;
    }
    const std::string fuzzed = read_file(kRegressions / "hwloc-xml-carriage-returns-in-tag.xml");
    ASSERT_NE(fuzzed.find('\r'), std::string::npos);
    auto knl = load_hwloc_xml_text(fuzzed, "knl.xml");  // crashed the process
    ASSERT_TRUE(knl) << knl.error().message;
    EXPECT_TRUE(knl->check_consistency().empty());
    for (const std::string* variant : {&in_tag, &windows}) {
        auto model = load_hwloc_xml_text(*variant, "cr.xml");
        ASSERT_TRUE(model) << model.error().message;
        EXPECT_EQ(model->component_count(), plain->component_count());
        EXPECT_TRUE(model->check_consistency().empty());
    }
}

// White space between an attribute's name and '=' (the fuzzer's input: a
// PU of the 2-socket Intel file with `complete_cpuset   ="..."`), after
// '=', or single quotes: XML allows each, hwloc's reader does not, loses its
// place and crashes (SIGSEGV; lstopo too). Refused with the line.
TEST(FuzzRegressions, HwlocXmlAttributesNotWrittenAsHwlocWritesThem) {
    expect_hwloc_xml_refused("hwloc-xml-spaces-before-equals.xml",
                             "attribute complete_cpuset of <object>: hwloc reads only name=\"value\"");
    const std::string text = read_file(std::string(STACKSAGE_TEST_DATA_DIR) + "/hwloc-xml/emmett.xml");
    const std::size_t at = text.find("complete_cpuset=\"");
    ASSERT_NE(at, std::string::npos);
    const std::size_t value_end = text.find('"', at + 17);
    for (int variant = 0; variant < 2; ++variant) {
        std::string bad = text;
        if (variant == 0) {
            bad.insert(at + 16, " ");  // complete_cpuset= "..."
        } else {
            bad[at + 16] = '\'';  // complete_cpuset='...'
            bad[value_end] = '\'';
        }
        auto model = load_hwloc_xml_text(bad, "quotes.xml");
        ASSERT_FALSE(model) << variant;
        EXPECT_NE(model.error().message.find("hwloc reads only name=\"value\""), std::string::npos)
            << model.error().message;
    }
}

// A snapshot whose attribute list loops back on itself, with a valid
// checksum: refused, where queries used to loop forever.
TEST(FuzzRegressions, SnapshotWithACyclicList) {
    std::string bytes = read_file(kRegressions / "snapshot-cyclic-list.bin");
    ASSERT_FALSE(bytes.empty());
    std::vector<std::uint64_t> aligned((bytes.size() + 7) / 8);
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    detail::fix_snapshot_checksum(aligned.data(), bytes.size());
    auto model = read_snapshot_bytes(aligned.data(), bytes.size(), "cyclic.snap");
    ASSERT_FALSE(model);
    EXPECT_NE(model.error().message.find("cyclic"), std::string::npos) << model.error().message;
}

// A sample file whose block header claims 369 million records (20 GB) in a
// file of 403 bytes: the reader made room for all of them before reading
// (out of memory, or std::bad_alloc out of `stacksage report`). Now a block
// never claims more than the rest of the file holds: the block is cut short,
// as by a killed writer.
TEST(FuzzRegressions, SampleFileWithAHugeBlockCount) {
    const fs::path path = kRegressions / "sample-file-huge-block-count.bin";
    ASSERT_TRUE(fs::exists(path));
    auto file = read_raw_sample_file(path.string());
    ASSERT_TRUE(file) << file.error().message;
    EXPECT_TRUE(file->partial_block);
    EXPECT_EQ(file->blocks, 0u);
    EXPECT_LE(file->records.size(), (fs::file_size(path) - sizeof(sampling::SampleFileHeader)) /
                                        sizeof(sampling::SampleFileRecord));
}

// A run directory (fuzz_run_directory's input format, tests/fuzz/run_split.hpp)
// whose first event log holds a line of carriage returns after a line cut
// by a NUL byte. The reader took the line for JSON, the parse found no value
// in it, and the reader asked the empty document for its root's type: a read
// through a null pointer (a crash outside the sanitizers too). A line of
// JSON white space is blank now, and the document answers for values it
// does not hold.
TEST(FuzzRegressions, RunDirectoryWithALineOfCarriageReturns) {
    const std::string input = read_file(kRegressions / "run-directory-line-of-carriage-returns");
    ASSERT_FALSE(input.empty());
    std::array<std::string, 8> files;
    std::array<bool, 8> present;
    fuzz::split_run(input, files, present);
    const fs::path run = fs::path(testing::TempDir()) / "stacksage-fuzz-regression-run";
    fs::remove_all(run);
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (!present[i]) continue;
        fs::create_directories((run / fuzz::kRunFiles[i]).parent_path());
        std::ofstream(run / fuzz::kRunFiles[i], std::ios::binary) << files[i];
    }
    if (!present[5]) fs::copy_file(fs::path(STACKSAGE_TEST_DATA_DIR) / "hwloc-xml" / "emmett.xml", run / "n01" / "topology.xml");
    auto loaded = load_run(run.string());
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_TRUE(loaded->model.check_consistency().empty());
    fs::remove_all(run);
}
