// The environment an exec hands to the next image, as far as the recorder is
// concerned: whether that image will be recorded (it inherits the recorder
// only through LD_PRELOAD and STACKSAGE_OUTPUT), and STACKSAGE_OUTPUT made
// absolute when it was given relative (the image may start in another
// working directory: the application's chdir()).
//
// Pure functions of their arguments: no allocation, no system call, safe in a
// vfork child and in a signal handler (exec is async-signal-safe).
#pragma once

#include <cstddef>

namespace stacksage::preload {

// The recorder's variable, and what an entry of it starts with.
inline constexpr char kOutputVariable[] = "STACKSAGE_OUTPUT";
inline constexpr char kOutputEntryPrefix[] = "STACKSAGE_OUTPUT=";

// Why an image exec'ed with envp will not be recorded, or nullptr when it
// will be: LD_PRELOAD must name a file whose base name is library_name (the
// recorder's own, libstacksage-preload.so), and STACKSAGE_OUTPUT must be set.
// envp == nullptr reads as an empty environment.
const char* why_exec_runs_untraced(char* const envp[], const char* library_name);

// envp with its STACKSAGE_OUTPUT entry replaced by absolute_entry
// ("STACKSAGE_OUTPUT=/abs/dir") when that entry's value is still
// `given` (the relative value the process started with), written into
// storage (capacity `cap` pointers, room for the terminating nullptr
// included). Returns storage when it replaced the entry, nullptr when nothing
// needs replacing (or it does not fit: the environment is then passed on as
// it is).
char* const* with_absolute_output(char* const envp[], const char* given, char* absolute_entry, char** storage,
                                  std::size_t cap);

}  // namespace stacksage::preload
