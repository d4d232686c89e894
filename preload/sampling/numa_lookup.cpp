#include "preload/sampling/numa_lookup.hpp"

#include "preload/raw_syscall.hpp"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace stacksage::sampling {

namespace {
// The raw system call: glibc's move_pages lives in libnuma, which the
// application may not have, and the raw call leaves errno untouched.
// Returns 0 or -errno.
long raw_move_pages(unsigned long count, void** pages, int* status) {
    return preload::raw::syscall6(SYS_move_pages, 0 /* this process */, static_cast<long>(count),
                                  reinterpret_cast<long>(pages), 0 /* nodes: query only */,
                                  reinterpret_cast<long>(status), 0);
}
}  // namespace

void NumaLookup::resolve(const std::uint64_t* addrs, std::int32_t* nodes, std::size_t n) {
    if (page_mask_ == 0) page_mask_ = ~static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE) - 1);
    void* pages[kBatch];
    int status[kBatch];
    std::size_t index[kBatch];
    std::size_t i = 0;
    while (i < n) {
        std::size_t batch = 0;
        for (; i < n && batch < kBatch; ++i) {
            const std::uint64_t page = addrs[i] & page_mask_;
            if (!available_ || addrs[i] == 0) {
                nodes[i] = -1;
            } else if (page == last_page_) {
                nodes[i] = last_node_;
            } else {
                // Neighbours in a batch often share a page: ask once.
                if (batch > 0 && reinterpret_cast<std::uint64_t>(pages[batch - 1]) == page) {
                    nodes[i] = -2 - static_cast<std::int32_t>(batch - 1);  // "same as batch slot"
                    continue;
                }
                pages[batch] = reinterpret_cast<void*>(page);
                index[batch] = i;
                nodes[i] = -2 - static_cast<std::int32_t>(batch);
                ++batch;
            }
        }
        if (batch == 0) continue;
        const long ret = raw_move_pages(batch, pages, status);
        ++syscalls_;
        if (ret < 0) {
            // ENOSYS (no NUMA support built in), EPERM (seccomp): stop asking.
            if (ret == -ENOSYS || ret == -EPERM || ret == -EACCES) available_ = false;
            for (std::size_t b = 0; b < batch; ++b) status[b] = -1;
        }
        // Fill in this batch's answers, including the "same page" references.
        const std::size_t first = index[0];
        for (std::size_t k = first; k < i; ++k) {
            if (nodes[k] > -2) continue;
            const std::size_t b = static_cast<std::size_t>(-2 - nodes[k]);
            nodes[k] = status[b] >= 0 ? status[b] : -1;
        }
        last_page_ = reinterpret_cast<std::uint64_t>(pages[batch - 1]);
        last_node_ = status[batch - 1] >= 0 ? status[batch - 1] : -1;
    }
}

}  // namespace stacksage::sampling
