// What reading the cgroups' CPU quota and throttling counters costs the
// recorder (preload/cgroup_cpu_quota.hpp): it does so once at each process's
// start and once at its end. Prints the median and mean of N reads, and
// what was found, in the cgroup the benchmark runs in.
//
// Usage: bench_preload_cgroup_quota_read [N]   (default 2000)
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "preload/cgroup_cpu_quota.hpp"

namespace {
double now_us() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}
}  // namespace

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::max(1, std::atoi(argv[1])) : 2000;
    std::vector<double> us;
    us.reserve(static_cast<std::size_t>(n));
    stacksage::preload::CgroupCpuQuota q;
    bool found = false;
    for (int i = 0; i < n; ++i) {
        const double start = now_us();
        found = stacksage::preload::read_cgroup_cpu_quota(q);
        us.push_back(now_us() - start);
    }
    auto print = [&](const char* what) {
        std::sort(us.begin(), us.end());
        double sum = 0;
        for (double v : us) sum += v;
        std::printf("%s: median %.1f us, mean %.1f us, p90 %.1f us over %d reads; ", what, us[us.size() / 2],
                    sum / static_cast<double>(n), us[us.size() * 9 / 10], n);
    };
    print("walk (process start)");
    if (found) {
        // The end re-reads the cgroup the start found.
        us.clear();
        for (int i = 0; i < n; ++i) {
            stacksage::preload::CgroupCpuQuota again = q;
            const double start = now_us();
            stacksage::preload::reread_cgroup_cpu_quota(again);
            us.push_back(now_us() - start);
        }
        print("re-read (process end)");
    }
    if (found)
        std::printf("quota %lld/%lld us (cgroup %s, v%d), throttled %lld of %lld periods\n",
                    static_cast<long long>(q.quota_us), static_cast<long long>(q.period_us), q.cgroup, q.version,
                    static_cast<long long>(q.throttled), static_cast<long long>(q.periods));
    else std::printf("no quota\n");
    return 0;
}
