#include "cli/unrecordable_program.hpp"

#include <elf.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "analysis/launch_command.hpp"

namespace stacksage::cli {

namespace {

// A bare name is looked up in PATH as execvp would.
std::string resolve(const std::string& program) {
    if (program.empty() || program.find('/') != std::string::npos) return program;
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    for (std::size_t at = 0; at <= dirs.size();) {
        const std::size_t colon = std::min(dirs.find(':', at), dirs.size());
        std::string dir = dirs.substr(at, colon - at);
        if (dir.empty()) dir = ".";
        const std::string candidate = dir + "/" + program;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        at = colon + 1;
    }
    return {};
}

// Whether the ELF file has no program interpreter: no dynamic loader reads
// LD_PRELOAD for it. Not an ELF file (a script: its interpreter is the
// program), or unreadable: false.
template <class Ehdr, class Phdr> bool lacks_interpreter(std::ifstream& in) {
    Ehdr eh{};
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh)) return false;
    if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) return false;
    if (eh.e_phentsize != sizeof(Phdr) || eh.e_phnum == 0) return false;
    bool loads = false;
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
        Phdr ph{};
        in.seekg(static_cast<std::streamoff>(eh.e_phoff + i * sizeof ph));
        if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return false;
        if (ph.p_type == PT_INTERP) return false;
        if (ph.p_type == PT_LOAD) loads = true;
    }
    // A shared library without an interpreter is not run directly; a program is.
    return loads && (eh.e_type == ET_EXEC || eh.e_entry != 0);
}

bool statically_linked(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    unsigned char ident[EI_NIDENT] = {};
    if (!in.read(reinterpret_cast<char*>(ident), sizeof ident)) return false;
    if (std::memcmp(ident, ELFMAG, SELFMAG) != 0) return false;
    if (ident[EI_CLASS] == ELFCLASS64) return lacks_interpreter<Elf64_Ehdr, Elf64_Phdr>(in);
    if (ident[EI_CLASS] == ELFCLASS32) return lacks_interpreter<Elf32_Ehdr, Elf32_Phdr>(in);
    return false;
}

}  // namespace

std::optional<UnrecordableProgram> check_recordable(const std::string& program) {
    const std::string path = resolve(program);
    struct stat st {};
    if (path.empty() || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    const std::string untraced = " cannot be recorded: ";
    if (statically_linked(path))
        return UnrecordableProgram{path, "static",
                                   path + untraced +
                                       "it is statically linked (no dynamic loader, so LD_PRELOAD is never read); "
                                       "link it dynamically (without -static) to record it"};
    // Secure-execution mode: the loader drops LD_PRELOAD when the program
    // changes the user or group it runs as, or gains capabilities.
    if ((st.st_mode & S_ISUID) != 0 && st.st_uid != ::getuid())
        return UnrecordableProgram{path, "setuid",
                                   path + untraced + "it is set-user-ID (owner uid " + std::to_string(st.st_uid) +
                                       ", you are uid " + std::to_string(::getuid()) +
                                       "), and the dynamic loader ignores LD_PRELOAD in such programs; run a copy "
                                       "without the set-user-ID bit (cp, then chmod u-s), or run it as its owner"};
    if ((st.st_mode & S_ISGID) != 0 && (st.st_mode & S_IXGRP) != 0 && st.st_gid != ::getgid())
        return UnrecordableProgram{path, "setgid",
                                   path + untraced + "it is set-group-ID (group " + std::to_string(st.st_gid) +
                                       ", yours is " + std::to_string(::getgid()) +
                                       "), and the dynamic loader ignores LD_PRELOAD in such programs; run a copy "
                                       "without the set-group-ID bit (cp, then chmod g-s)"};
    if (::geteuid() != 0 && ::getxattr(path.c_str(), "security.capability", nullptr, 0) > 0)
        return UnrecordableProgram{path, "capabilities",
                                   path + untraced +
                                       "it has file capabilities (setcap; getcap lists them), and the dynamic loader "
                                       "ignores LD_PRELOAD in such programs; run a copy without them (cp drops "
                                       "them), or run it as root"};
    return std::nullopt;
}

std::vector<UnrecordableProgram> unrecordable_programs(const std::vector<std::string>& command) {
    std::vector<UnrecordableProgram> out;
    if (command.empty()) return out;
    if (auto problem = check_recordable(command.front())) out.push_back(std::move(*problem));
    const LaunchCommand launch = parse_launch_command(command);
    if (launch.is_launcher && !launch.program_args.empty())
        if (auto problem = check_recordable(launch.program_args.front())) out.push_back(std::move(*problem));
    return out;
}

}  // namespace stacksage::cli
