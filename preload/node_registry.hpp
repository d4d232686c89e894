// The node's registry of the job's processes, for the live watcher
// (preload/live_watcher.hpp): one small file per node, OUT/<host>/live.node,
// that every traced application process of the node maps (MAP_SHARED) and
// enters itself in, and whose lock (flock) elects the one process that
// watches the node.
//
// Layout: a header (a magic number, the per-node "already warned" bits) and
// a fixed table of slots, one per process: its pid, its rank and
// OMP_NUM_THREADS. Every field is an atomic in the shared mapping: a process
// enters or updates itself with a compare-and-swap, no system call, no lock,
// so a forked child (which inherits the mapping) registers for the price of
// a few atomic operations. Nobody removes its own slot: the watcher frees the
// slots of processes that are gone (their /proc entry is missing, or its
// start time differs: the pid was reused). A node with more live processes
// than slots leaves the extra ones unwatched.
//
// The lock is flock(2) on the registry's descriptor, taken without waiting:
// the holder is the node's watcher. The kernel releases it when the holder
// ends (whatever way), and the next process to try takes over. A forked
// child closes its inherited descriptor: its parent keeps the lock.
//
// The file is created O_NOFOLLOW (a planted symlink is never followed), must
// be a regular file of ours, and must carry our magic number once mapped:
// anything else and live warnings are off in this process (the recording
// goes on).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace stacksage::preload {

// The registry's name in the host folder.
inline constexpr char kNodeRegistryName[] = "live.node";

// The conditions a node is warned about, once each (the "warned" bits).
enum class LiveCondition : int { Oversubscribed = 0, IdleCores = 1, CpuThrottled = 2 };
inline constexpr int kLiveConditions = 3;

struct RegistrySlot {
    std::atomic<int> pid;               // 0: free
    std::atomic<int> rank;              // -1: none
    std::atomic<int> omp_threads;       // OMP_NUM_THREADS (its first number); 0: not set
    std::atomic<int> unused;
    std::atomic<std::uint64_t> start_ticks;  // its /proc start time, set by the watcher; 0: not read yet
};

struct RegistryHeader {
    std::atomic<std::uint32_t> magic;
    std::atomic<std::uint32_t> warned;  // bit (1 << LiveCondition): this node was warned
};

class NodeRegistry {
public:
    static constexpr std::uint32_t kMagic = 0x4c495631;  // "LIV1"
    static constexpr std::size_t kSlots = 2048;
    static constexpr std::size_t kBytes = 64 + kSlots * sizeof(RegistrySlot);

    // Opens (creating it if need be) and maps the registry in the host folder
    // that host_dir_fd names. False, with nothing held, when it cannot.
    bool open(int host_dir_fd);
    bool is_open() const { return header_ != nullptr; }

    // Enters (or updates) the calling process. False when every slot is taken.
    bool enter(int pid, int rank, int omp_threads);

    // Takes the node's watcher lock without waiting. True when this process
    // holds it (now or already).
    bool try_lock();
    bool locked() const { return locked_; }

    // In a forked child: the inherited descriptor is closed (the parent keeps
    // the lock; the mapping stays), and the child enters itself.
    void after_fork_in_child(int pid, int rank, int omp_threads);

    // Marks the node as warned about c. True for the one caller that marked
    // it first (it writes the line), false for every later one on the node.
    bool mark_warned(LiveCondition c);
    bool warned(LiveCondition c) const;

    RegistrySlot& slot(std::size_t i) { return slots_[i]; }

private:
    RegistryHeader* header_ = nullptr;
    RegistrySlot* slots_ = nullptr;
    // Our descriptor of the registry, and the file's identity: the
    // application may have closed it (a daemon closes every descriptor) and
    // got the number for a file of its own, which is never locked or closed.
    bool own_file(int fd) const;
    int fd_ = -1;
    std::uint64_t dev_ = 0, ino_ = 0;
    bool locked_ = false;
};

NodeRegistry& node_registry();

// OMP_NUM_THREADS's first number ("4,2" -> 4); 0 when unset or not a number.
int omp_num_threads_from(const char* value);

}  // namespace stacksage::preload
