// Where /proc/self/cgroup places the process, read without allocating (the
// recorder calls it at start, at exit and on a fatal signal's path). Lines
// are "N:controllers:/path": N 0 with no controllers is the v2 hierarchy,
// the others are v1 hierarchies, one per set of controllers.
#pragma once

namespace stacksage::preload {

struct CgroupPlacement {
    const char* v2_path = nullptr;         // the "0::/path" line's path; nullptr without one
    const char* v1_controllers = nullptr;  // the v1 hierarchy that holds the controller asked for: its list ("cpu,cpuacct")
    const char* v1_path = nullptr;         // and the process's path in it; nullptr without one
};

// Parses the text of /proc/self/cgroup in place: lines and fields are cut
// with NUL bytes, and the placement points into `text`. `controller` is the
// v1 controller whose hierarchy is wanted ("cpu", "cpuset"); the last line
// naming it wins.
CgroupPlacement parse_proc_cgroup(char* text, const char* controller);

// Whether a comma-separated controller list ("cpu,cpuacct") names
// `controller` exactly ("cpu" is not "cpuset", nor "cpuacct").
bool names_controller(const char* controllers, const char* controller);

}  // namespace stacksage::preload
