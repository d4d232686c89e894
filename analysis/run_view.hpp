// RunView: the merged model of a run (core/run_model_schema.hpp), read once
// into the arrays every check walks: nodes with their cores, processes, and
// flows with their placement and activity.
//
// Reading the model once keeps the checks simple and linear: each check is a
// function of this view (and so of the model it was built from).
//
// A flow keeps every mask it held (FlowView::intervals, each with what set
// it): the load of a node is judged at every moment with the mask each flow
// held then (node_load.hpp). Its placement, for the summaries, is the mask it
// held for the longest time: runtimes often start threads with the process's
// mask and bind them a moment later, and a mask held for microseconds says
// nothing about where the flow computed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/runtime_classifier.hpp"
#include "core/cpuset.hpp"
#include "core/model.hpp"
#include "core/run_model_schema.hpp"
#include "core/saturating.hpp"

namespace stacksage {

// A stretch of a flow's life with one mask, and what set that mask: the
// event (thread_start, an affinity call, an MPI snapshot that found it
// changed), and for an affinity call the thread that made it (a thread may
// bind another), the call and the module it was made from.
struct AffinityInterval {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    Cpuset cpuset;
    std::string_view set_by;         // "thread_start", "affinity", "mpi_init", ...; "" when unknown
    std::string_view api;            // affinity calls: "pthread_setaffinity_np", "sched_setaffinity", "syscall"
    std::int64_t caller_tid = -1;    // affinity calls: the calling thread; -1: unknown
    std::string_view caller_module;  // affinity calls: path of the calling module; "" when unknown

    bool set_by_affinity_call() const { return set_by == "affinity"; }
    std::int64_t length_ns() const { return end_ns <= start_ns ? 0 : subtract_saturating(end_ns, start_ns); }
};

// A stretch of a flow's life: a wait the recorder saw (pthread_join), or an
// interval in which the flow asked for a CPU (activity.hpp).
struct TimeSpan {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t cpu_ns = -1;  // waits: the flow's CPU time when the wait began; -1: unknown

    std::int64_t length_ns() const { return end_ns <= start_ns ? 0 : subtract_saturating(end_ns, start_ns); }
};

// A point of a flow's CPU-time curve: by time t it had used cpu_ns.
struct CpuReading {
    std::int64_t t = 0;
    std::int64_t cpu_ns = -1;  // -1: unknown
};

struct FlowView {
    ComponentId id = kNoComponent;
    std::uint32_t process = 0;     // index into RunView::processes
    std::int64_t tid = 0;
    FlowKind kind = FlowKind::Thread;  // to_string() gives the model's word; a word no loader writes reads as Thread
    // In the kernel's task list at the process's end, never seen created
    // (glibc's own threads, raw clones).
    bool untraced = false;
    std::string_view name;         // thread name; may be empty
    std::string_view creator_module;
    std::uint32_t runtime = 0;     // index into RunView::runtimes
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t cpu_time_us = -1; // -1: unknown
    std::int64_t voluntary_switches = -1;    // times it blocked; -1: unknown
    std::int64_t involuntary_switches = -1;  // times it was preempted while it could run; -1: unknown
    std::int64_t run_delay_ns = -1;          // time it could run but waited for a CPU; -1 (or below): unknown
    std::int64_t run_slices = -1;            // times it was put on a CPU; -1: unknown
    std::vector<AffinityInterval> intervals;  // in time order, not overlapping
    Cpuset placement;              // the mask held longest (see above); empty when never known
    Cpuset ran_on;                 // CPUs it was seen running on
    std::vector<TimeSpan> waits;   // recorded waits (pthread_join), in time order, inside its life
    std::vector<CpuReading> cpu_readings;  // its CPU time read as it created threads, in time order, inside its life
    std::vector<TimeSpan> busy;    // when it asked for a CPU (activity.hpp); empty for service flows
    bool service = false;          // nearly idle for its lifetime (activity.hpp)
    bool starved = false;          // little CPU time, but it was waiting for a CPU, not idle (activity.hpp)
    double cpu_fraction = -1;      // CPU time / (lifetime - recorded waits); -1 when unknown

    // end - start (0 when the end is not after the start), held at INT64_MAX:
    // a model read from a file may hold any times.
    std::int64_t lifetime_ns() const { return end_ns <= start_ns ? 0 : subtract_saturating(end_ns, start_ns); }
    // The lifetime less the recorded waits: the time it could have computed.
    std::int64_t awake_ns() const;
};

// The CPU quota of a process's cgroups and the throttling counters of the
// cgroup holding it, at the process's start and end (docs/event-log.md).
// The counters are the cgroup's: processes of one cgroup share them.
struct CpuQuotaView {
    std::int64_t quota_us = -1;   // -1: no quota recorded
    std::int64_t period_us = -1;
    std::string_view cgroup;      // the cgroup holding it; "" when not recorded
    std::int64_t periods_start = -1, throttled_start = -1, throttled_ns_start = -1;  // -1: not recorded
    std::int64_t periods_end = -1, throttled_end = -1, throttled_ns_end = -1;

    bool present() const { return quota_us > 0 && period_us > 0; }
    // quota / period: the CPUs' worth of time the cgroup may use at once (0.5); 0 without a quota.
    double cpus() const {
        return present() ? static_cast<double>(quota_us) / static_cast<double>(period_us) : 0.0;
    }
};

struct ProcessView {
    ComponentId id = kNoComponent;
    std::uint32_t node = 0;        // index into RunView::nodes
    std::int64_t pid = 0;
    std::int64_t ppid = -1;
    std::int64_t rank = -1;        // -1: none
    // A launcher (mpirun, prted, srun, ...), or the remote shell (ssh, rsh) a
    // launcher started to reach other hosts: part of the launch, not the job.
    bool launcher = false;
    std::string_view launcher_name;
    std::string_view exe;
    std::string_view cmdline;      // arguments joined by spaces
    std::string_view name;         // executable's base name
    std::string_view end_how;
    // Why its log ends before its end was recorded: "killed", "log-stopped",
    // "unknown"; "" when the log is complete (core/run_model_schema.hpp).
    std::string_view log_ends_early;
    std::string_view log_stop_error;  // for "log-stopped": "No space left on device", ...
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    bool mpi = false;              // called MPI_Init
    std::int64_t mpi_size = -1;    // MPI_COMM_WORLD's size at MPI_Init; -1: unknown
    std::vector<std::uint32_t> flows;  // indices into RunView::flows, main thread first
    Cpuset placement;              // union of its active flows' placements
    std::optional<Cpuset> program_start_cpuset;  // the main thread's mask as the program started
    std::int64_t program_start_ns = 0;  // when the program (the last exec'ed image) started; start_ns when unknown
    std::vector<std::pair<std::string_view, std::string_view>> env;  // binding variables
    std::vector<std::pair<std::string_view, std::string_view>> identity;
    CpuQuotaView cpu_quota;

    std::optional<std::string_view> env_value(std::string_view name) const;
    std::optional<std::string_view> identity_value(std::string_view name) const;
};

struct NodeView {
    ComponentId id = kNoComponent;
    std::string_view host;
    Cpuset available;              // PUs the job may use (the node's cpuset)
    Cpuset complete;               // every PU of the node (complete_cpuset)
    bool job_restricted = false;
    TopologySource topology_source = TopologySource::Hwloc;
    std::vector<Cpuset> cores;     // available PUs of each core with at least one
    std::vector<std::int32_t> core_of_cpu;  // cpu -> index into cores; -1 when not available
    bool smt = false;              // some core has more than one available PU
    std::vector<std::uint32_t> processes;  // application processes (not launchers)
    std::vector<std::uint32_t> launchers;
    // The CPUs the cgroups' quotas let the application processes use at
    // once (the sum over their distinct quota cgroups of quota / period),
    // where every application process has a quota and they come to fewer
    // than the available CPUs; 0 otherwise. The checks count it as the
    // node's capacity: 2 busy threads under a 0.5-CPU quota are 4 per CPU.
    double cpu_quota = 0;

    // The CPUs the node's processes can use at once: its available CPUs, or
    // the quota where that is fewer.
    double cpu_capacity() const {
        const auto cpus = static_cast<double>(available.count());
        return cpu_quota > 0 && cpu_quota < cpus ? cpu_quota : cpus;
    }

    // Indices of the cores that hold at least one PU of s.
    std::vector<std::uint32_t> cores_touching(const Cpuset& s) const;
    // The PUs of the cores that hold at least one PU of s.
    Cpuset widen_to_cores(const Cpuset& s) const;
    std::size_t cores_count(const Cpuset& s) const { return cores_touching(s).size(); }
};

struct RunView {
    const Model* model = nullptr;
    std::string_view run_name;
    std::string_view run_command;
    // run.json's "launch" (`stacksage run -- mpirun ...`): the ranks and the
    // hosts (comma-separated, the host file's included) asked for.
    std::int64_t launch_ranks = -1;
    std::string_view launch_hosts;
    std::vector<NodeView> nodes;
    std::vector<ProcessView> processes;
    std::vector<FlowView> flows;
    std::vector<RuntimeName> runtimes;  // distinct runtimes, by first appearance

    std::uint32_t runtime_id(const RuntimeName& r);
    const RuntimeName& runtime_of(const FlowView& f) const { return runtimes[f.runtime]; }
};

struct ActivityOptions;

// Builds the view of a run model: every Node under every Topology root,
// every Process root with its Flows. Processes whose host has no Node are
// kept, attached to a node made for them (no cores), so nothing is lost.
//
// The model is read on `threads` threads (0: one per core); the view is the
// same for any number.
//
// \return the view; never fails. It points into the model, which must
//         outlive it unchanged.
RunView build_run_view(const Model& model);
RunView build_run_view(const Model& model, const ActivityOptions& activity, unsigned threads = 0);

// "Cores [1-15]" on nodes without SMT; "CPUs [1-7,17-23] (7 cores)" on
// nodes with SMT, where CPU numbers and cores differ.
std::string describe_cpus(const NodeView& node, const Cpuset& cpus);

// A quota in CPUs as a reader says it: "0.5 CPU", "1 CPU", "2.25 CPUs".
std::string describe_cpu_quota(double cpus);

}  // namespace stacksage
