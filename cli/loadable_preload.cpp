#include "cli/loadable_preload.hpp"

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "cli/preload_location.hpp"

namespace stacksage::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kModelLibraryName = "libstacksage-model.so";

// Where the private directory may go, in order of preference.
std::vector<std::string> alias_parents() {
    std::vector<std::string> parents;
    if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir != nullptr && *tmpdir != '\0')
        parents.emplace_back(tmpdir);
    parents.emplace_back("/tmp");
    parents.emplace_back("/dev/shm");
    return parents;
}

}  // namespace

bool splits_in_ld_preload(std::string_view path) {
    return path.find_first_of(" :") != std::string_view::npos;
}

Result<LoadablePreload> LoadablePreload::for_library(const std::string& library) {
    if (!splits_in_ld_preload(library)) return LoadablePreload(library, "");
    const fs::path target(library);
    const fs::path model = target.parent_path() / kModelLibraryName;
    std::string tried;
    for (const std::string& parent : alias_parents()) {
        if (splits_in_ld_preload(parent)) continue;
        std::string pattern = (fs::path(parent) / "stacksage-preload-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            tried += " " + parent;
            continue;
        }
        const fs::path directory(pattern);
        std::error_code ec;
        fs::create_symlink(target, directory / kPreloadLibraryName, ec);
        // The recorder runs without its model writer when that is missing
        // (as it does from the library's own directory): only link what exists.
        if (!ec && fs::exists(model)) fs::create_symlink(model, directory / kModelLibraryName, ec);
        if (ec) {
            fs::remove_all(directory, ec);
            tried += " " + parent;
            continue;
        }
        return LoadablePreload((directory / kPreloadLibraryName).string(), directory.string());
    }
    return make_error("the recorder's path (" + library +
                      ") holds a space or a colon, which LD_PRELOAD cannot carry, and no directory "
                      "for a link to it could be made in" + tried +
                      "; set TMPDIR to a writable directory without spaces or colons, or install "
                      "stacksage under such a path.");
}

LoadablePreload::LoadablePreload(LoadablePreload&& other) noexcept
    : path_(std::move(other.path_)), alias_directory_(std::move(other.alias_directory_)) {
    other.alias_directory_.clear();
}

LoadablePreload& LoadablePreload::operator=(LoadablePreload&& other) noexcept {
    if (this != &other) {
        LoadablePreload old(std::move(*this));
        path_ = std::move(other.path_);
        alias_directory_ = std::move(other.alias_directory_);
        other.alias_directory_.clear();
    }
    return *this;
}

LoadablePreload::~LoadablePreload() {
    if (alias_directory_.empty()) return;
    std::error_code ec;
    fs::remove_all(alias_directory_, ec);  // removes the links, never what they point to
}

}  // namespace stacksage::cli
