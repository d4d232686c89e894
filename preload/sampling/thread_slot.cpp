#include "preload/sampling/thread_slot.hpp"

#include "preload/sampling/process_sampler.hpp"
#include "preload/sampling/recorder_image.hpp"

#include <sched.h>
#include <unistd.h>

#include <new>

namespace stacksage::sampling {

namespace {

std::size_t table_offset() { return (sizeof(ThreadSlot) + 63) & ~std::size_t{63}; }

std::uint64_t load64(const unsigned char* p) {
    std::uint64_t v;
    __builtin_memcpy(&v, p, 8);
    return v;
}

void flush_pending(ThreadSlot& s, RawSampleSink* raw) {
    if (s.pending_count == 0) return;
    std::uint64_t addrs[ThreadSlot::kPending];
    std::int32_t nodes[ThreadSlot::kPending];
    for (std::size_t i = 0; i < s.pending_count; ++i)
        addrs[i] = needs_numa_node(static_cast<EventKind>(s.pending[i].kind), AccessKey::unpack(s.pending[i].key))
                       ? s.pending[i].record.addr
                       : 0;
    s.numa.resolve(addrs, nodes, s.pending_count);
    const bool write_raw = raw != nullptr && raw->writer.is_open();
    if (write_raw) {
        int expected = 0;
        while (!raw->lock.compare_exchange_weak(expected, 1, std::memory_order_acquire)) {
            expected = 0;
            sched_yield();
        }
    }
    for (std::size_t i = 0; i < s.pending_count; ++i) {
        const ThreadSlot::Pending& p = s.pending[i];
        const std::uint64_t packed = SourceMemo::with_node(p.key, nodes[i]);
        s.table.add_packed(packed, p.where, p.record.weight, 1);
        ++s.samples;
        if (write_raw) {
            const AccessKey key = AccessKey::unpack(packed);
            SampleFileRecord r{};
            r.time = p.record.time;
            r.ip = p.record.ip;
            r.addr = p.record.addr;
            r.data_src = p.record.data_src;
            r.weight = static_cast<std::uint32_t>(p.record.weight);
            r.weight_var2 = p.record.weight_var2;
            r.weight_var3 = p.record.weight_var3;
            r.tid = p.record.tid;
            r.cpu = p.record.cpu;
            r.node = static_cast<std::int16_t>(nodes[i]);
            r.backend = static_cast<std::uint8_t>(key.backend);
            r.served_by = static_cast<std::uint8_t>(key.served_by);
            r.op = static_cast<std::uint8_t>(key.op);
            r.flags = static_cast<std::uint8_t>((key.remote ? kSampleRemote : 0) | (key.missed ? kSampleMissed : 0));
            r.hops = key.hops;
            raw->writer.append(r);
        }
    }
    if (write_raw) raw->lock.store(0, std::memory_order_release);
    s.pending_count = 0;
}

struct SlotSink {
    ThreadSlot& s;
    RawSampleSink* raw;
    bool from_drain_thread;

    void on_sample(const unsigned char* body, std::size_t len) {
        // Every event we open puts PERF_SAMPLE_IDENTIFIER first.
        if (len < 8) {
            ++s.decode_errors;
            return;
        }
        const int e = s.events.find(load64(body));
        SampleRecord rec;
        if (e < 0 || !s.events.layout[e].decode(body, len, rec)) {
            ++s.decode_errors;
            return;
        }
        const EventKind kind = s.events.kind[e];
        ++s.event_samples[e];
        // The recorder's own accesses (writing an event, its tables) are not
        // the application's; where a thread runs (cpu-clock) stays the thread's.
        if (kind != EventKind::CpuClock) {
            const AddressRange own = recorder_image();
            if (own.contains(rec.ip) || own.contains(rec.addr)) {
                ++s.recorder_samples;
                return;
            }
        }
        if (kind == EventKind::CpuClock) {
            if (s.last_cpu != 0xffffffffu && s.last_cpu != rec.cpu) ++s.migrations;
            s.last_cpu = rec.cpu;
        }
        if (kind == EventKind::PageFaultStack) {
            // Only a stack copy for its site: the PageFault event counted the access.
            attribute(kind, e, rec);
            return;
        }
        ThreadSlot::Pending& p = s.pending[s.pending_count++];
        p.where = kind == EventKind::CpuClock ? 0 : attribute(kind, e, rec);
        p.record = rec;
        p.key = SourceMemo::with_cpu(s.sources.key_bits(kind, rec.data_src), rec.cpu);
        p.kind = static_cast<std::uint8_t>(kind);
        if (s.pending_count == ThreadSlot::kPending) flush_pending(s, raw);
    }
    // Counted in RingStats; the stack-copy event's apart (they were no accesses).
    void on_lost(std::uint64_t id, std::uint64_t n) {
        const int e = s.events.find(id);
        if (e >= 0 && s.events.kind[e] == EventKind::PageFaultStack) s.stack_event_lost += n;
    }

    // The sample's call site and data object, packed (AccessKey::where_of).
    std::uint64_t attribute(EventKind kind, int e, const SampleRecord& rec) {
        if (!attribution_active()) return 0;
        SampleContext c;
        c.with_object = kind != EventKind::CpuClock && kind != EventKind::PageFaultStack;
        c.stack_only = kind == EventKind::PageFaultStack;
        c.time_is_monotonic = s.events.monotonic_time[e];
        c.stack_lo = s.stack_lo;
        c.stack_hi = s.stack_hi;
        c.tid = s.tid;
        // The main thread's stack holds data other threads touch (OpenMP's shared locals).
        if (const ThreadSlot* main = sampler_slot(0); main != nullptr && main != &s) {
            c.other_stack_lo = main->stack_lo;
            c.other_stack_hi = main->stack_hi;
            c.other_tid = main->tid;
        }
        c.may_refresh_mappings = from_drain_thread;
        const SampleAttribution a = attribute_sample(rec, c);
        return AccessKey::where_of(a.site, a.object);
    }
};

}  // namespace

std::uint64_t SourceMemo::classify(EventKind kind, std::uint64_t data_src) {
    SampleRecord r;
    r.data_src = data_src;
    r.cpu = 0;
    return access_key_of(kind, r).pack();
}

AccessKey access_key_of(EventKind kind, const SampleRecord& record) {
    AccessKey k;
    k.backend = backend_of(kind);
    k.cpu = record.cpu;
    switch (kind) {
    case EventKind::PebsLoads:
    case EventKind::PebsStores:
    case EventKind::PebsLoadsAux:
    case EventKind::IbsOp: {
        const DataSource d = decode_data_source(record.data_src);
        k.served_by = d.served_by;
        k.op = d.op;
        // Older kernels leave mem_op empty for PEBS stores: the event says it.
        if (k.op == MemOp::Unknown) k.op = kind == EventKind::PebsStores ? MemOp::Store
                                           : kind == EventKind::PebsLoads ? MemOp::Load : MemOp::Unknown;
        k.remote = d.remote;
        k.hops = d.hops;
        k.missed = d.missed;
        break;
    }
    case EventKind::PageFault:
    case EventKind::PageFaultStack:
    case EventKind::CpuClock: break;
    }
    return k;
}

bool needs_numa_node(EventKind kind, const AccessKey& key) {
    if (kind == EventKind::CpuClock) return false;
    if (kind == EventKind::PageFault || kind == EventKind::PageFaultStack) return true;
    switch (key.served_by) {
    case ServedBy::L1:
    case ServedBy::FillBuffer:
    case ServedBy::L2:
    case ServedBy::L3:
    case ServedBy::L4:
    case ServedBy::PeerCache: return false;
    default: return true;
    }
}

void ThreadSlot::lock_wait() {
    while (!try_lock()) sched_yield();
}

void ThreadSlot::drain(RawSampleSink* raw, bool from_drain_thread) {
    if (events.mapping == nullptr) return;
    SlotSink sink{*this, raw, from_drain_thread};
    drain_ring(events.ring, sink, ring_stats, scratch, sizeof scratch);
    flush_pending(*this, raw);
}

void ThreadSlot::account_unrecorded() {
    std::uint64_t expected_total = 0, seen_total = 0;
    for (std::size_t i = 0; i < events.count; ++i) {
        const std::uint64_t period = events.sample_period[i];
        // cpu-clock counts all the thread's CPU time, kernel included, but
        // samples only its user time (exclude_kernel): its count says
        // nothing about losses. The other events count what they sample.
        // The stack-copy event's samples are not accesses either.
        if (period == 0 || events.kind[i] == EventKind::CpuClock || events.kind[i] == EventKind::PageFaultStack)
            continue;
        std::uint64_t count = 0;
        if (!event_still_open(events, i) ||
            ::read(events.fd[i], &count, sizeof count) != static_cast<ssize_t>(sizeof count))
            continue;
        expected_total += count / period;
        seen_total += event_samples[i];
    }
    // LOST records already account for part of the gap.
    const std::uint64_t ring_lost = ring_stats.lost > stack_event_lost ? ring_stats.lost - stack_event_lost : 0;
    const std::uint64_t known = seen_total + ring_lost;
    unrecorded = expected_total > known ? expected_total - known : 0;
}

std::size_t thread_slot_bytes() {
    return table_offset() + AccessTable::bytes_for(ThreadSlot::kTableCapacity);
}

ThreadSlot* construct_thread_slot(void* zeroed_memory) {
    auto* slot = new (zeroed_memory) ThreadSlot();
    slot->table.init_zeroed(static_cast<unsigned char*>(zeroed_memory) + table_offset(), ThreadSlot::kTableCapacity);
    return slot;
}

}  // namespace stacksage::sampling
