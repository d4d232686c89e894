// Reading a perf_event ring buffer (the mmap'ed perf_event_mmap_page and the
// data pages after it) without blocking the thread that writes to it.
//
// The kernel appends records at data_head; we read from data_tail up to the
// head we loaded (acquire), then publish the new tail (release) so the
// kernel may reuse the space. Records are 8-byte aligned and never larger
// than 64 KiB, but one may wrap around the end of the data area: such a
// record is copied into a scratch buffer first. A header whose size is
// impossible (smaller than a header, not a multiple of 8, or beyond what the
// kernel published) means the buffer cannot be trusted any more: the rest
// is dropped and counted as corrupt rather than misread.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace stacksage::sampling {

struct RingView {
    perf_event_mmap_page* meta = nullptr;
    unsigned char* data = nullptr;
    std::uint64_t size = 0;  // bytes of the data area, a power of two
};

// The view of a mapping of 1 + 2^n pages made by perf_event_open's mmap.
// Kernels before 4.1 leave data_offset/data_size zero: the data then starts
// at the second page.
inline RingView ring_view_of(void* mapping, std::size_t mapping_bytes, std::size_t page_size) {
    RingView v;
    v.meta = static_cast<perf_event_mmap_page*>(mapping);
    const std::uint64_t offset = v.meta->data_offset ? v.meta->data_offset : page_size;
    const std::uint64_t size = v.meta->data_size ? v.meta->data_size : mapping_bytes - page_size;
    v.data = static_cast<unsigned char*>(mapping) + offset;
    v.size = size;
    return v;
}

struct RingStats {
    std::uint64_t records = 0;     // every record read
    std::uint64_t samples = 0;     // PERF_RECORD_SAMPLE handed to the sink
    std::uint64_t lost = 0;        // samples the kernel dropped (PERF_RECORD_LOST, LOST_SAMPLES)
    std::uint64_t throttled = 0;   // PERF_RECORD_THROTTLE: the kernel slowed sampling down
    std::uint64_t unthrottled = 0;
    std::uint64_t oversize = 0;    // wrapped records too big for the scratch buffer, skipped
    std::uint64_t corrupt = 0;     // times the rest of the buffer was dropped as unreadable
    std::uint64_t other = 0;       // records of other types (mmap, comm, ...), ignored
};

// Drains the ring, calling sink.on_sample(body, len) for each sample (body
// excludes the 8-byte header) and sink.on_lost(id, count) for each loss.
// The body pointer is valid only during the call.
//
// \return the number of bytes consumed.
// scratch holds a record that wraps around (scratch_bytes, 8-byte aligned):
// with a copy of the user stack a record is several KiB.
template <class Sink>
std::uint64_t drain_ring(const RingView& ring, Sink& sink, RingStats& stats, unsigned char* scratch,
                         std::size_t scratch_bytes) {
    const std::uint64_t head = __atomic_load_n(&ring.meta->data_head, __ATOMIC_ACQUIRE);
    const std::uint64_t start = ring.meta->data_tail;  // only we write it
    const std::uint64_t mask = ring.size - 1;
    std::uint64_t tail = start;
    while (tail < head) {
        const std::uint64_t avail = head - tail;
        const std::uint64_t off = tail & mask;
        perf_event_header h;
        if (avail < sizeof h) {
            ++stats.corrupt;
            tail = head;
            break;
        }
        // 8-byte alignment and a power-of-two size keep a header in one piece.
        std::memcpy(&h, ring.data + off, sizeof h);
        if (h.size < sizeof h || (h.size & 7) != 0 || h.size > avail) {
            ++stats.corrupt;
            tail = head;
            break;
        }
        ++stats.records;
        const std::size_t body_len = h.size - sizeof h;
        const std::uint64_t body_off = (off + sizeof h) & mask;
        const unsigned char* body = ring.data + body_off;
        if (body_off + body_len > ring.size) {
            if (body_len > scratch_bytes) {
                ++stats.oversize;
                tail += h.size;
                continue;
            }
            const std::size_t first = static_cast<std::size_t>(ring.size - body_off);
            std::memcpy(scratch, ring.data + body_off, first);
            std::memcpy(scratch + first, ring.data, body_len - first);
            body = scratch;
        }
        switch (h.type) {
        case PERF_RECORD_SAMPLE:
            ++stats.samples;
            sink.on_sample(body, body_len);
            break;
        case PERF_RECORD_LOST:
            // { u64 id; u64 lost; }
            if (body_len >= 16) {
                std::uint64_t id, lost;
                std::memcpy(&id, body, 8);
                std::memcpy(&lost, body + 8, 8);
                stats.lost += lost;
                sink.on_lost(id, lost);
            }
            break;
        case PERF_RECORD_LOST_SAMPLES:
            // { u64 lost; }: samples the PMU (PEBS) could not deliver
            if (body_len >= 8) {
                std::uint64_t lost;
                std::memcpy(&lost, body, 8);
                stats.lost += lost;
                sink.on_lost(0, lost);
            }
            break;
        case PERF_RECORD_THROTTLE: ++stats.throttled; break;
        case PERF_RECORD_UNTHROTTLE: ++stats.unthrottled; break;
        default: ++stats.other; break;
        }
        tail += h.size;
    }
    __atomic_store_n(&ring.meta->data_tail, tail, __ATOMIC_RELEASE);
    return tail - start;
}

// Records without a stack copy are a few dozen bytes; 512 leaves room for
// every fixed-size sample_type bit.
template <class Sink>
std::uint64_t drain_ring(const RingView& ring, Sink& sink, RingStats& stats) {
    alignas(8) unsigned char scratch[512];
    return drain_ring(ring, sink, stats, scratch, sizeof scratch);
}

}  // namespace stacksage::sampling
