// The raw sample file reader (parsers/sample_file_reader.hpp) and the perf
// record decoder (preload/sampling/ring_reader.hpp, sample_record.hpp,
// data_source.hpp), in one target: the first byte selects.
//
//   even: the rest is a sample file (<stem>.samples.bin), read back;
//   odd:  the second byte picks a layout (PEBS/IBS memory samples, PEBS with
//         the legacy weight, page faults, cpu-clock, or a sample_type taken
//         from the input), the next two where the ring's tail starts (so
//         records wrap around its end), the rest is what the kernel put in
//         the ring. Every sample is decoded, classified, written with the
//         recorder's sample-file writer and read back with the reader.
//
// One target rather than two: both readers are small (a few dozen branches
// each, saturated within seconds), so one corpus and one bounded budget
// cover them, and the odd half checks them together: what the decoder
// produces is exactly what the writer writes and the reader must give back.
// The selector is a single byte the fuzzer flips for free, so each half
// keeps growing from the other's inputs.
//
// Checked, beyond "no crash, no hang, no leak, no read outside the ring":
// a file gives records or an error naming it; records never exceed what the
// file's bytes can hold, and a file without a partial block is exactly its
// header, block headers and records; the ring is drained to its head and
// every byte is accounted for; a decoded field is the bytes at its offset;
// a data source decodes to named levels and operations; the round trip
// through the file keeps every record.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "parsers/sample_file_reader.hpp"
#include "preload/sampling/data_source.hpp"
#include "preload/sampling/ring_reader.hpp"
#include "preload/sampling/sample_file_writer.hpp"
#include "preload/sampling/sample_record.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace stacksage;
using namespace stacksage::sampling;

namespace {

const std::string& file_path() {
    static const std::string path = (fuzz::scratch_dir() / "pid-1.samples.bin").string();
    return path;
}

void check_file(const std::uint8_t* data, std::size_t size) {
    fuzz::write_file(file_path(), std::string_view(reinterpret_cast<const char*>(data), size));
    Result<RawSampleFile> file = read_raw_sample_file(file_path());
    if (!file) {
        if (file.error().message.rfind(file_path() + ": ", 0) != 0) std::abort();
        return;
    }
    const RawSampleFile& f = *file;
    if (std::memcmp(f.header.magic, kSampleFileMagic, sizeof kSampleFileMagic) != 0) std::abort();
    if (f.header.version > kSampleFileVersion || f.header.record_bytes != sizeof(SampleFileRecord)) std::abort();
    if (f.header.header_bytes < sizeof(SampleFileHeader)) std::abort();
    const std::size_t body = size > f.header.header_bytes ? size - f.header.header_bytes : 0;
    if (f.records.size() > body / sizeof(SampleFileRecord)) std::abort();
    if (f.blocks > body / sizeof(SampleBlockHeader)) std::abort();
    const std::size_t used = f.blocks * sizeof(SampleBlockHeader) + f.records.size() * sizeof(SampleFileRecord);
    if (!f.partial_block && used != body) std::abort();
    if (f.partial_block && used >= body) std::abort();
}

std::uint64_t word_at(const unsigned char* body, std::size_t len, std::uint64_t at) {
    std::uint64_t v = 0;
    if (at + 8 <= len) std::memcpy(&v, body + at, 8);
    return v;
}

// The bytes a body must have, computed apart from the decoder: the fixed
// fields, and the call chain's and stack copy's declared sizes (the
// registers are none: the layouts here have no register mask). Saturates
// at UINT64_MAX when a declared size cannot fit.
std::uint64_t bytes_needed(const SampleLayout& layout, const unsigned char* body, std::size_t len) {
    std::uint64_t need = layout.body_size();
    std::uint64_t at = 8 * static_cast<std::uint64_t>(
                               __builtin_popcountll(layout.sample_type() &
                                                    (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                                     PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
                                                     PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)));
    if (layout.has(PERF_SAMPLE_CALLCHAIN)) {
        const std::uint64_t nr = word_at(body, len, at);
        if (nr > len / 8) return UINT64_MAX;
        need += 8 * nr;
        at += 8 + 8 * nr;
    }
    if (layout.has(PERF_SAMPLE_REGS_USER)) at += 8;
    if (layout.has(PERF_SAMPLE_STACK_USER)) {
        const std::uint64_t size = word_at(body, len, at);
        if (size > len) return UINT64_MAX;
        if (size != 0) need += size + 8;
    }
    return need;
}

struct Sink {
    const SampleLayout& layout;
    std::vector<SampleFileRecord> records;
    std::uint64_t calls = 0;

    void on_sample(const unsigned char* body, std::size_t len) {
        ++calls;
        SampleRecord r;
        const bool ok = layout.decode(body, len, r);
        if (ok != (len >= bytes_needed(layout, body, len))) std::abort();
        if (!ok) return;
        if (layout.has(PERF_SAMPLE_IDENTIFIER) && std::memcmp(&r.id, body, 8) != 0) std::abort();
        const DataSource d = decode_data_source(r.data_src);
        if (static_cast<int>(d.served_by) >= kServedByCount || static_cast<int>(d.op) >= kMemOpCount) std::abort();
        if (d.hops > 7) std::abort();
        ServedBy s;
        MemOp o;
        if (!served_by_from_name(served_by_name(d.served_by), s) || s != d.served_by) std::abort();
        if (!mem_op_from_name(mem_op_name(d.op), o) || o != d.op) std::abort();
        SampleFileRecord f{};
        f.time = r.time;
        f.ip = r.ip;
        f.addr = r.addr;
        f.data_src = r.data_src;
        f.weight = static_cast<std::uint32_t>(r.weight);
        f.weight_var2 = r.weight_var2;
        f.weight_var3 = r.weight_var3;
        f.tid = r.tid;
        f.cpu = r.cpu;
        f.node = -1;
        f.served_by = static_cast<std::uint8_t>(d.served_by);
        f.op = static_cast<std::uint8_t>(d.op);
        f.flags = static_cast<std::uint8_t>((d.remote ? kSampleRemote : 0) | (d.missed ? kSampleMissed : 0));
        f.hops = d.hops;
        records.push_back(f);
    }
    void on_lost(std::uint64_t, std::uint64_t) {}
};

constexpr std::uint64_t kMemory = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                  PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_WEIGHT_STRUCT |
                                  PERF_SAMPLE_DATA_SRC;
constexpr std::uint64_t kLayouts[] = {
    kMemory,                                                                          // PEBS, IBS
    (kMemory & ~std::uint64_t{PERF_SAMPLE_WEIGHT_STRUCT}) | PERF_SAMPLE_WEIGHT,       // older kernels
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
        PERF_SAMPLE_CPU,                                                              // page faults
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,  // cpu-clock
};

void check_ring(const std::uint8_t* data, std::size_t size) {
    if (size < 3) return;
    const std::uint8_t pick = data[0];
    const std::uint64_t start = (std::uint64_t{data[1]} << 8 | data[2]) & ~std::uint64_t{7};
    data += 3;
    size -= 3;
    std::uint64_t sample_type = kLayouts[pick % 5 < 4 ? pick % 5 : 0];
    if (pick % 5 == 4 && size >= 8) {  // any sample_type: a layout must refuse or handle it
        std::memcpy(&sample_type, data, 8);
        data += 8;
        size -= 8;
    }
    SampleLayout layout;
    const bool configured = layout.configure(sample_type);
    if (configured != ((sample_type & ~SampleLayout::supported_bits()) == 0 &&
                       (sample_type & PERF_SAMPLE_WEIGHT_TYPE) != PERF_SAMPLE_WEIGHT_TYPE))
        std::abort();
    if (!configured) return;
    if (layout.body_size() > 8 * 16 || layout.body_size() % 8 != 0) std::abort();

    // A ring of 1 metadata page and 4 KiB of data, as perf_event_open maps it.
    constexpr std::size_t kPage = 4096, kData = 4096;
    alignas(4096) static unsigned char mapping[kPage + kData];
    std::memset(mapping, 0, sizeof mapping);
    RingView ring = ring_view_of(mapping, sizeof mapping, kPage);
    if (ring.size != kData || ring.data != mapping + kPage) std::abort();
    const std::size_t n = std::min<std::size_t>(size, kData);
    for (std::size_t i = 0; i < n; ++i) ring.data[(start + i) & (kData - 1)] = data[i];
    ring.meta->data_tail = start;
    ring.meta->data_head = start + n;

    Sink sink{layout, {}, 0};
    RingStats stats;
    const std::uint64_t consumed = drain_ring(ring, sink, stats);
    if (consumed != n || ring.meta->data_tail != start + n) std::abort();  // drained to the head
    if (stats.samples != sink.calls || stats.samples > stats.records) std::abort();
    if (stats.records > n / sizeof(perf_event_header) || stats.corrupt > 1) std::abort();

    // Through the recorder's writer, in blocks of 3 records, and back.
    const int fd = ::open(file_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) std::abort();
    SampleFileHeader header{};
    std::memcpy(header.magic, kSampleFileMagic, sizeof kSampleFileMagic);
    header.version = kSampleFileVersion;
    header.header_bytes = sizeof header;
    header.record_bytes = sizeof(SampleFileRecord);
    alignas(8) unsigned char buffer[sizeof(SampleBlockHeader) + 3 * sizeof(SampleFileRecord)];
    SampleFileWriter writer;
    if (!writer.open(fd, buffer, sizeof buffer, header)) std::abort();
    for (const SampleFileRecord& r : sink.records) writer.append(r);
    if (!writer.close()) std::abort();
    Result<RawSampleFile> back = read_raw_sample_file(file_path());
    if (!back || back->partial_block || back->records.size() != sink.records.size()) std::abort();
    if (back->blocks != (sink.records.size() + 2) / 3) std::abort();
    for (std::size_t i = 0; i < sink.records.size(); ++i)
        if (std::memcmp(&back->records[i], &sink.records[i], sizeof(SampleFileRecord)) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    if (data[0] % 2 == 0)
        check_file(data + 1, size - 1);
    else
        check_ring(data + 1, size - 1);
    return 0;
}
