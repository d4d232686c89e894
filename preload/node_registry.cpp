#include "preload/node_registry.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "preload/event_log.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

namespace {

constinit NodeRegistry g_registry;

static_assert(sizeof(RegistryHeader) <= 64, "the header fits before the slots");
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free,
              "atomics shared between processes must be lock-free");

std::size_t home_slot(int pid) { return (static_cast<std::size_t>(pid) * 2654435761u) % NodeRegistry::kSlots; }

}  // namespace

NodeRegistry& node_registry() { return g_registry; }

bool NodeRegistry::open(int host_dir_fd) {
    if (header_ != nullptr) return true;
    if (host_dir_fd < 0) return false;
    // Non-blocking: a FIFO planted at the name is refused below, never waited on.
    constexpr int kFlags = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    bool creator = true;
    long fd = raw::openat(host_dir_fd, kNodeRegistryName, kFlags | O_CREAT | O_EXCL, 0600);
    if (fd == -EEXIST) {
        creator = false;
        fd = raw::openat(host_dir_fd, kNodeRegistryName, kFlags);
    }
    if (fd < 0) return false;
    const auto refuse = [&] {
        raw::close(static_cast<int>(fd));
        return false;
    };
    // The blocks are reserved, not left sparse: a store into a page of a
    // mapped file the disk has no room for would be a SIGBUS in the
    // application (a full tmpfs). The creator reserves them (fallocate, else
    // zeros written); the others wait a little for it, and go without.
    // A creator that finds no room removes the file again.
    if (creator) {
        if (raw::fallocate(static_cast<int>(fd), 0, 0, kBytes) != 0) {
            static const char zeros[4096] = {};
            for (std::size_t at = 0; at < kBytes; at += sizeof zeros) {
                const std::size_t n = kBytes - at < sizeof zeros ? kBytes - at : sizeof zeros;
                if (raw::pwrite(static_cast<int>(fd), zeros, n, at) != static_cast<long>(n)) {
                    // No room: the next process tries afresh (one failed call), none waits.
                    raw::unlinkat(host_dir_fd, kNodeRegistryName, 0);
                    return refuse();
                }
            }
        }
    }
    struct stat st{};
    for (int wait = 0;; ++wait) {
        if (raw::fstat(static_cast<int>(fd), &st) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != static_cast<uid_t>(raw::syscall6(SYS_geteuid)))
            return refuse();
        if (static_cast<std::size_t>(st.st_size) == kBytes) break;
        // Another size: still being made (wait up to 10 ms), or not ours.
        if (creator || wait == 10 || static_cast<std::size_t>(st.st_size) > kBytes) return refuse();
        struct timespec pause{0, 1'000'000};
        raw::syscall6(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
    }
    long map = raw::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
    if (map < 0 && map > -4096) return refuse();
    auto* header = reinterpret_cast<RegistryHeader*>(map);
    std::uint32_t expected = 0;
    if (!header->magic.compare_exchange_strong(expected, kMagic, std::memory_order_acq_rel) && expected != kMagic) {
        raw::munmap(reinterpret_cast<void*>(map), kBytes);  // not a registry of ours
        return refuse();
    }
    fd_ = move_to_high_fd(static_cast<int>(fd));
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    slots_ = reinterpret_cast<RegistrySlot*>(reinterpret_cast<char*>(map) + 64);
    header_ = header;
    return true;
}

bool NodeRegistry::enter(int pid, int rank, int omp_threads) {
    if (header_ == nullptr || pid <= 0) return false;
    const std::size_t home = home_slot(pid);
    for (std::size_t i = 0; i < kSlots; ++i) {
        RegistrySlot& s = slots_[(home + i) % kSlots];
        int current = s.pid.load(std::memory_order_acquire);
        if (current != pid) {
            if (current != 0) continue;
            if (!s.pid.compare_exchange_strong(current, pid, std::memory_order_acq_rel) && current != pid) continue;
            // A fresh entry: its start time is read by the watcher.
            s.start_ticks.store(0, std::memory_order_release);
        }
        // The same pid after exec keeps its slot, with the new image's figures.
        s.rank.store(rank, std::memory_order_release);
        s.omp_threads.store(omp_threads, std::memory_order_release);
        return true;
    }
    return false;
}

bool NodeRegistry::own_file(int fd) const {
    struct stat st{};
    return fd >= 0 && raw::fstat(fd, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

bool NodeRegistry::try_lock() {
    if (locked_) return true;
    if (!own_file(fd_)) return false;
    locked_ = raw::syscall6(SYS_flock, fd_, LOCK_EX | LOCK_NB) == 0;
    return locked_;
}

void NodeRegistry::after_fork_in_child(int pid, int rank, int omp_threads) {
    if (header_ == nullptr) return;
    // Closing the inherited copy does not release the parent's lock (flock
    // locks belong to the open file description, which the parent still holds).
    // Not when the number is the application's by now.
    if (own_file(fd_)) raw::close(fd_);
    fd_ = -1;
    locked_ = false;
    enter(pid, rank, omp_threads);
}

bool NodeRegistry::mark_warned(LiveCondition c) {
    if (header_ == nullptr) return true;  // no node to share with: this process decides alone
    const std::uint32_t bit = 1u << static_cast<int>(c);
    return (header_->warned.fetch_or(bit, std::memory_order_acq_rel) & bit) == 0;
}

bool NodeRegistry::warned(LiveCondition c) const {
    if (header_ == nullptr) return false;
    return (header_->warned.load(std::memory_order_acquire) & (1u << static_cast<int>(c))) != 0;
}

int omp_num_threads_from(const char* value) {
    if (value == nullptr) return 0;
    while (*value == ' ') ++value;
    std::uint64_t n = 0;
    const char* p = value;
    if (!read_decimal(p, 1'000'000, n)) return 0;
    return static_cast<int>(n);
}

}  // namespace stacksage::preload
