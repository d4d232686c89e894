// CpuMask: a fixed-size CPU affinity mask the recorder can keep on the stack.
//
// The kernel's affinity calls take a byte size; 4096 CPUs covers every
// machine we target. Only the words the kernel actually uses (8 bytes on a
// 64-CPU machine) are ever written or scanned: the mask lives on the stack of
// threads being created, and every stack page touched there is a page fault
// paid again by the next thread (glibc returns exited threads' stack pages
// to the kernel). No allocation, so it is usable in signal handlers and in a
// forked child.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacksage::preload {

struct CpuMask {
    static constexpr std::size_t kWords = 64;
    static constexpr std::size_t kBytes = kWords * 8;
    // The small fields first: with a mask of up to 448 CPUs, they and the
    // words in use share one cache line (a launch slot's masks cross from
    // the creating core to the new thread's).
    unsigned used_words = 0;
    bool valid = false;  // false: unknown (the read failed or nothing was given)
    std::uint64_t words[kWords];  // only [0, used_words) is meaningful

    void clear() {
        used_words = 0;
        valid = false;
    }
    // Reads the mask of a thread (0: the calling thread) with a raw syscall.
    bool read_thread(int tid);
    // Copies a caller-supplied mask of `size` bytes (bits beyond kBytes are dropped).
    void assign(const void* mask, std::size_t size);
    bool operator==(const CpuMask& other) const;
    unsigned count() const;
    std::uint64_t word(unsigned i) const { return i < used_words ? words[i] : 0; }

    // Writes the list form ("0-7,16-23") NUL-terminated; returns the length,
    // or 0 with an empty string when it does not fit.
    std::size_t format_list(char* out, std::size_t cap) const;
    // An upper bound of format_list's length: each CPU at most once, with
    // its separator.
    std::size_t max_list_length() const;
};

}  // namespace stacksage::preload
