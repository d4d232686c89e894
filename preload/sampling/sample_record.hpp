// Decoding PERF_RECORD_SAMPLE bodies.
//
// The body of a sample is the fields its event's sample_type selected, in
// the kernel's fixed order (include/uapi/linux/perf_event.h, "struct {
// struct perf_event_header header; { u64 id; } && PERF_SAMPLE_IDENTIFIER;
// ..."). A SampleLayout computes each field's offset once per event, so
// decoding a record is a handful of loads (no per-record walk over the bits).
//
// Three fields have a variable size: the call chain, the user registers and
// the copied user stack (what code attribution asks for, see
// docs/sample-file.md, "Code and data"). The fixed fields before them keep
// fixed offsets; those after them (weight, data source, physical address)
// are found past the variable part, whose sizes the record itself gives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace stacksage::sampling {

struct SampleRecord {
    std::uint64_t id = 0;
    std::uint64_t ip = 0;
    std::uint32_t pid = 0, tid = 0;
    std::uint64_t time = 0;
    std::uint64_t addr = 0;
    std::uint32_t cpu = 0;
    std::uint64_t period = 0;
    // PERF_SAMPLE_WEIGHT: the whole u64. PERF_SAMPLE_WEIGHT_STRUCT: weight
    // holds var1 (the latency in cycles), var2 and var3 the rest (on
    // Sapphire Rapids, var2 is the instruction latency).
    std::uint64_t weight = 0;
    std::uint16_t weight_var2 = 0, weight_var3 = 0;
    std::uint64_t data_src = 0;
    std::uint64_t phys_addr = 0;
    // PERF_SAMPLE_CALLCHAIN: callchain_nr entries (context markers such as
    // PERF_CONTEXT_USER included), pointing into the decoded body.
    const unsigned char* callchain = nullptr;
    std::uint32_t callchain_nr = 0;
    // PERF_SAMPLE_REGS_USER: abi 0 (PERF_SAMPLE_REGS_ABI_NONE) when the
    // kernel had no user registers (a kernel thread); the registers of
    // user_registers.hpp's mask otherwise.
    std::uint64_t regs_abi = 0;
    std::uint64_t reg_ip = 0, reg_sp = 0, reg_bp = 0;
    // PERF_SAMPLE_STACK_USER: stack_size bytes copied from reg_sp up, of
    // which stack_dyn_size were really on the stack; pointing into the body.
    const unsigned char* stack = nullptr;
    std::uint64_t stack_size = 0, stack_dyn_size = 0;

    // The i-th call chain entry.
    std::uint64_t callchain_at(std::uint32_t i) const {
        std::uint64_t v;
        std::memcpy(&v, callchain + 8 * static_cast<std::size_t>(i), 8);
        return v;
    }
};

class SampleLayout {
public:
    // Sample-type bits supported: the fixed-size fields, and CALLCHAIN,
    // REGS_USER and STACK_USER; READ, RAW, BRANCH_STACK, REGS_INTR and AUX
    // are not (we never ask for them).
    static std::uint64_t supported_bits();

    // regs_user_mask: the event's sample_regs_user (with REGS_USER).
    // \return false (layout unusable) when sample_type has an unsupported bit,
    //         or both WEIGHT and WEIGHT_STRUCT (the kernel refuses that too).
    bool configure(std::uint64_t sample_type, std::uint64_t regs_user_mask = 0);

    std::uint64_t sample_type() const { return sample_type_; }
    // Bytes of the body (after the 8-byte header); with variable fields,
    // the least a body can have.
    std::size_t body_size() const { return body_size_; }
    bool has(std::uint64_t bit) const { return (sample_type_ & bit) != 0; }

    // Decodes a body of len bytes. \return false, leaving out unspecified,
    // when len is shorter than body_size() or than the call chain and stack
    // copy it declares (a truncated or corrupt record).
    bool decode(const unsigned char* body, std::size_t len, SampleRecord& out) const {
        if (len < body_size_) return false;
        std::size_t tail = static_cast<std::size_t>(tail_start_);
        if (variable_ && !decode_variable(body, len, out, tail)) return false;
        if (off_id_ >= 0) out.id = load64(body + off_id_);
        if (off_ip_ >= 0) out.ip = load64(body + off_ip_);
        if (off_tid_ >= 0) {
            out.pid = load32(body + off_tid_);
            out.tid = load32(body + off_tid_ + 4);
        }
        if (off_time_ >= 0) out.time = load64(body + off_time_);
        if (off_addr_ >= 0) out.addr = load64(body + off_addr_);
        if (off_cpu_ >= 0) out.cpu = load32(body + off_cpu_);
        if (off_period_ >= 0) out.period = load64(body + off_period_);
        if (off_weight_ >= 0) {
            if (weight_struct_) {
                out.weight = load32(body + tail + off_weight_);
                out.weight_var2 = load16(body + tail + off_weight_ + 4);
                out.weight_var3 = load16(body + tail + off_weight_ + 6);
            } else {
                out.weight = load64(body + tail + off_weight_);
            }
        }
        if (off_data_src_ >= 0) out.data_src = load64(body + tail + off_data_src_);
        if (off_phys_ >= 0) out.phys_addr = load64(body + tail + off_phys_);
        return true;
    }

private:
    // The call chain, registers and stack; tail := where the fixed fields
    // after them start. \return false when the body is too short for them.
    bool decode_variable(const unsigned char* body, std::size_t len, SampleRecord& out, std::size_t& tail) const;

    static std::uint64_t load64(const unsigned char* p) {
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        return v;
    }
    static std::uint32_t load32(const unsigned char* p) {
        std::uint32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    static std::uint16_t load16(const unsigned char* p) {
        std::uint16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }

    std::uint64_t sample_type_ = 0;
    std::uint64_t regs_user_mask_ = 0;
    std::size_t body_size_ = 0;
    std::size_t tail_bytes_ = 0;     // the fixed fields after the variable part
    std::int16_t tail_start_ = 0;    // without variable fields: where those start
    bool variable_ = false;
    bool weight_struct_ = false;
    // Offsets of the fields after the variable part are relative to its end.
    std::int16_t off_id_ = -1, off_ip_ = -1, off_tid_ = -1, off_time_ = -1, off_addr_ = -1, off_cpu_ = -1,
                 off_period_ = -1, off_weight_ = -1, off_data_src_ = -1, off_phys_ = -1;
};

}  // namespace stacksage::sampling
