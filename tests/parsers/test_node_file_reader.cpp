// The node file (core/formats/node_file_format.hpp) read back: streams in
// their order, chains of regions joined, and what a killed process or a
// damaged file leaves tolerated and said.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "parsers/node_file_reader.hpp"
#include "parsers/run_directory.hpp"
#include "parsers/process_log.hpp"
#include "tests/support/node_file_writer.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;
namespace nf = stacksage::formats::node_file;

namespace {

std::string log_of(std::int64_t pid, std::int64_t rank, unsigned threads, bool ended = true) {
    SyntheticProcess p = busy_process("n01", pid, rank, threads, "0-3");
    p.write_end = ended;
    return event_log_text(p);
}

}  // namespace

TEST(NodeFileReader, NamesOfTheNodeFiles) {
    EXPECT_TRUE(is_node_file_name("node.events", nf::FileKind::events));
    EXPECT_TRUE(is_node_file_name("node.3.events", nf::FileKind::events));
    EXPECT_FALSE(is_node_file_name("node.events", nf::FileKind::samples));
    EXPECT_TRUE(is_node_file_name("node.samples", nf::FileKind::samples));
    EXPECT_FALSE(is_node_file_name("node.x.events", nf::FileKind::events));
    EXPECT_FALSE(is_node_file_name(".node.events.42.tmp", nf::FileKind::events));
    EXPECT_FALSE(is_node_file_name("pid-1.jsonl", nf::FileKind::events));
}

TEST(NodeFileReader, EachProcessIsAStreamAndParsesAsItsOwnLog) {
    NodeFileWriter w("n01");
    const std::string a = log_of(100, 0, 4), b = log_of(200, 1, 2);
    w.add_stream(a, 100, 0);
    w.add_stream(b, 200, 1);
    auto node = parse_node_file(w.bytes(), "n01/node.events", nf::FileKind::events);
    ASSERT_TRUE(node) << node.error().message;
    EXPECT_EQ(node->host, "n01");
    ASSERT_EQ(node->streams.size(), 2u);
    EXPECT_EQ(node->streams[0].stream, 1u);
    EXPECT_EQ(node->streams[0].pid, 100);
    EXPECT_EQ(node->streams[1].rank, 1);
    EXPECT_TRUE(node->streams[0].ended);
    EXPECT_EQ(node->streams[0].text, a);  // the recorded length: no padding
    EXPECT_EQ(node->streams[1].text, b);
    auto image = parse_process_log(node->streams[0].text, "n01/node.events#1");
    ASSERT_TRUE(image) << image.error().message;
    EXPECT_EQ(image->threads.size(), 4u);
}

TEST(NodeFileReader, ChainedRegionsAreJoinedInTheirOrderEvenWhenInterleaved) {
    const std::string a = log_of(100, 0, 8), b = log_of(200, 1, 8);
    // Two processes growing at once: their regions alternate in the file.
    NodeFileWriter split("n01");
    split.add_stream(a, 100, 0, true, 0, 256);
    split.add_stream(b, 200, 1, true, 0, 256);
    auto node = parse_node_file(split.bytes(), "n", nf::FileKind::events);
    ASSERT_TRUE(node);
    ASSERT_EQ(node->streams.size(), 2u);
    EXPECT_GT(node->streams[0].regions, 2u);
    EXPECT_EQ(node->streams[0].text, a);
    EXPECT_EQ(node->streams[1].text, b);
}

TEST(NodeFileReader, AKilledProcessesStreamEndsInNulsAndLosesNothingWritten) {
    NodeFileWriter w("n01");
    std::string text = log_of(100, 0, 3, /*ended=*/false);
    const std::size_t whole = text.size();
    text += std::string(500, '\0');  // the unused rest of its region
    w.add_stream(text, 100, 0, /*ended=*/false);
    auto node = parse_node_file(w.bytes(), "n", nf::FileKind::events);
    ASSERT_TRUE(node);
    ASSERT_EQ(node->streams.size(), 1u);
    EXPECT_FALSE(node->streams[0].ended);
    EXPECT_GE(node->streams[0].text.size(), whole);
    auto image = parse_process_log(node->streams[0].text, "n#1");
    ASSERT_TRUE(image) << image.error().message;
    EXPECT_EQ(image->threads.size(), 3u);  // every thread it had recorded
    EXPECT_FALSE(image->end_known);
}

TEST(NodeFileReader, AZeroedRegionIsSteppedOverAndTheStreamsAfterItAreRead) {
    NodeFileWriter w("n01");
    w.add_stream(log_of(100, 0, 2), 100, 0);
    w.add_zeros(16 << 10);  // reserved by a process killed before it wrote the header
    w.add_stream(log_of(300, 2, 2), 300, 2);
    auto node = parse_node_file(w.bytes(), "n", nf::FileKind::events);
    ASSERT_TRUE(node);
    EXPECT_EQ(node->damaged_regions, 1u);
    ASSERT_EQ(node->streams.size(), 2u);
    EXPECT_EQ(node->streams[1].pid, 300);
}

TEST(NodeFileReader, AMissingRegionLeavesTornLinesNeverGluedOnes) {
    const std::string a = log_of(100, 0, 8);
    NodeFileWriter w("n01");
    w.add_stream(a, 100, 0, true, 0, 320);
    // Wipe the header of the stream's third region.
    std::string& bytes = w.bytes();
    std::size_t at = nf::kNodeHeaderBytes;
    for (int i = 0; i < 2; ++i) {
        nf::RegionHeader h{};
        std::memcpy(&h, bytes.data() + at, sizeof h);
        at += h.region_bytes;
    }
    std::memset(bytes.data() + at, 0, sizeof(nf::RegionHeader));
    auto node = parse_node_file(bytes, "n", nf::FileKind::events);
    ASSERT_TRUE(node);
    ASSERT_EQ(node->streams.size(), 1u);
    EXPECT_EQ(node->streams[0].missing_regions, 1u);
    auto image = parse_process_log(node->streams[0].text, "n#1");
    ASSERT_TRUE(image) << image.error().message;
    EXPECT_GT(image->summary.torn_lines, 0u);
}

TEST(NodeFileReader, AFileOfAnotherKindVersionOrNoneIsRefusedByName) {
    NodeFileWriter samples("n01", nf::FileKind::samples);
    auto wrong_kind = parse_node_file(samples.bytes(), "n01/node.events", nf::FileKind::events);
    ASSERT_FALSE(wrong_kind);
    EXPECT_NE(wrong_kind.error().message.find("n01/node.events: a node file of another kind"), std::string::npos);
    auto none = parse_node_file(std::string(5000, 'x'), "n01/node.events", nf::FileKind::events);
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("not a stacksage node file"), std::string::npos);
    NodeFileWriter newer("n01");
    newer.bytes()[16] = 9;  // version
    auto future = parse_node_file(newer.bytes(), "n01/node.events", nf::FileKind::events);
    ASSERT_FALSE(future);
    EXPECT_NE(future.error().message.find("newer stacksage"), std::string::npos);
}

TEST(NodeFileReader, OneStreamIsReadFromItsOwnRegionsOnly) {
    const std::string a = log_of(100, 0, 6), b = log_of(200, 1, 6);
    NodeFileWriter w("n01");
    w.add_stream(a, 100, 0, true, 0, 512);
    w.add_stream(b, 200, 1, /*ended=*/false, 0, 512);
    // Where stream 2's regions are, as its writer would know them.
    std::vector<std::uint64_t> offsets, wrong;
    for (std::uint64_t at = nf::kNodeHeaderBytes; at < w.bytes().size();) {
        nf::RegionHeader h{};
        std::memcpy(&h, w.bytes().data() + at, sizeof h);
        (h.stream == 2 ? offsets : wrong).push_back(at);
        at += h.region_bytes;
    }
    TempDir dir;
    const std::string path = (dir.path() / "node.events").string();
    SyntheticRun::write_file(path, w.bytes());
    auto text = read_node_stream(path, "node.events", 2, offsets.data(), offsets.size());
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_EQ(text->substr(0, b.size()), b);  // not ended: the rest of its last region follows (NULs)
    EXPECT_EQ(text->find_first_not_of('\0', b.size()), std::string::npos);
    auto other = read_node_stream(path, "node.events", 2, wrong.data(), wrong.size());
    ASSERT_FALSE(other);
    EXPECT_NE(other.error().message.find("region 0 of stream 2 is not where its writer put it"), std::string::npos);
}

// A damaged region header whose data would start past the file's end (its
// header size claims more than the file holds): fuzz_node_file found the
// reader cutting the text out of the file there, which threw. The region
// keeps what the file holds of it (nothing), the streams before it are read.
TEST(NodeFileReader, ARegionHeaderClaimingMoreThanTheFileHoldsGivesAnEmptyStream) {
    NodeFileWriter w("n01");
    const std::string a = log_of(100, 0, 2), b = log_of(200, 1, 2);
    w.add_stream(a, 100, 0);
    const std::size_t second = w.bytes().size();
    w.add_stream(b, 200, 1);
    nf::RegionHeader h{};
    std::memcpy(&h, w.bytes().data() + second, sizeof h);
    h.header_bytes = 1u << 20;  // 1 MiB of header in a file of a few KiB
    h.region_bytes = std::uint64_t{2} << 20;
    std::memcpy(w.bytes().data() + second, &h, sizeof h);
    auto node = parse_node_file(w.bytes(), "n01/node.events", nf::FileKind::events);
    ASSERT_TRUE(node) << node.error().message;
    ASSERT_EQ(node->streams.size(), 2u);
    EXPECT_EQ(node->streams[0].text, a);
    EXPECT_TRUE(node->streams[1].text.empty());

    // Read from its own regions, a region claiming 1 GiB is read as far as
    // the file goes (never allocated whole), cut at the recorded length.
    TempDir dir;
    const std::string path = (dir.path() / "node.events").string();
    std::memcpy(&h, w.bytes().data() + second, sizeof h);
    h.header_bytes = sizeof h;
    h.region_bytes = nf::kMaxRegionBytes;
    std::memcpy(w.bytes().data() + second, &h, sizeof h);
    SyntheticRun::write_file(path, w.bytes());
    const std::uint64_t offset = second;
    auto text = read_node_stream(path, "node.events", 2, &offset, 1);
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_EQ(*text, b);
}
