#include "preload/exec_environment.hpp"

#include <cstring>

namespace stacksage::preload {

namespace {

// The value of the variable `prefix` ("NAME=") names in envp, or nullptr.
const char* find_value(char* const envp[], const char* prefix) {
    if (envp == nullptr) return nullptr;
    const std::size_t n = std::strlen(prefix);
    for (char* const* e = envp; *e != nullptr; ++e)
        if (std::strncmp(*e, prefix, n) == 0) return *e + n;
    return nullptr;
}

// Whether one of LD_PRELOAD's entries (separated by ':' or spaces, as the
// dynamic linker reads them) has library_name as its base name.
bool names_library(const char* preload, const char* library_name) {
    const std::size_t want = std::strlen(library_name);
    for (const char* p = preload; *p != '\0';) {
        while (*p == ':' || *p == ' ') ++p;
        const char* start = p;
        while (*p != '\0' && *p != ':' && *p != ' ') ++p;
        const char* base = start;
        for (const char* c = start; c < p; ++c)
            if (*c == '/') base = c + 1;
        if (static_cast<std::size_t>(p - base) == want && std::strncmp(base, library_name, want) == 0) return true;
    }
    return false;
}

}  // namespace

const char* why_exec_runs_untraced(char* const envp[], const char* library_name) {
    const char* preload = find_value(envp, "LD_PRELOAD=");
    if (preload == nullptr || *preload == '\0') return "the environment passed to exec has no LD_PRELOAD";
    if (library_name != nullptr && *library_name != '\0' && !names_library(preload, library_name))
        return "LD_PRELOAD in the environment passed to exec does not name the recorder";
    const char* output = find_value(envp, kOutputEntryPrefix);
    if (output == nullptr || *output == '\0') return "the environment passed to exec has no STACKSAGE_OUTPUT";
    return nullptr;
}

char* const* with_absolute_output(char* const envp[], const char* given, char* absolute_entry, char** storage,
                                  std::size_t cap) {
    if (envp == nullptr || given == nullptr || absolute_entry == nullptr) return nullptr;
    const std::size_t prefix = std::strlen(kOutputEntryPrefix);
    std::size_t n = 0, at = cap;
    for (; envp[n] != nullptr; ++n)
        if (at == cap && std::strncmp(envp[n], kOutputEntryPrefix, prefix) == 0 &&
            std::strcmp(envp[n] + prefix, given) == 0)
            at = n;
    if (at == cap || n + 1 > cap) return nullptr;
    for (std::size_t i = 0; i < n; ++i) storage[i] = i == at ? absolute_entry : envp[i];
    storage[n] = nullptr;
    return storage;
}

}  // namespace stacksage::preload
