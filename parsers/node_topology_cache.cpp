#include "parsers/node_topology_cache.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "core/snapshot.hpp"
#include "parsers/hwloc_loader.hpp"

namespace stacksage {

std::string current_boot_id() {
    // Plain read(2): this runs in every traced process at start.
    int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    char buf[64] = {};
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    std::string id(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    return id;
}

namespace {

std::string this_host() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return {};
    return name;
}

// "" when the snapshot at path is usable for this boot and host, else why not.
std::string unusable_reason(const Result<Model>& snapshot, const std::string& boot_id, const std::string& host) {
    if (!snapshot) return snapshot.error().message;
    const Model& m = *snapshot;
    auto roots = m.roots();
    if (roots.empty()) return "the snapshot holds no topology";
    auto key = m.find_key(kBootIdKey);
    auto stored_boot = key ? m.get_string(roots.front(), *key) : std::nullopt;
    if (!boot_id.empty() && (!stored_boot || *stored_boot != boot_id)) return "the snapshot is from another boot";
    auto nodes = m.components_of_type(ComponentType::Node);
    if (!host.empty() && !nodes.empty()) {
        auto stored_host = m.get_string(nodes.front(), keys::hostname);
        if (stored_host && *stored_host != host) return "the snapshot is of another host (" + std::string(*stored_host) + ")";
    }
    return {};
}

// Holds an exclusive flock for its lifetime; inactive when the lock file
// cannot be created (read-only directory), is not a regular file, or stays
// locked by another process for kSnapshotLockWait: then nothing will be
// published. Never blocks: this runs inside traced applications at exit,
// and whoever holds the lock (a stuck or stopped process) must not hold
// them too. The file is opened non-blocking and without following a link
// (a FIFO or a link planted at the name is neither opened nor waited for).
class ExclusiveLock {
public:
    explicit ExclusiveLock(const std::string& path) {
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
        if (fd_ < 0) {
            error_ = "cannot open " + path + ": " + std::strerror(errno);
            return;
        }
        struct stat st {};
        if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
            error_ = path + " is not a regular file";
            release();
            return;
        }
        // Tried again and again, the pause doubling from 1 ms to 50 ms: the
        // usual holder (a process of the same node discovering the topology)
        // is done within milliseconds.
        const auto deadline = std::chrono::steady_clock::now() + kSnapshotLockWait;
        auto pause = std::chrono::milliseconds(1);
        for (;;) {
            if (flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
            if (errno == EINTR) continue;
            if (errno != EWOULDBLOCK) {
                error_ = "cannot lock " + path + ": " + std::strerror(errno);
                break;
            }
            const auto now = std::chrono::steady_clock::now();
            if (now >= deadline) {
                error_ = fmt::format("{} is held by another process (waited {} ms)", path, kSnapshotLockWait.count());
                break;
            }
            std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
            pause = std::min(pause * 2, std::chrono::milliseconds(50));
        }
        release();
    }
    ~ExclusiveLock() { release(); }  // closing releases the lock
    ExclusiveLock(const ExclusiveLock&) = delete;
    ExclusiveLock& operator=(const ExclusiveLock&) = delete;
    bool held() const { return fd_ >= 0; }
    const std::string& error() const { return error_; }

private:
    void release() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    int fd_ = -1;
    std::string error_;
};

}  // namespace

Result<NodeTopology> load_or_publish_node_topology(const std::string& path,
                                                   const std::function<Result<Model>()>& discover) {
    const std::string boot_id = current_boot_id();
    const std::string host = this_host();

    // Fast path: no lock, just map.
    auto first = open_snapshot(path);
    std::string reason = unusable_reason(first, boot_id, host);
    if (reason.empty()) return NodeTopology{std::move(first).value(), false, {}};

    ExclusiveLock lock(path + ".lock");
    if (lock.held()) {
        // Another process may have published while we waited for the lock.
        auto again = open_snapshot(path);
        if (unusable_reason(again, boot_id, host).empty()) return NodeTopology{std::move(again).value(), false, {}};
    }

    auto discovered = discover ? discover() : discover_this_machine();
    if (!discovered) return discovered.error();
    Model model = std::move(discovered).value();
    auto roots = model.roots();
    if (!roots.empty() && !boot_id.empty()) model.set_attr(roots.front(), model.key(kBootIdKey), std::string_view(boot_id));

    NodeTopology out{std::move(model), true, {}};
    // A missing snapshot is the normal first start: only other reasons are news.
    if (first || access(path.c_str(), F_OK) == 0) out.note = "rediscovered: " + reason;
    if (!lock.held()) {
        out.note += (out.note.empty() ? "" : "; ") + ("not published: " + lock.error());
        return out;
    }
    if (auto written = write_snapshot(out.model, path); !written)
        out.note += (out.note.empty() ? "" : "; ") + ("not published: " + written.error().message);
    return out;
}

}  // namespace stacksage
