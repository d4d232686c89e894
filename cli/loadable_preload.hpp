// A path to the recorder that ld.so can take from LD_PRELOAD.
//
// ld.so splits LD_PRELOAD on spaces and colons (glibc's rtld: strsep " :"),
// so a recorder installed under "/opt/my tools" or "/opt/a:b" was never
// loaded: every traced process printed three ld.so errors and recorded
// nothing. Such a path is replaced by symlinks in a private directory
// (mkdtemp under $TMPDIR, /tmp or /dev/shm, the first whose own path is free
// of both characters): one to the recorder and one to libstacksage-model.so,
// which the recorder looks for next to the name it was loaded under.
//
// Not chosen: the bare soname plus LD_LIBRARY_PATH. LD_LIBRARY_PATH is split
// on colons too, and it would change which libraries the traced application
// itself loads. Not a copy either: a symlink costs nothing and stays the
// installed file.
//
// The directory lives as long as `stacksage run` (removed when the command
// has ended). Other hosts do not have it: `stacksage run -- mpirun ...` then
// does not forward LD_PRELOAD to them and says so before the job
// (launcher_forwarding.hpp); `mpirun ... stacksage run -- ./app` makes one
// per rank and records them.
#pragma once

#include <string>
#include <string_view>

#include "core/result.hpp"

namespace stacksage::cli {

// True when ld.so would cut `path` into several LD_PRELOAD entries.
bool splits_in_ld_preload(std::string_view path);

class LoadablePreload {
public:
    // `library` itself when ld.so can load it from LD_PRELOAD, else a
    // symlink to it in a new private directory; an error (one message for
    // the user) when no such directory can be made.
    static Result<LoadablePreload> for_library(const std::string& library);

    LoadablePreload(LoadablePreload&& other) noexcept;
    LoadablePreload& operator=(LoadablePreload&& other) noexcept;
    LoadablePreload(const LoadablePreload&) = delete;
    LoadablePreload& operator=(const LoadablePreload&) = delete;
    ~LoadablePreload();  // removes the private directory, if one was made

    // What to put in LD_PRELOAD.
    const std::string& path() const { return path_; }
    // The private directory, or "" when the library's own path is used.
    const std::string& alias_directory() const { return alias_directory_; }

private:
    LoadablePreload(std::string path, std::string alias_directory)
        : path_(std::move(path)), alias_directory_(std::move(alias_directory)) {}
    std::string path_;
    std::string alias_directory_;
};

}  // namespace stacksage::cli
