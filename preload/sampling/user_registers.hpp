// The user registers a sample asks the kernel for (PERF_SAMPLE_REGS_USER),
// enough to unwind the copied user stack after the run: the instruction
// pointer, the stack pointer and the frame pointer.
//
// Their numbers are the architecture's (asm/perf_regs.h); the kernel writes
// the registers of the mask in increasing bit order, so the position of each
// in a sample follows from the mask.
#pragma once

#include <cstdint>

namespace stacksage::sampling {

#if defined(__x86_64__)
inline constexpr unsigned kUserRegBp = 6, kUserRegSp = 7, kUserRegIp = 8;  // PERF_REG_X86_BP, _SP, _IP
inline constexpr bool kUserRegistersKnown = true;
#elif defined(__aarch64__)
inline constexpr unsigned kUserRegBp = 29, kUserRegSp = 31, kUserRegIp = 32;  // PERF_REG_ARM64_X29, _SP, _PC
inline constexpr bool kUserRegistersKnown = true;
#else
inline constexpr unsigned kUserRegBp = 0, kUserRegSp = 0, kUserRegIp = 0;
inline constexpr bool kUserRegistersKnown = false;  // no stack copies: nothing to unwind them with
#endif

// The sample_regs_user mask: ip, sp and bp (0 where the architecture is unknown).
inline constexpr std::uint64_t kUserRegisterMask =
    kUserRegistersKnown ? (std::uint64_t{1} << kUserRegBp | std::uint64_t{1} << kUserRegSp | std::uint64_t{1} << kUserRegIp)
                        : 0;

}  // namespace stacksage::sampling
