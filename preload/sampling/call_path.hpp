// A sample's user call path from the kernel's frame-pointer chain
// (PERF_SAMPLE_CALLCHAIN with exclude_callchain_kernel), and whether it can
// be trusted as the whole path.
//
// The chain is PERF_CONTEXT_USER, the sampled ip, then the return address
// of each frame the kernel found by following the frame pointer. Code built
// without frame pointers leaves the frame-pointer register holding anything:
// the chain then stops at once (nothing after the ip), or goes on through
// values that are not return addresses. So the chain is complete when it
// has at least one return address and every one of them lies in executable
// code (a mapping of the process that is executable); otherwise the site
// keeps a copy of the user stack for unwinding after the run.
//
// A leaf function compiled without a frame of its own (GCC's default
// -momit-leaf-frame-pointer), or any function sampled at its first
// instruction, has its return address on top of the stack and the frame
// pointer still its caller's: the chain then skips the leaf's caller. With
// a stack copy, a word at the top of the stack that is in executable code
// and is not the chain's first return address is that missing caller.
#pragma once

#include <cstdint>

#include "preload/sampling/sample_record.hpp"

namespace stacksage::sampling {

// The bytes of user stack every sample keeps for that (the return address
// of a leaf function without its own frame).
inline constexpr std::uint32_t kTopOfStackBytes = 16;

struct CallPath {
    std::uint32_t nframes = 0;  // return addresses, caller of ip first
    bool complete = false;
};

// Copies up to cap return addresses of the record's chain into frames.
// executable(address) says whether an address is in executable code.
template <class IsExecutable>
CallPath user_call_path(const SampleRecord& r, std::uint64_t* frames, std::uint32_t cap, IsExecutable&& executable) {
    CallPath path;
    // PERF_CONTEXT_MAX and above are context markers, not addresses.
    constexpr std::uint64_t kContextMarkers = static_cast<std::uint64_t>(-4095);
    bool seen_ip = false;
    bool all_code = true;
    for (std::uint32_t i = 0; i < r.callchain_nr; ++i) {
        const std::uint64_t v = r.callchain_at(i);
        if (v >= kContextMarkers) continue;
        if (!seen_ip) {  // the sampled instruction itself
            seen_ip = true;
            continue;
        }
        if (v == 0) break;
        if (!executable(v)) {
            all_code = false;
            break;
        }
        if (path.nframes < cap) frames[path.nframes++] = v;
    }
    path.complete = all_code && path.nframes > 0;
    if (path.complete && r.stack != nullptr && r.stack_dyn_size >= 8) {
        std::uint64_t top;
        __builtin_memcpy(&top, r.stack, 8);
        if (top != frames[0] && executable(top)) {
            const std::uint32_t keep = path.nframes < cap ? path.nframes : cap - 1;
            for (std::uint32_t i = keep; i > 0; --i) frames[i] = frames[i - 1];
            frames[0] = top;
            path.nframes = keep + 1;
        }
    }
    return path;
}

}  // namespace stacksage::sampling
