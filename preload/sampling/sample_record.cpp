#include "preload/sampling/sample_record.hpp"

#include <linux/perf_event.h>

namespace stacksage::sampling {

namespace {
// Fixed-size fields in the order the kernel writes them.
constexpr std::uint64_t kOrder[] = {
    PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,        PERF_SAMPLE_TID,          PERF_SAMPLE_TIME,
    PERF_SAMPLE_ADDR,       PERF_SAMPLE_ID,        PERF_SAMPLE_STREAM_ID,    PERF_SAMPLE_CPU,
    PERF_SAMPLE_PERIOD,     PERF_SAMPLE_WEIGHT_TYPE, PERF_SAMPLE_DATA_SRC,   PERF_SAMPLE_TRANSACTION,
    PERF_SAMPLE_PHYS_ADDR,  PERF_SAMPLE_CGROUP,    PERF_SAMPLE_DATA_PAGE_SIZE, PERF_SAMPLE_CODE_PAGE_SIZE,
};
}  // namespace

std::uint64_t SampleLayout::supported_bits() {
    std::uint64_t bits = 0;
    for (std::uint64_t b : kOrder) bits |= b;
    return bits;
}

bool SampleLayout::configure(std::uint64_t sample_type) {
    *this = SampleLayout{};
    if ((sample_type & ~supported_bits()) != 0) return false;
    if ((sample_type & PERF_SAMPLE_WEIGHT_TYPE) == PERF_SAMPLE_WEIGHT_TYPE) return false;
    sample_type_ = sample_type;
    std::int16_t at = 0;
    for (std::uint64_t bit : kOrder) {
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
        case PERF_SAMPLE_WEIGHT_TYPE:
            off_weight_ = at;
            weight_struct_ = (sample_type & PERF_SAMPLE_WEIGHT_STRUCT) != 0;
            break;
        case PERF_SAMPLE_DATA_SRC: off_data_src_ = at; break;
        case PERF_SAMPLE_PHYS_ADDR: off_phys_ = at; break;
        default: break;  // present, skipped
        }
        at = static_cast<std::int16_t>(at + 8);
    }
    body_size_ = static_cast<std::size_t>(at);
    return true;
}

}  // namespace stacksage::sampling
