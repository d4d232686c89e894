#include "cli/preload_location.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace stacksage::cli {

namespace fs = std::filesystem;

std::vector<std::string> preload_candidates(const std::string& executable_dir) {
    if (const char* explicit_path = std::getenv("STACKSAGE_PRELOAD");
        explicit_path != nullptr && *explicit_path != '\0')
        return {explicit_path};
    const fs::path dir(executable_dir);
    return {
        (dir / kPreloadLibraryName).string(),
        (dir / ".." / "preload" / kPreloadLibraryName).string(),
        (dir / STACKSAGE_PRELOAD_RELATIVE_TO_BINDIR / kPreloadLibraryName).string(),
        (dir / ".." / "lib" / "stacksage" / kPreloadLibraryName).string(),
        (dir / ".." / "lib" / kPreloadLibraryName).string(),
        (dir / ".." / "lib64" / kPreloadLibraryName).string(),
    };
}

Result<std::string> find_preload_library() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    const std::string dir = ec ? std::string(".") : self.parent_path().string();
    std::vector<std::string> candidates = preload_candidates(dir);
    std::string looked;
    for (const std::string& c : candidates) {
        if (::access(c.c_str(), R_OK) == 0) {
            fs::path canonical = fs::weakly_canonical(c, ec);
            return ec ? fs::absolute(c).string() : canonical.string();
        }
        looked += "\n  " + c;
    }
    return make_error(std::string("cannot find ") + kPreloadLibraryName + "; looked for:" +
                      looked + "\nSet STACKSAGE_PRELOAD to the library's path.");
}

}  // namespace stacksage::cli
