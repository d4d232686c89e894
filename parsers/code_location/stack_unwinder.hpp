// Unwinds a call site's copy of the user stack after the run (a SampledSite
// with unwind "stack": its registers ip, sp, bp and the stack bytes from sp
// up), with libunwind's remote interface: memory reads come from the copy,
// or for addresses in a file mapping from the module's file; the unwind
// tables from the module's .eh_frame_hdr / .eh_frame (or, where a frame has
// none, libunwind's frame-pointer rule). x86-64 only: elsewhere every unwind
// fails with UnwindOutcome::Unsupported.
//
// An unwind stops where it must and says why; the frames before that point
// are real, nothing after it is guessed.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "parsers/code_location/module_file.hpp"
#include "parsers/code_location/process_address_space.hpp"
#include "parsers/sample_summary.hpp"

namespace stacksage {

enum class UnwindOutcome : std::uint8_t {
    Complete,      // reached the outermost frame (its return address is undefined)
    StackCopyEnd,  // the next frame's data lies above the copied stack: the outer callers are missing
    NoUnwindInfo,  // a frame's code lies in no readable module and its frame pointer led nowhere
    StepFailed,    // libunwind could not step (bad unwind data, a corrupt frame)
    NoStack,       // the site has no stack copy (or no registers)
    TooDeep,       // stopped at the frame limit
    Unsupported,   // this build cannot unwind the recorded architecture
};
// "complete", "stack_copy_end", "no_unwind_info", "step_failed", "no_stack", "too_deep", "unsupported".
std::string_view to_string(UnwindOutcome outcome);
// True for the outcomes that lose callers (all but Complete and TooDeep).
bool is_unwind_failure(UnwindOutcome outcome);

struct UnwoundStack {
    std::vector<std::uint64_t> frames;  // the sampled ip first, then the return addresses, callers outward
    UnwindOutcome outcome = UnwindOutcome::NoStack;
};

class StackUnwinder {
public:
    // space and files must outlive the unwinder.
    StackUnwinder(const ProcessAddressSpace& space, ModuleFiles& files);
    ~StackUnwinder();
    StackUnwinder(const StackUnwinder&) = delete;
    StackUnwinder& operator=(const StackUnwinder&) = delete;

    // \return the frames of site's stack copy, at most max_frames, and how the unwind ended.
    UnwoundStack unwind(const SampledSite& site, std::size_t max_frames = 64);

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace stacksage
