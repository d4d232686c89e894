#include "preload/new_process_detector.hpp"

#include <sys/mman.h>

#include "preload/raw_syscall.hpp"

namespace stacksage::preload {

namespace new_process_detector_detail {
namespace {
// Before the page is mapped (or where it cannot be): never reads zero.
constinit const volatile int g_never_new = 1;
}  // namespace
constinit std::atomic<const volatile int*> g_owner_word{&g_never_new};
}  // namespace new_process_detector_detail

namespace {

using new_process_detector_detail::g_owner_word;

constexpr long kMadvWipeOnFork = 18;  // MADV_WIPEONFORK, Linux >= 4.14
constexpr long kPage = 4096;

// The mapped word (nullptr until mapped). Inherited by every child of fork,
// which sees it zeroed; kept across children.
constinit volatile int* g_page_word = nullptr;

}  // namespace

bool arm_new_process_detector(int pid) {
    if (g_page_word == nullptr) {
        const long addr = raw::mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (addr < 0 && addr > -4096) return false;
        if (raw::syscall6(SYS_madvise, addr, kPage, kMadvWipeOnFork) != 0) {
            raw::munmap(reinterpret_cast<void*>(addr), kPage);
            return false;
        }
        g_page_word = reinterpret_cast<volatile int*>(addr);
    }
    *g_page_word = pid > 0 ? pid : 1;
    g_owner_word.store(g_page_word, std::memory_order_release);
    return true;
}

bool claim_new_process() {
    if (g_page_word == nullptr || *g_page_word != 0) return false;
    // One thread in a new process (only the forking thread is copied), but a
    // signal handler may interrupt the claim: compare-and-swap.
    int expected = 0;
    return __atomic_compare_exchange_n(const_cast<int*>(g_page_word), &expected, -1, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_RELAXED);
}

}  // namespace stacksage::preload
