// A resolved code address: the module and offset it lies at, and where the
// module's symbols and debug information allow it, the function and the
// source file and line. What could not be resolved is said by `gap`, never
// guessed (issue 30, "what cannot be resolved is said").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stacksage {

// Why a location is less than function + file:line, best first.
enum class CodeGap : std::uint8_t {
    None,               // function and file:line
    NoLineInfo,         // function known; the module has no line information for it (built without -g)
    Stripped,           // the module has no symbol for it: module + offset only
    NoFile,             // the module's file is not on this machine or cannot be read
    BuildIdMismatch,    // the file at the module's path is another build than the one that ran
    AnonExec,           // an anonymous executable mapping (JIT code)
    Vdso,               // the kernel's vDSO
    UnreadableMapping,  // the recorder could not read the mapping's file
    NoModule,           // the address lies in no recorded mapping
};

// "none", "no_line_info", "stripped", "no_file", "build_id_mismatch",
// "anon_exec", "vdso", "unreadable_mapping", "no_module".
std::string_view to_string(CodeGap gap);
// A clause for a note: "the module has no line information (built without -g)", ...
std::string_view explain(CodeGap gap);

struct CodeLocation {
    std::uint64_t address = 0;
    std::string module;        // the module's path; "[vdso]", "[anon]" for those; "" none
    std::uint64_t offset = 0;  // the address's offset in the module's file
    std::string function;      // "" unknown
    std::string file;          // source file as the debug information names it; "" unknown
    int line = 0;              // 0 unknown
    CodeGap gap = CodeGap::NoModule;

    // "init_mesh (mesh.c:102)", "init_mesh in app", "app+0x1f40", "[anon]+0x40",
    // or "0x7f12..." without a module.
    std::string label() const;
    // "mesh.c:102" (the file's last path component); "" without a line.
    std::string source() const;
};

// The last path component: "/usr/lib/libc.so.6" -> "libc.so.6".
std::string_view base_name(std::string_view path);

}  // namespace stacksage
