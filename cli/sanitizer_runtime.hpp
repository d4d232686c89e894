// What a program traced by a sanitized build of stacksage needs.
//
// `make check` builds stacksage a second time with AddressSanitizer (and the
// recorder's threaded tests a third time with ThreadSanitizer). Such a build's
// libstacksage-preload.so is instrumented: every program it is preloaded into,
// also one that is not sanitizer-built (mpirun, sh, taskset), must load the
// sanitizer runtime before the C library. The runtime goes right after the
// recorder in LD_PRELOAD, not before it: the recorder must be the first to
// see pthread_create, or the runtime's own wrapper would hide the calling
// module and the thread's start routine. `stacksage run` and the integration
// tests do this. In a normal build every function here is a no-op.
#pragma once

#include <string>

namespace stacksage::cli {

// The absolute path of the sanitizer runtime (libasan.so / libtsan.so) this
// program was linked with; "" in a build without ASan or TSan, or with a
// statically linked runtime.
std::string sanitizer_runtime_library();

// `preloads` (a colon-separated LD_PRELOAD value whose first entry is the
// recorder) with the runtime inserted second; unchanged when there is no
// runtime or it is already there.
std::string with_sanitizer_runtime(const std::string& preloads);

// The variable that carries the runtime's options ("ASAN_OPTIONS",
// "TSAN_OPTIONS"), or nullptr without a runtime.
const char* sanitizer_options_variable();

// `existing` options plus what a traced program needs: ASan may then sit
// second in LD_PRELOAD (verify_asan_link_order=0), leak reports unwind
// through libraries without frame pointers, and fatal signals are
// left to the program and the recorder as in a normal build (handle_segv=0,
// handle_abort=0, ...), so a crash still ends the process by its signal.
std::string sanitizer_options_for_traced_programs(const std::string& existing);

}  // namespace stacksage::cli
