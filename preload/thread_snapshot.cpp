#include "preload/thread_snapshot.hpp"

#include <fcntl.h>

#include "core/formats/event_schema.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/recorder_threads.hpp"
#include "preload/task_list.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

void add_thread_snapshot(JsonLine& line) {
    // A recorder thread still starting has no tid in the registry yet.
    wait_for_starting_recorder_threads();
    namespace snapshot = event_schema::mpi_snapshot;
    line.key(snapshot::threads);
    line.open_array();
    for_each_task("/proc/self/task", [&](int tid) {
        if (is_recorder_thread(tid)) return;  // the recorder's own (the drain thread): not the application's
        char name[64];
        const long len = read_task_name(tid, name);
        // A recorder thread named by its creator that has not run yet to register (the live watcher's).
        if (len > 0 && has_recorder_thread_name(name, static_cast<std::size_t>(len))) return;
        line.open_object();
        line.field(snapshot::thread::tid, static_cast<std::int64_t>(tid));
        if (len > 0) line.field(snapshot::thread::name, name);
        CpuMask mask;
        mask.read_thread(tid);
        line.field_mask(snapshot::thread::cpuset, mask);
        line.close_object();
    });
    line.close_array();
}

}  // namespace stacksage::preload
