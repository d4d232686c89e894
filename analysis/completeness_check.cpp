#include "analysis/completeness_check.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "analysis/launch_command.hpp"
#include "core/formats/launcher_environment.hpp"
#include "core/hostlist.hpp"
#include "core/plural.hpp"

namespace stacksage {

bool same_host(std::string_view a, std::string_view b) {
    if (a == b) return true;
    const std::string_view sa = a.substr(0, a.find('.')), sb = b.substr(0, b.find('.'));
    return !sa.empty() && sa == sb;
}

namespace {

std::int64_t positive_number(std::optional<std::string_view> text) {
    if (!text) return -1;
    std::int64_t n = -1;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    return ec == std::errc() && end == text->data() + text->size() && n > 0 ? n : -1;
}

// A process srun started (its rank is SLURM_PROCID's): Slurm's step
// variables describe its job. mpirun's and Hydra's ranks inside an
// allocation inherit Slurm's variables from the daemons srun started, and
// those count the daemons, not the ranks.
bool started_by_srun(const ProcessView& p) {
    return p.identity_value("SLURM_PROCID") && p.identity_value("SLURM_STEP_ID") &&
           !p.identity_value("OMPI_COMM_WORLD_RANK") && !p.identity_value("MPI_LOCALRANKID");
}

// The job a rank belongs to, so that two jobs run one after the other into
// one directory are checked each on its own.
std::string job_key(const ProcessView& p) {
    for (const char* name : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "FLUX_JOB_ID"})
        if (auto v = p.identity_value(name)) return std::string(name) + "=" + std::string(*v);
    if (started_by_srun(p))
        return "slurm=" + std::string(p.identity_value("SLURM_JOB_ID").value_or("?")) + "." +
               std::string(p.identity_value("SLURM_STEP_ID").value_or("?"));
    return "";
}

struct SizeEvidence {
    std::int64_t ranks = -1;
    std::string source;  // "MPI_COMM_WORLD's size at MPI_Init", "OMPI_COMM_WORLD_SIZE", "mpirun -np", ...
};

// The job's size as one rank knew it, the most specific source first.
SizeEvidence size_known_to(const ProcessView& p) {
    if (p.mpi_size > 0) return {p.mpi_size, "MPI_COMM_WORLD's size at MPI_Init"};
    for (const char* name : formats::kJobSizeVariables)
        if (const std::int64_t n = positive_number(p.identity_value(name)); n > 0) return {n, name};
    if (started_by_srun(p))
        for (const char* name : formats::kSlurmTaskCountVariables)
            if (const std::int64_t n = positive_number(p.identity_value(name)); n > 0) return {n, name};
    return {};
}

struct Job {
    SizeEvidence size;
    std::set<std::int64_t> ranks;         // ranks whose program was recorded
    std::set<std::int64_t> lost_at_exec;  // recorded only until they exec'ed a program that left no log
    std::string lost_at_exec_name;        // what exec'ed it ("sh")
    std::vector<std::string> step_hosts;  // every one runs a task (SLURM_STEP_NODELIST, srun -w)
    std::string step_hosts_source;
};

void add_unique(std::vector<std::string>& hosts, const std::vector<std::string>& more) {
    for (const std::string& h : more)
        if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
}

// "0-3,7,9-10"; at most max_ranges ranges, then ", ...".
std::string compact_ranks(const std::vector<std::int64_t>& sorted, std::size_t max_ranges = 16) {
    std::string out;
    std::size_t ranges = 0;
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t j = i;
        while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
        if (ranges == max_ranges) return out + ",...";
        out += (out.empty() ? "" : ",") + std::to_string(sorted[i]);
        if (j > i) out += "-" + std::to_string(sorted[j]);
        ++ranges;
        i = j + 1;
    }
    return out;
}

std::string host_names(const std::vector<std::string>& hosts, std::size_t max = 8) {
    std::string out;
    for (std::size_t i = 0; i < hosts.size() && i < max; ++i) out += (i ? ", " : "") + hosts[i];
    if (hosts.size() > max) out += ", ... (" + std::to_string(hosts.size()) + " in all)";
    return out;
}

std::string quoted_command(const std::vector<std::string>& args) {
    std::string out;
    for (const std::string& a : args) {
        if (!out.empty()) out += ' ';
        if (!a.empty() && a.find_first_of(" \t\"'$;&|<>()*?`\\") == std::string::npos) {
            out += a;
            continue;
        }
        out += '\'';
        for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += '\'';
    }
    return out;
}

// The launcher the user typed, as recorded: its command line, and where it ran.
struct TypedLauncher {
    LaunchCommand command;
    std::string host;
};

std::vector<TypedLauncher> typed_launchers(const RunView& view) {
    std::vector<TypedLauncher> out;
    for (const ProcessView& p : view.processes) {
        if (!p.launcher) continue;
        // mpirun's own children (a fork that did not exec) are not another
        // launch; srun under salloc is.
        const bool fork_of_launcher =
            std::any_of(view.processes.begin(), view.processes.end(), [&](const ProcessView& q) {
                return q.launcher && q.node == p.node && q.pid == p.ppid && q.cmdline == p.cmdline;
            });
        if (fork_of_launcher) continue;
        LaunchCommand c = parse_launch_command(split_command_line(p.cmdline));
        if (c.is_launcher) out.push_back({std::move(c), std::string(view.nodes[p.node].host)});
    }
    if (out.empty()) {
        // Not recorded (its log was lost): the command in run.json.
        LaunchCommand c = parse_launch_command(split_command_line(view.run_command));
        if (c.is_launcher) out.push_back({std::move(c), ""});
    }
    // What `stacksage run` wrote of the launch (run.json's "launch"): the host
    // file's hosts, read where the run started.
    if (out.size() == 1) {
        LaunchCommand& c = out.front().command;
        if (c.ranks < 0) c.ranks = view.launch_ranks;
        for (std::string_view hosts = view.launch_hosts; !hosts.empty();) {
            const std::size_t comma = hosts.find(',');
            const std::string host(hosts.substr(0, comma));
            if (!host.empty() && std::find(c.hosts.begin(), c.hosts.end(), host) == c.hosts.end())
                c.hosts.push_back(host);
            hosts = comma == std::string_view::npos ? std::string_view{} : hosts.substr(comma + 1);
        }
    }
    return out;
}

// The Slurm allocation's nodes, from any process that knows them.
std::pair<std::vector<std::string>, std::string> allocation_hosts(const RunView& view) {
    for (const ProcessView& p : view.processes)
        for (const char* name : formats::kSlurmJobNodeListVariables)
            if (auto list = p.identity_value(name))
                if (auto hosts = parse_hostlist(*list)) return {std::move(*hosts), name};
    return {};
}

class CompletenessCheck {
public:
    CompletenessCheck(const RunView& view, const LauncherInfo& launcher) : view_(view), launcher_(launcher) {
        for (const NodeView& n : view.nodes)
            if (!n.processes.empty()) app_hosts_.push_back(std::string(n.host));
            else if (!n.launchers.empty()) launch_hosts_.push_back(std::string(n.host));
    }

    std::vector<Finding> run() {
        collect_jobs();
        std::vector<Finding> out;
        for (const auto& [key, job] : jobs_)
            if (auto f = check_job(job)) out.push_back(std::move(*f));
        if (out.empty())
            for (Finding& f : check_allocation()) out.push_back(std::move(f));
        return out;
    }

private:
    bool ran_application(std::string_view host) const {
        return std::any_of(app_hosts_.begin(), app_hosts_.end(),
                           [&](const std::string& h) { return same_host(h, host); });
    }

    std::vector<std::string> without_application(const std::vector<std::string>& hosts) const {
        std::vector<std::string> out;
        for (const std::string& h : hosts)
            if (!ran_application(h)) out.push_back(h);
        return out;
    }

    void collect_jobs() {
        for (const ProcessView& p : view_.processes) {
            if (p.launcher || p.rank < 0) continue;
            Job& job = jobs_[job_key(p)];
            // A wrapper (sh -c '...; exec ./app') recorded up to its exec,
            // whose program left no log: that program ran without the recorder.
            if (p.end_how == "exec") {
                job.lost_at_exec.insert(p.rank);
                if (job.lost_at_exec_name.empty()) job.lost_at_exec_name = std::string(p.name);
            } else {
                job.ranks.insert(p.rank);
            }
            const SizeEvidence size = size_known_to(p);
            if (size.ranks > job.size.ranks) job.size = size;
            if (job.step_hosts.empty() && started_by_srun(p))
                if (auto list = p.identity_value(formats::kSlurmStepNodeListVariable))
                    if (auto hosts = parse_hostlist(*list)) {
                        job.step_hosts = std::move(*hosts);
                        job.step_hosts_source = formats::kSlurmStepNodeListVariable;
                    }
        }
        // The launcher's command line speaks for the job when it is the only
        // one (several jobs, several launches: which is whose is unknown).
        launchers_ = typed_launchers(view_);
        if (launchers_.size() != 1 || jobs_.size() > 1) return;
        const LaunchCommand& c = launchers_.front().command;
        Job& job = jobs_[jobs_.empty() ? std::string() : jobs_.begin()->first];
        if (c.ranks > job.size.ranks) job.size = {c.ranks, c.launcher + (c.slurm ? " -n" : " -np")};
        if (c.slurm && job.step_hosts.empty() && !c.hosts.empty()) {
            job.step_hosts = c.hosts;
            job.step_hosts_source = "srun -w";
        }
        if (!c.slurm) mpirun_hosts_ = c.hosts;
    }

    std::optional<Finding> check_job(const Job& job) {
        // The ranks below the job's size that left no log, as intervals
        // between the recorded ones (a size from an edited log may be huge).
        std::vector<std::int64_t> listed;
        std::int64_t missing = 0, recorded = 0;
        if (job.size.ranks > 0) {
            std::int64_t next = 0;
            auto add_gap = [&](std::int64_t from, std::int64_t to) {  // [from, to)
                missing += to - from;
                for (std::int64_t r = from; r < to && listed.size() < kMaxListedRanks; ++r) listed.push_back(r);
            };
            for (std::int64_t r : job.ranks) {
                if (r >= job.size.ranks) break;
                add_gap(next, r);
                next = r + 1;
                ++recorded;
            }
            add_gap(next, job.size.ranks);
        }
        std::vector<std::string> hosts = without_application(job.step_hosts);
        // Hosts the job may have used (mpirun --host, the allocation): with
        // ranks missing, the ranks may have run there.
        if (missing > 0) {
            add_unique(hosts, without_application(mpirun_hosts_));
            add_unique(hosts, without_application(allocation_hosts(view_).first));
        }
        if (missing == 0 && hosts.empty()) return std::nullopt;

        Finding f;
        f.code = FindingCode::IncompleteRecording;
        f.severity = Severity::Error;
        f.check = "completeness";
        f.ranks = listed;
        f.hosts = hosts;
        std::string what;
        if (missing > 0) {
            what = std::to_string(missing) + " of " +
                   plural(static_cast<std::size_t>(job.size.ranks), "rank", "ranks") + " (" +
                   (missing == 1 ? "rank " : "ranks ") + compact_ranks(listed) + ")";
        }
        if (!hosts.empty())
            what +=
                (what.empty() ? "" : " and ") + plural(hosts.size(), "host", "hosts") + " (" + host_names(hosts) + ")";
        bool all_lost_at_exec = missing > 0 && hosts.empty();
        for (std::int64_t r : listed) all_lost_at_exec = all_lost_at_exec && job.lost_at_exec.count(r) > 0;
        f.message = "The recording is incomplete: " + what +
                    (all_lost_at_exec ? " ran the program untraced" : " left no log") +
                    "; the findings below cover only what was recorded";
        std::string detail;
        if (job.size.ranks > 0)
            detail = "the job had " + plural(static_cast<std::size_t>(job.size.ranks), "rank", "ranks") + " (" +
                     job.size.source + "), " + std::to_string(recorded) +
                     (recorded == 1 ? " was recorded" : " were recorded");
        if (!job.step_hosts.empty())
            detail += (detail.empty() ? "" : "; ") + std::string("its tasks ran on ") +
                      plural(job.step_hosts.size(), "host", "hosts") + " (" + job.step_hosts_source + ")";
        std::size_t lost_at_exec = 0;
        for (std::int64_t r : listed) lost_at_exec += job.lost_at_exec.count(r);
        if (lost_at_exec > 0)
            detail += (detail.empty() ? "" : "; ") + plural(lost_at_exec, "rank", "ranks") + " ran " +
                      job.lost_at_exec_name +
                      ", which was recorded until it exec'ed the program: the program ran "
                      "without the recorder (LD_PRELOAD or STACKSAGE_OUTPUT was dropped before the exec: a wrapper "
                      "script, env -i, a setuid program)";
        else detail += (detail.empty() ? "" : "; ") + cause(hosts, missing > 0);
        f.detail = detail;
        f.suggestion = all_lost_at_exec
                           ? "keep LD_PRELOAD and STACKSAGE_OUTPUT in the environment " + job.lost_at_exec_name +
                                 " exec's the program with, or start the recorder at the program itself (stacksage "
                                 "run -- before the program in the wrapper's exec); then run the job again"
                           : recording_command();
        f.figures = {{"ranks_expected", job.size.ranks},
                     {"ranks_recorded", recorded},
                     {"ranks_missing", missing},
                     {"hosts_missing", static_cast<std::int64_t>(hosts.size())}};
        return f;
    }

    // Why ranks and hosts are missing, from what the launch looked like.
    std::string cause(const std::vector<std::string>& hosts, bool ranks_missing) const {
        const LaunchCommand* c = launchers_.size() == 1 ? &launchers_.front().command : nullptr;
        const bool slurm = c ? c->slurm : launcher_.kind == LauncherKind::Slurm;
        if (c && c->export_none)
            return "likely cause: srun --export=NONE (or a list without ALL) gave the tasks an environment without "
                   "LD_PRELOAD, so they ran without the recorder";
        if (!hosts.empty() && !slurm && launcher_.kind != LauncherKind::None)
            return "likely cause: " + launcher_.command +
                   "'s ranks on other hosts did not inherit the recorder (ssh "
                   "does not pass LD_PRELOAD), or wrote their logs into a directory of their own host (the output "
                   "directory must be on a file system every node shares)";
        if (!hosts.empty())
            return "likely cause: the tasks on those hosts did not write into this directory: the output directory "
                   "must be on a file system every node shares (not /tmp), and the launcher must pass LD_PRELOAD "
                   "and STACKSAGE_OUTPUT to them";
        if (ranks_missing)
            return "likely cause: those ranks ran without the recorder: something between the launcher and the "
                   "application dropped LD_PRELOAD or STACKSAGE_OUTPUT (a wrapper script, env -i, a setuid program), "
                   "or they were killed before the recorder started";
        return "";
    }

    // The command that records every rank: stacksage run inside the launcher.
    std::string recording_command() const {
        const LaunchCommand* c = launchers_.size() == 1 ? &launchers_.front().command : nullptr;
        std::string launch, program = "./app";
        if (c && !c->launcher_args.empty()) {
            std::vector<std::string> args;
            for (const std::string& a : c->launcher_args)
                if (!(c->slurm && a.starts_with("--export") && c->export_none)) args.push_back(a);
            launch = quoted_command(args);
            if (!c->program_args.empty()) program = quoted_command(c->program_args);
        } else {
            launch = (launcher_.kind == LauncherKind::None ? std::string("mpirun") : launcher_.command) + " ...";
        }
        return "start the recorder in every rank, on every host, through the launcher: " + launch +
               " stacksage run -- " + program + " (with the output directory on a file system all nodes share)";
    }

    // A complete recording on a Slurm allocation some of whose nodes ran no
    // rank: one finding per such node.
    std::vector<Finding> check_allocation() const {
        const auto [allocated, source] = allocation_hosts(view_);
        const std::vector<std::string> idle = without_application(allocated);
        std::vector<Finding> out;
        if (idle.empty()) return out;
        std::int64_t ranks = 0;
        for (const auto& [key, job] : jobs_)
            ranks += std::max<std::int64_t>(job.size.ranks, static_cast<std::int64_t>(job.ranks.size()));
        const std::size_t used = allocated.size() - idle.size();
        const std::int64_t per_node = ranks > 0 ? (ranks + static_cast<std::int64_t>(allocated.size()) - 1) /
                                                      static_cast<std::int64_t>(allocated.size())
                                                : 1;
        for (const std::string& host : idle) {
            Finding f;
            f.code = FindingCode::AllocatedNodeUnused;
            f.severity = Severity::Warning;
            f.check = "completeness";
            // The recorded host's own name when it has a directory (a launch host).
            f.node = host;
            for (const NodeView& n : view_.nodes)
                if (same_host(n.host, host)) f.node = std::string(n.host);
            f.hosts = {host};
            f.message = "Node " + host + " of the Slurm allocation ran no rank: a node paid for and left idle";
            f.detail =
                "the allocation had " + plural(allocated.size(), "node", "nodes") + " (" + source + "), " +
                std::to_string(used) + " ran the job's " + plural(static_cast<std::size_t>(ranks), "rank", "ranks") +
                (idle.size() > 1 ? "; " + std::to_string(idle.size()) + " ran none (" + host_names(idle) + ")" : "");
            f.suggestion = "ask for " + plural(std::max<std::size_t>(used, 1), "node", "nodes") + " (sbatch -N " +
                           std::to_string(std::max<std::size_t>(used, 1)) + "), or spread the tasks over all " +
                           std::to_string(allocated.size()) + " (srun -N " + std::to_string(allocated.size()) +
                           " --ntasks-per-node=" + std::to_string(per_node) + ")";
            f.figures = {{"nodes_allocated", static_cast<std::int64_t>(allocated.size())},
                         {"nodes_unused", static_cast<std::int64_t>(idle.size())},
                         {"ranks", ranks}};
            out.push_back(std::move(f));
        }
        return out;
    }

    const RunView& view_;
    const LauncherInfo& launcher_;
    std::vector<std::string> app_hosts_, launch_hosts_, mpirun_hosts_;
    std::map<std::string, Job> jobs_;
    std::vector<TypedLauncher> launchers_;
};

}  // namespace

std::vector<Finding> check_completeness(const RunView& view, const LauncherInfo& launcher) {
    return CompletenessCheck(view, launcher).run();
}

}  // namespace stacksage
