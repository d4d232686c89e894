// Writes seed corpora for the fuzz targets:
//   fuzz_make_seeds TEST_DATA_DIR OUT_DIR
// OUT_DIR/fuzz_model_json/<file>.json and OUT_DIR/fuzz_snapshot/<file>.snap
// from the real topologies of TEST_DATA_DIR/hwloc-xml; from the real runs in
// tests/fuzz/seeds/runs (see its README.md): OUT_DIR/fuzz_event_log_file/
// (the logs, torn, zero-filled as a SIGKILLed process leaves them, with a NUL
// run), OUT_DIR/fuzz_event_log_line/ (each of their lines) and
// OUT_DIR/fuzz_run_directory/ (the runs packed as tests/fuzz/run_split.hpp
// says); OUT_DIR/fuzz_sample_file/ (perf rings of each sample layout the
// recorder opens, and sample files the recorder's writer makes of them);
// OUT_DIR/fuzz_node_file/ (the runs' node files as recorded, and as a kill,
// a damaged region header, a cut file and chained regions leave them).
#include <linux/perf_event.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "core/formats/node_file_format.hpp"
#include "core/model_json.hpp"
#include "core/snapshot.hpp"
#include "parsers/hwloc_loader.hpp"
#include "parsers/node_file_reader.hpp"
#include "preload/sampling/sample_file_writer.hpp"
#include "tests/support/node_file_writer.hpp"
#include "tests/fuzz/run_split.hpp"

namespace fs = std::filesystem;

namespace {

int written = 0;

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::string text{std::istreambuf_iterator<char>(in), {}};
    if (text.empty()) {
        std::fprintf(stderr, "fuzz_make_seeds: cannot read %s\n", p.c_str());
        std::exit(1);
    }
    return text;
}

void write(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    ++written;
}

// ---- event logs -------------------------------------------------------------

void event_log_seeds(const fs::path& runs, const fs::path& out) {
    std::set<std::string> lines;
    for (const auto& run : fs::directory_iterator(runs))
        for (const auto& e : fs::recursive_directory_iterator(run.path())) {
            const std::string name = e.path().filename().string();
            if (!name.ends_with(".jsonl") || name.ends_with(".samples.jsonl")) continue;
            const std::string log = read(e.path());
            const std::string stem = run.path().filename().string() + "-" + e.path().stem().string();
            write(out / "fuzz_event_log_file" / (stem + ".jsonl"), log);
            // Killed in the middle of its last line.
            const std::size_t last = log.rfind('\n', log.size() - 2) + 1;
            const std::string torn = log.substr(0, last + (log.size() - last) / 2);
            write(out / "fuzz_event_log_file" / (stem + "-torn.jsonl"), torn);
            // SIGKILLed: the mapping's unused end stays zero-filled.
            write(out / "fuzz_event_log_file" / (stem + "-zero-filled.jsonl"), torn + std::string(4096 - torn.size() % 4096, '\0'));
            // A line whose copy was cut by the kill: NULs where its end would be.
            std::string cut = log;
            const std::size_t second = log.find('\n') + 1;
            const std::size_t third = log.find('\n', second);
            if (third != std::string::npos && third > second + 20)
                std::fill(cut.begin() + static_cast<std::ptrdiff_t>(second + 20), cut.begin() + static_cast<std::ptrdiff_t>(third), '\0');
            write(out / "fuzz_event_log_file" / (stem + "-nul-run.jsonl"), cut);
            for (std::size_t at = 0; at < log.size();) {
                std::size_t end = log.find('\n', at);
                if (end == std::string::npos) end = log.size();
                lines.insert(log.substr(at, end - at));
                at = end + 1;
            }
        }
    int i = 0;
    for (const std::string& line : lines) write(out / "fuzz_event_log_line" / ("line-" + std::to_string(i++)), line);
}

// ---- run directories ----------------------------------------------------------

void run_seed(const fs::path& out, const std::string& name, const std::vector<std::pair<int, std::string>>& parts) {
    std::array<std::string, 8> files;
    std::array<bool, 8> present{};
    for (const auto& [i, text] : parts) {
        files[static_cast<std::size_t>(i)] += text;
        present[static_cast<std::size_t>(i)] = true;
    }
    const std::string joined = stacksage::fuzz::join_run(files, present);
    // The target must see these files again.
    std::array<std::string, 8> back;
    std::array<bool, 8> back_present{};
    stacksage::fuzz::split_run(joined, back, back_present);
    for (std::size_t i = 0; i < files.size(); ++i)
        if (back_present[i] != present[i] || (back[i] != files[i] && back[i] != files[i] + "\n")) {
            std::fprintf(stderr, "fuzz_make_seeds: %s: file %zu does not split back\n", name.c_str(), i);
            std::exit(1);
        }
    write(out / "fuzz_run_directory" / name, joined);
}

void run_directory_seeds(const fs::path& data, const fs::path& runs, const fs::path& out) {
    const fs::path s = runs / "sampled", m = runs / "mpi/vm";
    const std::string log = read(s / "vm/pid-4503.jsonl");
    run_seed(out, "sampled", {{0, read(s / "run.json")}, {1, log}, {2, read(s / "vm/pid-4503.samples.jsonl")},
                              {5, read(s / "vm/topology.xml")}});
    // The fixed topology, the hand-written summaries of tests/data/samples.
    for (const char* summary : {"two-socket", "torn", "corrupt-middle", "not-a-summary"})
        run_seed(out, std::string("sampled-") + summary,
                 {{0, read(s / "run.json")}, {1, log}, {2, read(data / "samples" / (std::string(summary) + ".samples.jsonl"))}});
    // Open MPI: rank 0's images before and after exec, rank 1 on a second
    // host rebuilt from its cpusets, the launcher's log without a pid.
    run_seed(out, "mpi-ranks", {{1, read(m / "rank-0000.pid-15561.jsonl")}, {3, read(m / "pid-15561.jsonl")},
                                {4, read(m / "rank-0001.pid-15562.jsonl")}, {7, read(m / "pid-15556.jsonl")}});
    run_seed(out, "mpi-launcher", {{0, read(s / "run.json")}, {1, read(m / "pid-15557.jsonl")},
                                   {3, read(m / "pid-15557.1.jsonl")}, {4, read(m / "pid-15562.jsonl")},
                                   {6, read(s / "vm/topology.xml")}});
    // GNU OpenMP's pool, never joined, measured at exit (thread_usage_at_exit).
    const fs::path pool = runs / "omp-pool";
    run_seed(out, "omp-pool", {{0, read(pool / "run.json")}, {1, read(pool / "vm/pid-30728.jsonl")},
                               {5, read(pool / "vm/topology.xml")}});
    // Killed: a torn, zero-filled log.
    const std::string torn = log.substr(0, log.size() - 40);
    run_seed(out, "killed", {{0, read(s / "run.json")}, {1, torn + std::string(200, '\0')}});
}

// ---- node files ----------------------------------------------------------------

namespace nf = stacksage::formats::node_file;

// The byte offsets of the region headers of a node file, in file order.
std::vector<std::size_t> region_offsets(const std::string& file) {
    std::vector<std::size_t> at;
    for (std::size_t i = nf::kNodeHeaderBytes; i + sizeof(nf::RegionHeader) <= file.size();) {
        nf::RegionHeader h{};
        std::memcpy(&h, file.data() + i, sizeof h);
        if (std::memcmp(h.magic, nf::kRegionMagic, sizeof h.magic) != 0 || h.region_bytes == 0) {
            i += nf::kRegionAlign;
            continue;
        }
        at.push_back(i);
        i += h.region_bytes;
    }
    return at;
}

// fuzz_node_file's first byte picks the kind the rest is read as.
void write_node_seed(const fs::path& out, const std::string& name, nf::FileKind kind, const std::string& file) {
    const char selector = static_cast<char>(static_cast<std::uint32_t>(kind) - 1);  // events 0, samples 1, models 2
    write(out / "fuzz_node_file" / name, selector + file);
}

void node_file_seeds(const fs::path& runs, const fs::path& out) {
    for (const auto& run : fs::directory_iterator(runs))
        for (const auto& e : fs::recursive_directory_iterator(run.path())) {
            const std::string name = e.path().filename().string();
            nf::FileKind kind;
            if (name == "node.events") kind = nf::FileKind::events;
            else if (name == "node.samples") kind = nf::FileKind::samples;
            else if (name == "node.models") kind = nf::FileKind::models;
            else continue;
            const std::string file = read(e.path());
            const std::string stem = run.path().filename().string() + "-" + name;
            write_node_seed(out, stem, kind, file);
            const std::vector<std::size_t> regions = region_offsets(file);
            if (regions.empty()) continue;
            // SIGKILLed: no stream's end recorded.
            std::string killed = file;
            for (std::size_t at : regions)
                std::memset(killed.data() + at + offsetof(nf::RegionHeader, stream_end), 0, sizeof(std::uint64_t));
            write_node_seed(out, stem + "-killed", kind, killed);
            // A process killed between reserving its region and writing its header.
            std::string zeroed = file;
            std::memset(zeroed.data() + regions[regions.size() / 2], 0, sizeof(nf::RegionHeader));
            write_node_seed(out, stem + "-zeroed-header", kind, zeroed);
            // A copy cut in the middle of its last region.
            write_node_seed(out, stem + "-cut", kind, file.substr(0, regions.back() + (file.size() - regions.back()) / 2));
            // The same streams as chains of small regions (a stream that
            // outgrew its first region), and compact: no unused tails.
            auto read_back = stacksage::parse_node_file(file, name, kind);
            if (!read_back) continue;
            stacksage::testing::NodeFileWriter chained(read_back->host, kind);
            for (const stacksage::NodeStream& s : read_back->streams)
                chained.add_stream(s.text, s.pid, s.rank, s.ended, s.of_stream, 256);
            write_node_seed(out, stem + "-chained", kind, chained.bytes());
        }
}

// ---- perf rings and sample files ----------------------------------------------

struct Sample {
    std::uint64_t ip, addr, time, data_src;
    std::uint32_t tid, cpu, weight;
};

void put64(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
void put32x2(std::string& out, std::uint32_t a, std::uint32_t b) { put64(out, a | std::uint64_t{b} << 32); }

std::string record(std::uint32_t type, const std::string& body) {
    perf_event_header h{};
    h.type = type;
    h.size = static_cast<std::uint16_t>(sizeof h + body.size());
    return std::string(reinterpret_cast<const char*>(&h), sizeof h) + body;
}

// A PERF_RECORD_SAMPLE body in the kernel's field order (the layouts of fuzz_sample_file).
std::string sample_body(int layout, const Sample& s) {
    std::string b;
    put64(b, 42);  // IDENTIFIER
    put64(b, s.ip);
    put32x2(b, 4711, s.tid);
    put64(b, s.time);
    if (layout <= 2) put64(b, s.addr);
    put32x2(b, s.cpu, 0);
    if (layout == 0) put64(b, s.weight | std::uint64_t{7} << 32);  // WEIGHT_STRUCT: var1, var2, var3
    if (layout == 1) put64(b, s.weight);                          // WEIGHT
    if (layout <= 1) put64(b, s.data_src);
    return b;
}

constexpr std::uint64_t lvl(std::uint64_t op, std::uint64_t level, std::uint64_t num, bool remote = false) {
    return (op << PERF_MEM_OP_SHIFT) | ((level | PERF_MEM_LVL_HIT) << PERF_MEM_LVL_SHIFT) |
           (num << PERF_MEM_LVLNUM_SHIFT) | (std::uint64_t{remote} << PERF_MEM_REMOTE_SHIFT);
}

void sample_seeds(const fs::path& out) {
    // Data sources as the kernel's Intel PEBS and AMD IBS tables give them.
    const std::vector<Sample> samples = {
        {0x401000, 0x7f0000001000, 1000, lvl(PERF_MEM_OP_LOAD, PERF_MEM_LVL_L1, PERF_MEM_LVLNUM_L1), 4711, 0, 4},
        {0x401010, 0x7f0000002000, 1100, lvl(PERF_MEM_OP_LOAD, PERF_MEM_LVL_L3, PERF_MEM_LVLNUM_L3), 4711, 1, 40},
        {0x401020, 0x7f0000003000, 1200, lvl(PERF_MEM_OP_LOAD, PERF_MEM_LVL_LOC_RAM, PERF_MEM_LVLNUM_RAM), 4712, 1, 200},
        {0x401030, 0x7f0000004000, 1300, lvl(PERF_MEM_OP_LOAD, PERF_MEM_LVL_REM_RAM1, PERF_MEM_LVLNUM_RAM, true), 4712, 0, 400},
        {0x401040, 0x7f0000005000, 1400, lvl(PERF_MEM_OP_STORE, PERF_MEM_LVL_L1, PERF_MEM_LVLNUM_L1), 4712, 0, 0},
    };
    const char* names[] = {"memory", "memory-legacy-weight", "pagefault", "cpuclock"};
    for (int layout = 0; layout < 4; ++layout) {
        std::string ring;
        for (const Sample& s : samples) ring += record(PERF_RECORD_SAMPLE, sample_body(layout, s));
        std::string lost;
        put64(lost, 42);
        put64(lost, 3);
        ring += record(PERF_RECORD_LOST, lost);
        ring += record(PERF_RECORD_THROTTLE, std::string(24, '\0'));
        // Selector 1 (the ring), layout, tail at 0; and near the end of the
        // ring, so that records wrap around it.
        for (int wrap = 0; wrap < 2; ++wrap) {
            std::string seed = {'\x01', static_cast<char>(layout), wrap ? '\x0f' : '\0', wrap ? '\xe8' : '\0'};
            write(out / "fuzz_sample_file" / (std::string("ring-") + names[layout] + (wrap ? "-wrapped" : "")), seed + ring);
        }
    }
    // A sample file as the recorder writes it (blocks of 2 records), whole and
    // with its last block cut by a kill. Selector 0 (a file).
    const fs::path tmp = out / "fuzz_sample_file" / "tmp.samples.bin";
    stacksage::sampling::SampleFileHeader header{};
    std::memcpy(header.magic, stacksage::sampling::kSampleFileMagic, 8);
    header.version = stacksage::sampling::kSampleFileVersion;
    header.header_bytes = sizeof header;
    header.record_bytes = sizeof(stacksage::sampling::SampleFileRecord);
    header.pid = 4711;
    std::strncpy(header.host, "vm", sizeof header.host);
    alignas(8) unsigned char buffer[sizeof(stacksage::sampling::SampleBlockHeader) +
                                    2 * sizeof(stacksage::sampling::SampleFileRecord)];
    stacksage::sampling::SampleFileWriter writer;
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f || !writer.open(::dup(fileno(f)), buffer, sizeof buffer, header)) std::exit(1);
    std::fclose(f);
    for (const Sample& s : samples) {
        stacksage::sampling::SampleFileRecord r{};
        r.time = s.time;
        r.ip = s.ip;
        r.addr = s.addr;
        r.data_src = s.data_src;
        r.weight = s.weight;
        r.tid = s.tid;
        r.cpu = s.cpu;
        r.node = static_cast<std::int16_t>(s.cpu);
        r.backend = 1;
        writer.append(r);
    }
    writer.close();
    const std::string file = read(tmp);
    fs::remove(tmp);
    write(out / "fuzz_sample_file" / "file", '\0' + file);
    write(out / "fuzz_sample_file" / "file-killed", '\0' + file.substr(0, file.size() - 30));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: fuzz_make_seeds TEST_DATA_DIR OUT_DIR\n");
        return 2;
    }
    const fs::path data = argv[1];
    const fs::path out = argv[2];
    fs::create_directories(out / "fuzz_model_json");
    fs::create_directories(out / "fuzz_snapshot");
    int models = 0;
    for (auto& e : fs::directory_iterator(data / "hwloc-xml")) {
        if (e.path().extension() != ".xml") continue;
        auto model = stacksage::load_hwloc_xml(e.path().string());
        if (!model) continue;
        std::ofstream(out / "fuzz_model_json" / (e.path().stem().string() + ".json"))
            << stacksage::model_to_json(*model).dump();
        std::ofstream(out / "fuzz_snapshot" / (e.path().stem().string() + ".snap"), std::ios::binary)
            << stacksage::snapshot_bytes(*model);
        ++models;
    }
    const fs::path runs = data.parent_path() / "fuzz" / "seeds" / "runs";
    event_log_seeds(runs, out);
    run_directory_seeds(data, runs, out);
    node_file_seeds(runs, out);
    sample_seeds(out);
    std::printf("%d seed models written, %d other seeds\n", models, written);
    return models > 0 ? 0 : 1;
}
