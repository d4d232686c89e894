// Which module asked for something: the first frame, walking out from the
// interposer, that is not glibc, libstdc++ or another pass-through library.
//
// The immediate return address answers almost every call (libgomp, libomp,
// Open MPI call pthread_create themselves). Only when it lands in a
// pass-through library (std::thread goes through libstdc++) do we unwind,
// with libgcc's _Unwind_Backtrace: already loaded in every C++ program (and
// by glibc for cancellation), where libunwind would add itself and liblzma
// to every traced program.
#pragma once

#include <cstdint>

#include "preload/module_table.hpp"

namespace stacksage::preload {

// nullptr when the address is in no known module (JIT code, ...).
const Module* creator_module(std::uintptr_t return_address);

// Up to max distinct non-pass-through modules on the call stack, innermost
// first, for rare events where the chain matters (an affinity change made by
// libhwloc on behalf of libopen-pal). Returns how many were stored.
int module_chain(const Module** out, int max);

}  // namespace stacksage::preload
