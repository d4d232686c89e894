// What a run directory holds, counted without loading it: the processes
// its event logs are of, for `stacksage run`'s closing line.
//
// A log is one process *image*: a process that exec's leaves one log for
// what it was before (mpirun's fork on its way to becoming a rank, a shell
// that execs the program) and one for what it became; both carry its pid.
// So logs are grouped per host and pid, as the run loader groups them
// (run_loader.hpp), and each group is one process: the image that started
// last says what it became (a launcher, a rank, another process); the
// others are pre-exec images, not processes of their own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "parsers/run_directory.hpp"  // the log names: parse_log_file_name, is_event_log_name

namespace stacksage {

struct RunCensus {
    std::size_t hosts = 0;              // host directories with event logs
    std::size_t logs = 0;               // event logs: streams of node files, files of the earlier layout
    std::size_t processes = 0;          // application processes (not launchers)
    std::vector<std::int64_t> ranks;    // of those, their ranks (sorted; one per ranked process)
    std::size_t launchers = 0;          // mpirun, prted, srun, ...
    std::size_t pre_exec_images = 0;    // logs of processes before they exec'ed
    std::vector<std::string> pre_exec_names;  // what those were (executables' base names, distinct, sorted)
    std::size_t unreadable = 0;         // logs whose first line is no process_start (counted as processes)
};

// \return the census of the run in out_dir (reading each log's first line).
// \return an Error when out_dir cannot be read.
Result<RunCensus> take_run_census(const std::string& out_dir);

}  // namespace stacksage
