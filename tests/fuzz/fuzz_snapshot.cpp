// The snapshot reader. Random bytes rarely pass the checksum, so the target
// fixes the checksum of its input first: the fuzzer then explores the header,
// the section table and the index validation behind it. Whatever is accepted
// must answer every query without reading out of bounds (ASan watches).
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/snapshot.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    std::vector<std::uint64_t> aligned((size + 7) / 8);
    std::memcpy(aligned.data(), data, size);
    stacksage::detail::fix_snapshot_checksum(aligned.data(), size);
    auto model = stacksage::read_snapshot_bytes(aligned.data(), size, "fuzz.snap");
    if (!model) return 0;
    const auto& m = *model;
    std::uint64_t sum = 0;
    m.for_each_component([&](stacksage::ComponentId id) {
        sum += m.kind(id).size() + m.name(id).size() + m.cpuset(id).count();
        sum += m.children(id).size() + m.all_datapaths(id, stacksage::Direction::Out).size();
        m.for_each_attr(id, [&](stacksage::AttrKey k, const stacksage::AttributeValue&) { sum += m.key_name(k).size(); });
    });
    m.for_each_datapath([&](stacksage::DataPathId p) { sum += index_of(m.source(p)); });
    return sum == 42 ? 0 : 0;
}
