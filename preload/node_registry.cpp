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
    long fd = raw::openat(host_dir_fd, kNodeRegistryName, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    struct stat st{};
    const bool ours = raw::fstat(static_cast<int>(fd), &st) == 0 && S_ISREG(st.st_mode) &&
                      st.st_uid == static_cast<uid_t>(raw::syscall6(SYS_geteuid));
    // Every process sizes it: the first one grows it, the others find it so.
    // A larger file is another's (or a later version's): left alone.
    bool sized = ours && static_cast<std::size_t>(st.st_size) == kBytes;
    if (ours && st.st_size == 0) sized = raw::ftruncate(static_cast<int>(fd), kBytes) == 0;
    if (ours && !sized && static_cast<std::size_t>(st.st_size) < kBytes) {
        // Another process is sizing it right now: its ftruncate gives the same size.
        sized = raw::ftruncate(static_cast<int>(fd), kBytes) == 0;
    }
    if (!sized) {
        raw::close(static_cast<int>(fd));
        return false;
    }
    long map = raw::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
    if (map < 0 && map > -4096) {
        raw::close(static_cast<int>(fd));
        return false;
    }
    auto* header = reinterpret_cast<RegistryHeader*>(map);
    std::uint32_t expected = 0;
    if (!header->magic.compare_exchange_strong(expected, kMagic, std::memory_order_acq_rel) && expected != kMagic) {
        raw::munmap(reinterpret_cast<void*>(map), kBytes);  // not a registry of ours
        raw::close(static_cast<int>(fd));
        return false;
    }
    fd_ = move_to_high_fd(static_cast<int>(fd));
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

bool NodeRegistry::try_lock() {
    if (locked_) return true;
    if (fd_ < 0) return false;
    locked_ = raw::syscall6(SYS_flock, fd_, LOCK_EX | LOCK_NB) == 0;
    return locked_;
}

void NodeRegistry::after_fork_in_child(int pid, int rank, int omp_threads) {
    if (header_ == nullptr) return;
    // Closing the inherited copy does not release the parent's lock (flock
    // locks belong to the open file description, which the parent still holds).
    if (fd_ >= 0) raw::close(fd_);
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
