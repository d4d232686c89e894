// The file a descriptor the recorder keeps was opened on.
//
// The application may close any descriptor (a daemon closes them all) and get
// the number again for a file of its own. Before each use the recorder checks
// that the number still holds its file (fstat: device and inode); when it
// does not, the number is the application's and is left alone: never read,
// written, polled or closed. Async-signal-safe (raw fstat).
#pragma once

#include <sys/stat.h>

#include <cstdint>

#include "preload/raw_syscall.hpp"

namespace stacksage::preload {

class FileIdentity {
public:
    // The identity of what fd holds now (none when fd is not open).
    static FileIdentity of(int fd) {
        FileIdentity id;
        struct stat st{};
        if (fd >= 0 && raw::fstat(fd, &st) == 0) {
            id.dev_ = st.st_dev;
            id.ino_ = st.st_ino;
            id.known_ = true;
        }
        return id;
    }
    // Whether fd still holds that very file.
    bool held_by(int fd) const {
        struct stat st{};
        return known_ && fd >= 0 && raw::fstat(fd, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
    }

private:
    std::uint64_t dev_ = 0;
    std::uint64_t ino_ = 0;
    bool known_ = false;
};

}  // namespace stacksage::preload
