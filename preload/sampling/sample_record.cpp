#include "preload/sampling/sample_record.hpp"

#include <linux/perf_event.h>

#include "preload/sampling/user_registers.hpp"

namespace stacksage::sampling {

namespace {
// The fields in the order the kernel writes them (perf_output_sample).
// Fixed-size before the variable part:
constexpr std::uint64_t kHead[] = {
    PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID,       PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR,
    PERF_SAMPLE_ID,         PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_PERIOD,
};
// Variable (READ, RAW and BRANCH_STACK, which sit among them, are not supported):
constexpr std::uint64_t kVariable = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
// Fixed-size after it (REGS_INTR, among them, is not supported):
constexpr std::uint64_t kTail[] = {
    PERF_SAMPLE_WEIGHT_TYPE, PERF_SAMPLE_DATA_SRC,   PERF_SAMPLE_TRANSACTION,     PERF_SAMPLE_PHYS_ADDR,
    PERF_SAMPLE_CGROUP,      PERF_SAMPLE_DATA_PAGE_SIZE, PERF_SAMPLE_CODE_PAGE_SIZE,
};

std::uint64_t load(const unsigned char* p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
}  // namespace

std::uint64_t SampleLayout::supported_bits() {
    std::uint64_t bits = kVariable;
    for (std::uint64_t b : kHead) bits |= b;
    for (std::uint64_t b : kTail) bits |= b;
    return bits;
}

bool SampleLayout::configure(std::uint64_t sample_type, std::uint64_t regs_user_mask) {
    *this = SampleLayout{};
    if ((sample_type & ~supported_bits()) != 0) return false;
    if ((sample_type & PERF_SAMPLE_WEIGHT_TYPE) == PERF_SAMPLE_WEIGHT_TYPE) return false;
    sample_type_ = sample_type;
    regs_user_mask_ = sample_type & PERF_SAMPLE_REGS_USER ? regs_user_mask : 0;
    std::int16_t at = 0;
    for (std::uint64_t bit : kHead) {
        if ((sample_type & bit) == 0) continue;
        switch (bit) {
        case PERF_SAMPLE_IDENTIFIER: off_id_ = at; break;
        case PERF_SAMPLE_IP: off_ip_ = at; break;
        case PERF_SAMPLE_TID: off_tid_ = at; break;
        case PERF_SAMPLE_TIME: off_time_ = at; break;
        case PERF_SAMPLE_ADDR: off_addr_ = at; break;
        case PERF_SAMPLE_ID:
            // Without IDENTIFIER, the id sits here; with it, both hold the same value.
            if (off_id_ < 0) off_id_ = at;
            break;
        case PERF_SAMPLE_CPU: off_cpu_ = at; break;
        case PERF_SAMPLE_PERIOD: off_period_ = at; break;
        default: break;  // present, skipped
        }
        at = static_cast<std::int16_t>(at + 8);
    }
    tail_start_ = at;
    variable_ = (sample_type & kVariable) != 0;
    // Each variable field has at least its leading u64 (nr, abi, size).
    std::size_t least = static_cast<std::size_t>(at);
    if (sample_type & PERF_SAMPLE_CALLCHAIN) least += 8;
    if (sample_type & PERF_SAMPLE_REGS_USER) least += 8;
    if (sample_type & PERF_SAMPLE_STACK_USER) least += 8;
    std::int16_t t = 0;
    for (std::uint64_t bit : kTail) {
        if ((sample_type & bit) == 0) continue;
        switch (bit) {
        case PERF_SAMPLE_WEIGHT_TYPE:
            off_weight_ = t;
            weight_struct_ = (sample_type & PERF_SAMPLE_WEIGHT_STRUCT) != 0;
            break;
        case PERF_SAMPLE_DATA_SRC: off_data_src_ = t; break;
        case PERF_SAMPLE_PHYS_ADDR: off_phys_ = t; break;
        default: break;
        }
        t = static_cast<std::int16_t>(t + 8);
    }
    tail_bytes_ = static_cast<std::size_t>(t);
    body_size_ = least + tail_bytes_;
    return true;
}

bool SampleLayout::decode_variable(const unsigned char* body, std::size_t len, SampleRecord& out,
                                   std::size_t& tail) const {
    std::size_t at = static_cast<std::size_t>(tail_start_);
    out.callchain = nullptr;
    out.callchain_nr = 0;
    out.stack = nullptr;
    out.stack_size = out.stack_dyn_size = 0;
    out.regs_abi = 0;
    if (sample_type_ & PERF_SAMPLE_CALLCHAIN) {
        if (len < at + 8) return false;
        const std::uint64_t nr = load(body + at);
        at += 8;
        if (nr > (len - at) / 8) return false;
        out.callchain = body + at;
        out.callchain_nr = static_cast<std::uint32_t>(nr);
        at += 8 * nr;
    }
    if (sample_type_ & PERF_SAMPLE_REGS_USER) {
        if (len < at + 8) return false;
        out.regs_abi = load(body + at);
        at += 8;
        if (out.regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
            // One u64 per bit of the mask, in increasing bit order.
            const std::size_t n = static_cast<std::size_t>(__builtin_popcountll(regs_user_mask_));
            if (len < at + 8 * n) return false;
            std::size_t k = 0;
            for (unsigned bit = 0; bit < 64; ++bit) {
                if ((regs_user_mask_ & (std::uint64_t{1} << bit)) == 0) continue;
                const std::uint64_t v = load(body + at + 8 * k++);
                if (kUserRegistersKnown && bit == kUserRegIp) out.reg_ip = v;
                if (kUserRegistersKnown && bit == kUserRegSp) out.reg_sp = v;
                if (kUserRegistersKnown && bit == kUserRegBp) out.reg_bp = v;
            }
            at += 8 * n;
        }
    }
    if (sample_type_ & PERF_SAMPLE_STACK_USER) {
        // { u64 size; char data[size]; u64 dyn_size; }, dyn_size only when size != 0.
        if (len < at + 8) return false;
        const std::uint64_t size = load(body + at);
        at += 8;
        if (size != 0) {
            if (size > len - at || len - at - size < 8) return false;
            out.stack = body + at;
            out.stack_size = size;
            at += size;
            out.stack_dyn_size = load(body + at);
            if (out.stack_dyn_size > size) out.stack_dyn_size = size;
            at += 8;
        }
    }
    if (len < at + tail_bytes_) return false;
    tail = at;
    return true;
}

}  // namespace stacksage::sampling
