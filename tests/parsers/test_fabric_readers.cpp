// The fabric readers on the real dumps of tests/data/network (counts checked
// against the files by a separate, simpler reading here), on a topology file
// in ibnetdiscover's default form, on ibroute tables, on the GUID map, and
// on broken inputs (an error naming the file and line, never a crash).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "parsers/fabric_loader.hpp"
#include "parsers/ibnetdiscover_ports.hpp"
#include "parsers/ibnetdiscover_topology.hpp"
#include "parsers/ibroute.hpp"
#include "parsers/network_map.hpp"
#include "parsers/node_fabric_ports.hpp"
#include "tests/support/fat_tree.hpp"

namespace fs = std::filesystem;
using namespace stacksage;

namespace {
const fs::path kData = fs::path(STACKSAGE_TEST_DATA_DIR) / "network";

// The counts of a ports report by splitting its lines into words: distinct
// CA port GUIDs and switch GUIDs, distinct cables (unordered pairs of
// (GUID, port)), and the distinct CA GUIDs cabled to each switch.
struct Counted {
    std::set<std::string> adapters, switches;
    std::set<std::pair<std::pair<std::string, int>, std::pair<std::string, int>>> cables;
    std::map<std::string, std::set<std::string>> hosts_of_switch;
};
Counted count_by_words(const fs::path& dir) {
    Counted c;
    for (const auto& e : fs::directory_iterator(dir / "ib-raw")) {
        if (!e.path().filename().string().starts_with("ib-subnet-")) continue;
        std::ifstream in(e.path());
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("DR path", 0) == 0) continue;
            std::istringstream ws(line);
            std::vector<std::string> w;
            for (std::string x; ws >> x;) w.push_back(x);
            if (w.size() < 6) continue;
            (w[0] == "CA" ? c.adapters : c.switches).insert(w[3]);
            if (w.size() > 10 && w[6] == "-") {
                (w[7] == "CA" ? c.adapters : c.switches).insert(w[10]);
                auto a = std::make_pair(w[3], std::stoi(w[2]));
                auto b = std::make_pair(w[10], std::stoi(w[9]));
                c.cables.insert(a < b ? std::make_pair(a, b) : std::make_pair(b, a));
                if (w[0] == "SW" && w[7] == "CA") c.hosts_of_switch[w[3]].insert(w[10]);
            }
        }
    }
    return c;
}
}  // namespace

class RealFabric : public ::testing::TestWithParam<const char*> {};

TEST_P(RealFabric, CountsMatchTheFile) {
    const fs::path dir = kData / (std::string("hwloc-netloc-") + GetParam());
    Result<LoadedFabric> loaded = load_fabric(dir.string());
    ASSERT_TRUE(loaded) << loaded.error().message;
    const Fabric& f = loaded->fabric;
    const Counted c = count_by_words(dir);
    EXPECT_EQ(f.count(FabricNodeKind::Switch), c.switches.size());
    EXPECT_EQ(f.count(FabricNodeKind::Adapter), c.adapters.size());
    EXPECT_EQ(f.links().size(), c.cables.size());
    ASSERT_FALSE(c.hosts_of_switch.empty());
    for (const auto& [guid, hosts] : c.hosts_of_switch) {
        const std::uint32_t s = f.find_guid(*parse_guid(guid));
        ASSERT_NE(s, kNoFabricNode) << guid;
        std::size_t adapters = 0;
        for (const auto* nb = f.neighbours_begin(s); nb != f.neighbours_end(s); ++nb)
            adapters += f.nodes()[nb->node].kind == FabricNodeKind::Adapter;
        EXPECT_EQ(adapters, hosts.size()) << guid;
    }
    // Every cable has a width; the speeds are the ones the file names.
    for (const FabricLink& l : f.links()) EXPECT_GT(l.width, 0);
}

TEST_P(RealFabric, ForwardingTablesAreRead) {
    const fs::path dir = kData / (std::string("hwloc-netloc-") + GetParam());
    Result<LoadedFabric> loaded = load_fabric(dir.string());
    ASSERT_TRUE(loaded) << loaded.error().message;
    std::size_t files = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir / "ib-raw"))
        files += e.path().filename().string().starts_with("ibroute-");
    EXPECT_EQ(loaded->forwarding_tables + 0, files);
    EXPECT_TRUE(loaded->fabric.has_forwarding_tables());
}

INSTANTIATE_TEST_SUITE_P(Dumps, RealFabric, ::testing::Values("plafrim", "plafrim2", "avakas"));

TEST(FabricReaders, MirageHangsFromTheSwitchItsXmlNames) {
    // mirage001.xml: Port1GID0 ...:78e7:d103:0024:a7cd; the report: CA 137 1 0x78e7d1030024a7cd ... 'mirage001 HCA-1'.
    Result<LoadedFabric> loaded = load_fabric((kData / "hwloc-netloc-plafrim").string());
    ASSERT_TRUE(loaded);
    Result<std::vector<std::uint64_t>> guids =
        read_node_fabric_guids((kData / "hwloc-netloc-plafrim/hwloc/mirage001.xml").string());
    ASSERT_TRUE(guids) << guids.error().message;
    ASSERT_FALSE(guids->empty());
    std::uint32_t adapter = kNoFabricNode;
    for (std::uint64_t g : *guids)
        if (loaded->fabric.find_guid(g) != kNoFabricNode) adapter = loaded->fabric.find_guid(g);
    ASSERT_NE(adapter, kNoFabricNode);
    EXPECT_EQ(loaded->fabric.nodes()[adapter].description, "mirage001 HCA-1");
    EXPECT_EQ(loaded->fabric.nodes()[adapter].lid, 137u);
}

TEST(FabricReaders, TopologyFileInTheDefaultForm) {
    const std::string text = R"(#
# Topology file: generated on Tue Jun  5 14:15:04 2007
#
# Initiated from node 0008f10403960558 port 0008f10403960559

vendid=0x8f1
devid=0x5a06
sysimgguid=0x5442ba00003000
switchguid=0x5442ba00003080(5442ba00003080)
Switch	24 "S-005442ba00003080"		# "ISR9024 Voltaire" base port 0 lid 6 lmc 0
[22]	"H-0008f10403961354"[1](8f10403961355) 		# "MT23108 InfiniHost Mellanox Technologies" lid 4 4xSDR
[10]	"S-0008f10400410015"[1]		# "SW-6IB4 Voltaire GUID=0x1" lid 3 1xSDR

vendid=0x8f1
devid=0x5a05
switchguid=0x8f10400410015(8f10400410015)
Switch	8 "S-0008f10400410015"		# "SW-6IB4 Voltaire GUID=0x1" base port 0 lid 3 lmc 0
[6]	"H-0008f10403960984"[1](8f10403960985) 		# "node01 HCA-1" lid 16 4xQDR
[1]	"S-005442ba00003080"[10]		# "ISR9024 Voltaire" lid 6 1xSDR

vendid=0x2c9
devid=0x5a44
caguid=0x8f10403960984
Ca	2 "H-0008f10403960984"		# "node01 HCA-1"
[1](8f10403960985) 	"S-0008f10400410015"[6]		# lid 16 lmc 0 "SW-6IB4 Voltaire GUID=0x1" lid 3 4xQDR

caguid=0x8f10403961354
Ca	2 "H-0008f10403961354"		# "MT23108 InfiniHost Mellanox Technologies"
[1](8f10403961355) 	"S-005442ba00003080"[22]		# lid 4 lmc 0 "ISR9024 Voltaire" lid 6 4xSDR
)";
    EXPECT_TRUE(looks_like_ibnetdiscover_topology(text));
    EXPECT_FALSE(looks_like_ibnetdiscover_ports(text));
    Fabric f;
    std::vector<std::string> notes;
    Status s = read_fabric_text(text, "t.topo", "", f, notes);
    ASSERT_TRUE(s) << s.error().message;
    f.finish();
    EXPECT_EQ(f.count(FabricNodeKind::Switch), 2u);
    EXPECT_EQ(f.count(FabricNodeKind::Adapter), 2u);
    EXPECT_EQ(f.links().size(), 3u);  // each listed from both ends
    const std::uint32_t node01 = f.find_guid(0x8f10403960985ULL);  // by port GUID
    ASSERT_NE(node01, kNoFabricNode);
    EXPECT_EQ(f.find_guid(0x8f10403960984ULL), node01);  // and node GUID
    EXPECT_EQ(f.nodes()[node01].description, "node01 HCA-1");
    EXPECT_EQ(f.nodes()[node01].lid, 16u);
    EXPECT_EQ(f.nodes()[f.find_guid(0x8f10400410015ULL)].lid, 3u);
    EXPECT_EQ(f.nodes()[f.find_guid(0x8f10400410015ULL)].description, "SW-6IB4 Voltaire GUID=0x1");
    bool qdr = false, sdr1 = false;
    for (const FabricLink& l : f.links()) {
        qdr |= l.width == 4 && l.speed == "QDR";
        sdr1 |= l.width == 1 && l.speed == "SDR";
    }
    EXPECT_TRUE(qdr);
    EXPECT_TRUE(sdr1);
}

TEST(FabricReaders, GeneratedFatTreeReadsBack) {
    const auto tree = stacksage::testing::three_level_fat_tree(1000, 16);
    Fabric f;
    ASSERT_TRUE(read_ibnetdiscover_ports(tree.ports_report, "gen", "", f));
    f.finish();
    std::size_t switches = 0;
    for (bool s : tree.is_switch) switches += s;
    EXPECT_EQ(f.count(FabricNodeKind::Switch), switches);
    EXPECT_EQ(f.count(FabricNodeKind::Adapter), tree.hosts.size());
    EXPECT_EQ(f.links().size(), tree.cables.size());
}

TEST(FabricReaders, IbrouteTable) {
    Fabric f;
    const std::string report =
        "SW 2 1 0x000b8cffff004939 4x QDR - CA 7 1 0x0002c9030002da23 ( 'sw' - 'bonobo020 HCA-1' )\n";
    ASSERT_TRUE(read_ibnetdiscover_ports(report, "r", "s", f));
    const std::string table = R"(Unicast lids [0x0-0x8] of switch Lid 2 guid 0x000b8cffff004939 (sw):
  Lid  Out   Destination
       Port     Info 
0x0002 000 : (Switch portguid 0x000b8cffff004939: 'sw')
0x0007 001 : (Channel Adapter portguid 0x0002c9030002da23: 'bonobo020 HCA-1')
2 valid lids dumped 
)";
    std::vector<std::string> notes;
    ASSERT_TRUE(read_ibroute(table, "t", "s", f, notes));
    const ForwardingTable* t = f.forwarding_table(f.find_guid(0x000b8cffff004939ULL));
    ASSERT_NE(t, nullptr);
    ASSERT_GT(t->out_port.size(), 7u);
    EXPECT_EQ(t->out_port[7], 1);
    EXPECT_EQ(t->out_port[2], 0);
    EXPECT_EQ(t->out_port[3], ForwardingTable::kNoRoute);
    EXPECT_TRUE(notes.empty());
    // A table ibroute cut short keeps what it dumped, with a note.
    ASSERT_TRUE(read_ibroute(table.substr(0, table.find("0x0007")) + "/usr/sbin/ibroute: iberror: failed: dump tables\n",
                             "cut", "s", f, notes));
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("cut"), std::string::npos);
    // A switch the fabric lacks: left out, with a note.
    std::string other = table;
    other.replace(other.find("Lid 2 guid 0x000b8cffff004939"), 29, "Lid 9 guid 0x0000000000000009");
    ASSERT_TRUE(read_ibroute(other, "other", "s", f, notes));
    EXPECT_EQ(notes.size(), 2u);
}

TEST(FabricReaders, NetworkMap) {
    auto m = parse_network_map("# guid host\n0x0002c903000b2f73 node01\n0002:c903:000b:2f74  node02  # second\n\n", "m");
    ASSERT_TRUE(m) << m.error().message;
    ASSERT_EQ(m->size(), 2u);
    EXPECT_EQ((*m)[0].guid, 0x0002c903000b2f73ULL);
    EXPECT_EQ((*m)[1].host, "node02");
    auto bad = parse_network_map("0x1 a\nnode03\n", "map.txt");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("map.txt:2:"), std::string::npos) << bad.error().message;
}

TEST(FabricReaders, BrokenInputsNameTheFileAndLine) {
    const std::string good = "CA 1 1 0x0000000000000001 4x QDR - SW 2 3 0x0000000000000002 ( 'h HCA-1' - 's' )\n";
    struct Case {
        std::string text;
        std::string expect;
    };
    const std::vector<Case> cases = {
        {good + "CA 1 1 0xzz 4x QDR - SW 2 3 0x2 ( 'a' - 'b' )\n", "f.txt:2:"},
        {good + "CA 1 300 0x1 4x QDR - SW 2 3 0x2 ( 'a' - 'b' )\n", "f.txt:2:"},
        {good + "CA 1 1 0x1 4x QDR - SW 2 3 0x2 'a' - 'b'\n", "f.txt:2:"},
        {good + "CA 1 1 0x1 QDR - SW 2 3 0x2 ( 'a' - 'b' )\n", "f.txt:2:"},
        {good + "XX 1 1 0x1 4x QDR\n", "f.txt:2:"},
        // Port 1 of the adapter cabled to a second place.
        {good + "CA 1 1 0x0000000000000001 4x QDR - SW 2 4 0x0000000000000002 ( 'h HCA-1' - 's' )\n", "already cabled"},
        {good + "CA 1 1 0x1 4x QDR - CA 1 1 0x1 ( 'a' - 'a' )\n", "itself"},
        {good + "CA 1 1 0x1 4x QDR - SW 2 3 0x2 ( 'a' - 'b' )" + std::string(1, '\0') + "\n", "f.txt:2:"},
    };
    for (const Case& c : cases) {
        Fabric f;
        Status s = read_ibnetdiscover_ports(c.text, "f.txt", "", f);
        ASSERT_FALSE(s) << c.text;
        EXPECT_NE(s.error().message.find(c.expect), std::string::npos) << s.error().message;
    }
    Fabric f;
    Status s = read_ibnetdiscover_topology("Switch 8 \"S-0008\" # \"x\"\n[1] \"Q-1\"[1] # \"y\" lid 1 4xQDR\n", "t.topo", "", f);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message.find("t.topo:2:"), std::string::npos) << s.error().message;
    Fabric g;
    std::vector<std::string> notes;
    Status u = read_fabric_text("hello\n", "junk.txt", "", g, notes);
    ASSERT_FALSE(u);
    EXPECT_NE(u.error().message.find("junk.txt"), std::string::npos);
}

TEST(FabricReaders, UnreadablePathsAreRefusedByName) {
    auto fifo = load_fabric("/dev/zero");
    ASSERT_FALSE(fifo);
    EXPECT_NE(fifo.error().message.find("/dev/zero"), std::string::npos);
    auto missing = load_fabric("/nonexistent/fabric.txt");
    ASSERT_FALSE(missing);
    auto empty_dir = load_fabric(STACKSAGE_TEST_DATA_DIR "/hwloc-xml");
    ASSERT_FALSE(empty_dir);
    EXPECT_NE(empty_dir.error().message.find("ib-subnet"), std::string::npos);
}

TEST(FabricReaders, SlurmTopologyConf) {
    const std::string conf = "# the tree\nSwitchName=s1 Nodes=node[1-2]\nswitchname=s2 nodes=node[3-4] LinkSpeed=100\n"
                             "SwitchName=top Switches=s[1-2]\n";
    Fabric f;
    std::vector<std::string> notes;
    Status s = read_fabric_text(conf, "topology.conf", "", f, notes);
    ASSERT_TRUE(s) << s.error().message;
    f.finish();
    EXPECT_EQ(f.count(FabricNodeKind::Switch), 3u);
    EXPECT_EQ(f.count(FabricNodeKind::Adapter), 4u);
    EXPECT_EQ(f.links().size(), 6u);
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"SwitchName=s1 Nodes=n[1-\n", "topology.conf:1:"},
        {"SwitchName=s1 Nodes=n1\nSwitchName=s1 Nodes=n2\n", "topology.conf:2: switch s1 is described twice"},
        {"SwitchName=s1 Nodes=n1\nSwitchName=s2 Nodes=n1\n", "two switches"},
        {"SwitchName=top Switches=s9\n", "no line describes"},
        {"SwitchName=s1\n", "neither Nodes= nor Switches="},
    };
    for (const auto& [text, expect] : bad) {
        Fabric g;
        Status e = read_fabric_text(text, "topology.conf", "", g, notes);
        ASSERT_FALSE(e) << text;
        EXPECT_NE(e.error().message.find(expect), std::string::npos) << e.error().message;
    }
}
