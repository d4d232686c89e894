// The NUMA node holding sampled addresses, asked of the kernel in batches.
//
// move_pages(2) with a null node list moves nothing: it reports, for each
// page, the node it is on (or -ENOENT when the page is not present,
// -EFAULT when the address is not mapped). One system call resolves a whole
// batch; the last page seen is remembered, since consecutive samples often
// touch the same page (a page-fault burst, a streaming loop).
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacksage::sampling {

class NumaLookup {
public:
    static constexpr std::size_t kBatch = 128;

    // nodes[i] := node of the page holding addrs[i], or -1 when unknown.
    // Any n: larger requests are split into batches. Safe to call from
    // several threads on distinct objects; does not allocate.
    void resolve(const std::uint64_t* addrs, std::int32_t* nodes, std::size_t n);

    std::uint64_t syscalls() const { return syscalls_; }
    // False once the kernel said move_pages is not available (ENOSYS,
    // EPERM in a sandbox): later calls answer -1 without asking.
    bool available() const { return available_; }

private:
    std::uint64_t page_mask_ = 0;
    std::uint64_t last_page_ = ~std::uint64_t{0};
    std::int32_t last_node_ = -1;
    std::uint64_t syscalls_ = 0;
    bool available_ = true;
};

}  // namespace stacksage::sampling
