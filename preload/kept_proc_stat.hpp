// The process's /proc/self/stat, kept open at a high number for the
// recorder's threads that read it again and again (the drain thread's "only
// the recorder's threads left?" check, every 200 ms).
//
// Opening it each time took the lowest free descriptor for a moment: right
// after an application's closefrom(3), its next open() then got 4 instead of
// 3 (a different number than without the recorder). So it is opened while
// no application code runs beside the opener (the recorder's start, before
// main; a sampled forked child's first new thread, in the recorder's
// pthread_create), moved high, and read with pread at offset 0 after an
// identity check: a number that changed hands after the check is at worst
// read at offset 0 (pread moves no offset and writes nothing). Where it is
// not ours any more (the application closed it) or is the parent's (an
// unsampled forked child), a read opens the file for that read, as before.
#pragma once

#include <cstddef>

namespace stacksage::preload {

// Opens it (again: a forked child's copy reads the parent's) and keeps it.
void keep_process_stat_open();

// The file's text, NUL-terminated; its length, or -errno.
long read_process_stat(char* buf, std::size_t cap);

}  // namespace stacksage::preload
