// The recorder's side of memory and placement sampling (preload/sampling/):
// started with the log when STACKSAGE_SAMPLE asks for it, per thread from
// the trampoline, finished at exit next to the event log
// (<log stem>.samples.jsonl, docs/sample-file.md).
#pragma once

namespace stacksage::preload {

// After the event log is open, on the initialising thread (which it then
// samples). Writes a "sampling" event saying what runs and why the rest
// does not. Does nothing when sampling is off.
void start_sampling();
// In a new thread, before the application's start routine; at its end.
void sampling_thread_begin();
void sampling_thread_end();
// At process end, before process_end: drains every thread, writes the
// summary, and records a "samples" event naming it.
void finish_sampling_at_exit();
// In the child of fork(), once it has its own log.
void restart_sampling_in_child();

}  // namespace stacksage::preload
