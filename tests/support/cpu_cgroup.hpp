// A cgroup of its own with a CPU quota, for the live runs under a quota
// (tests/system/test_live_quota.cpp, test_live_warnings.cpp): cgroup v1's cpu
// controller or v2's cpu.max, whichever the machine has; root is needed.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace stacksage::testing {

namespace cgroup_detail {

namespace fs = std::filesystem;

inline std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline bool write_text(const fs::path& p, const std::string& text) {
    std::ofstream out(p);
    out << text;
    out.flush();
    return static_cast<bool>(out);
}

// Whether a cgroup v2 controller list ("cpuset cpu io\n") names `controller`.
inline bool lists(const std::string& controllers, const std::string& controller) {
    std::istringstream words(controllers);
    std::string word;
    while (words >> word)
        if (word == controller) return true;
    return false;
}

}  // namespace cgroup_detail

// A cgroup of its own with a CPU quota (quota_us < 0: none), removed when
// the object goes. ok() false with reason() where it cannot be made.
class CpuCgroup {
public:
    CpuCgroup(long quota_us, long period_us) {
        static int counter = 0;
        const std::string name = "stacksage-test-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
        if (geteuid() != 0) {
            reason_ = "creating cgroups needs root";
            return;
        }
        for (const char* v1 : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"}) {
            if (!std::filesystem::exists(std::filesystem::path(v1) / "cpu.cfs_quota_us")) continue;
            dir_ = std::filesystem::path(v1) / name;
            std::error_code ec;
            if (!std::filesystem::create_directory(dir_, ec)) {
                reason_ = "cannot create " + dir_.string() + ": " + ec.message();
                dir_.clear();
                return;
            }
            if (!cgroup_detail::write_text(dir_ / "cpu.cfs_period_us", std::to_string(period_us)) ||
                !cgroup_detail::write_text(dir_ / "cpu.cfs_quota_us", std::to_string(quota_us < 0 ? -1 : quota_us)))
                reason_ = "cannot set the quota of " + dir_.string();
            return;
        }
        const std::filesystem::path v2 = "/sys/fs/cgroup";
        if (!cgroup_detail::lists(cgroup_detail::read_text(v2 / "cgroup.controllers"), "cpu")) {
            reason_ = "no cgroup v1 cpu controller and no cgroup v2 cpu controller under /sys/fs/cgroup";
            return;
        }
        // Turning the controller on for the whole machine is not a test's to do.
        if (!cgroup_detail::lists(cgroup_detail::read_text(v2 / "cgroup.subtree_control"), "cpu")) {
            reason_ = "the cgroup v2 cpu controller is not enabled in /sys/fs/cgroup/cgroup.subtree_control";
            return;
        }
        dir_ = v2 / name;
        std::error_code ec;
        if (!std::filesystem::create_directory(dir_, ec)) {
            reason_ = "cannot create " + dir_.string() + ": " + ec.message();
            dir_.clear();
            return;
        }
        const std::string max =
            (quota_us < 0 ? std::string("max") : std::to_string(quota_us)) + " " + std::to_string(period_us);
        if (!cgroup_detail::write_text(dir_ / "cpu.max", max)) reason_ = "cannot write cpu.max of " + dir_.string();
    }
    ~CpuCgroup() {
        if (dir_.empty()) return;
        // Its processes have exited by now; the kernel may take a moment to let go.
        for (int i = 0; i < 50 && ::rmdir(dir_.c_str()) != 0 && errno == EBUSY; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    CpuCgroup(const CpuCgroup&) = delete;
    CpuCgroup& operator=(const CpuCgroup&) = delete;

    bool ok() const { return !dir_.empty() && reason_.empty(); }
    const std::string& reason() const { return reason_; }
    std::string procs() const { return (dir_ / "cgroup.procs").string(); }
    std::string name() const { return "/" + dir_.filename().string(); }

private:
    std::filesystem::path dir_;
    std::string reason_;
};


}  // namespace stacksage::testing
