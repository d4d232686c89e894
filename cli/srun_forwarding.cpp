#include "cli/srun_forwarding.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <span>

#include "core/formats/launcher_options.hpp"

namespace stacksage::cli {

namespace {

using launcher_options::Arg;
using launcher_options::LongOption;
using launcher_options::kSrunLong;
using launcher_options::kSrunShortOptional;
using launcher_options::kSrunShortRequired;

// The options of salloc and sbatch that take an argument (srun's are in
// core/formats/launcher_options.hpp), from Slurm 22.05's --help and man
// pages, hidden ones included.
// clang-format off
constexpr LongOption kSallocLong[] = {
    {"account", Arg::Required}, {"acctg-freq", Arg::Required}, {"bb", Arg::Required}, {"bbf", Arg::Required},
    {"begin", Arg::Required}, {"chdir", Arg::Required}, {"cluster-constraint", Arg::Required},
    {"clusters", Arg::Required}, {"comment", Arg::Required}, {"constraint", Arg::Required},
    {"container", Arg::Required}, {"core-spec", Arg::Required}, {"cores-per-socket", Arg::Required},
    {"cpu-freq", Arg::Required}, {"cpus-per-gpu", Arg::Required}, {"cpus-per-task", Arg::Required},
    {"deadline", Arg::Required}, {"delay-boot", Arg::Required}, {"dependency", Arg::Required},
    {"distribution", Arg::Required}, {"exclude", Arg::Required}, {"exclusive", Arg::Optional},
    {"extra-node-info", Arg::Required}, {"get-user-env", Arg::Optional}, {"gid", Arg::Required},
    {"gpu-bind", Arg::Required}, {"gpu-freq", Arg::Required}, {"gpus", Arg::Required},
    {"gpus-per-node", Arg::Required}, {"gpus-per-socket", Arg::Required}, {"gpus-per-task", Arg::Required},
    {"gres", Arg::Required}, {"gres-flags", Arg::Required}, {"hint", Arg::Required},
    {"immediate", Arg::Optional}, {"job-name", Arg::Required}, {"kill-command", Arg::Optional},
    {"licenses", Arg::Required}, {"mail-type", Arg::Required}, {"mail-user", Arg::Required},
    {"mcs-label", Arg::Required}, {"mem", Arg::Required}, {"mem-bind", Arg::Required},
    {"mem-per-cpu", Arg::Required}, {"mem-per-gpu", Arg::Required}, {"mincpus", Arg::Required},
    {"network", Arg::Required}, {"nice", Arg::Optional}, {"nodefile", Arg::Required},
    {"nodelist", Arg::Required}, {"nodes", Arg::Required}, {"ntasks", Arg::Required},
    {"ntasks-per-core", Arg::Required}, {"ntasks-per-gpu", Arg::Required}, {"ntasks-per-node", Arg::Required},
    {"ntasks-per-socket", Arg::Required}, {"partition", Arg::Required}, {"power", Arg::Required},
    {"prefer", Arg::Required}, {"priority", Arg::Required}, {"profile", Arg::Required},
    {"qos", Arg::Required}, {"reservation", Arg::Required}, {"signal", Arg::Required},
    {"sockets-per-node", Arg::Required}, {"switches", Arg::Required}, {"thread-spec", Arg::Required},
    {"threads-per-core", Arg::Required}, {"time", Arg::Required}, {"time-min", Arg::Required},
    {"tmp", Arg::Required}, {"uid", Arg::Required}, {"wait-all-nodes", Arg::Required},
    {"wckey", Arg::Required}, {"x11", Arg::Optional},
};
constexpr std::string_view kSallocShortRequired = "AbBcCdDFGJLmMnNpqStwx";
constexpr std::string_view kSallocShortOptional = "IK";

constexpr LongOption kSbatchLong[] = {
    {"account", Arg::Required}, {"acctg-freq", Arg::Required}, {"array", Arg::Required}, {"batch", Arg::Required},
    {"bb", Arg::Required}, {"bbf", Arg::Required}, {"begin", Arg::Required}, {"chdir", Arg::Required},
    {"cluster-constraint", Arg::Required}, {"clusters", Arg::Required}, {"comment", Arg::Required},
    {"constraint", Arg::Required}, {"container", Arg::Required}, {"core-spec", Arg::Required},
    {"cores-per-socket", Arg::Required}, {"cpu-freq", Arg::Required}, {"cpus-per-gpu", Arg::Required},
    {"cpus-per-task", Arg::Required}, {"deadline", Arg::Required}, {"delay-boot", Arg::Required},
    {"dependency", Arg::Required}, {"distribution", Arg::Required}, {"error", Arg::Required},
    {"exclude", Arg::Required}, {"exclusive", Arg::Optional}, {"export", Arg::Optional},
    {"export-file", Arg::Required}, {"extra-node-info", Arg::Required}, {"get-user-env", Arg::Optional},
    {"gid", Arg::Required}, {"gpu-bind", Arg::Required}, {"gpu-freq", Arg::Required}, {"gpus", Arg::Required},
    {"gpus-per-node", Arg::Required}, {"gpus-per-socket", Arg::Required}, {"gpus-per-task", Arg::Required},
    {"gres", Arg::Required}, {"gres-flags", Arg::Required}, {"hint", Arg::Required}, {"input", Arg::Required},
    {"job-name", Arg::Required}, {"licenses", Arg::Required}, {"mail-type", Arg::Required},
    {"mail-user", Arg::Required}, {"mcs-label", Arg::Required}, {"mem", Arg::Required},
    {"mem-bind", Arg::Required}, {"mem-per-cpu", Arg::Required}, {"mem-per-gpu", Arg::Required},
    {"mincpus", Arg::Required}, {"network", Arg::Required}, {"nice", Arg::Optional},
    {"nodefile", Arg::Required}, {"nodelist", Arg::Required}, {"nodes", Arg::Required},
    {"ntasks", Arg::Required}, {"ntasks-per-core", Arg::Required}, {"ntasks-per-gpu", Arg::Required},
    {"ntasks-per-node", Arg::Required}, {"ntasks-per-socket", Arg::Required}, {"output", Arg::Required},
    {"partition", Arg::Required}, {"power", Arg::Required}, {"prefer", Arg::Required},
    {"priority", Arg::Required}, {"profile", Arg::Required}, {"propagate", Arg::Optional},
    {"qos", Arg::Required}, {"reservation", Arg::Required}, {"signal", Arg::Required},
    {"sockets-per-node", Arg::Required}, {"switches", Arg::Required}, {"thread-spec", Arg::Required},
    {"threads-per-core", Arg::Required}, {"time", Arg::Required}, {"time-min", Arg::Required},
    {"tmp", Arg::Required}, {"uid", Arg::Required}, {"wait", Arg::None}, {"wait-all-nodes", Arg::Required},
    {"wckey", Arg::Required}, {"wrap", Arg::Optional},
};
constexpr std::string_view kSbatchShortRequired = "aAbBcCdDeFGiJLmMnNopqStwx";
constexpr std::string_view kSbatchShortOptional = "";
// clang-format on

struct LauncherSyntax {
    std::span<const LongOption> longs;
    std::string_view short_required;
    std::string_view short_optional;
};

// Where an --export value sits: in word `index` from `offset` on.
struct ValueSite {
    std::size_t index;
    std::size_t offset;
};

struct ParsedComponent {
    std::vector<ValueSite> exports;
    std::size_t command = 0;  // first word of the command; == end when there is none
    bool wait = false;        // sbatch's --wait / -W
    bool wrap = false;        // sbatch's --wrap
};

// The option a `--name` word means: an exact name, or (as getopt_long
// allows) an unambiguous prefix of one. nullptr for an unknown or
// ambiguous one.
const LongOption* find_long(std::span<const LongOption> options, std::string_view name) {
    const LongOption* found = nullptr;
    for (const LongOption& o : options) {
        if (o.name == name) return &o;
        if (o.name.substr(0, name.size()) == name) {
            if (found != nullptr) return nullptr;
            found = &o;
        }
    }
    return found;
}

// Reads the options of one launcher invocation (or one component of a
// heterogeneous srun, which ends at a ":" word), from args[begin] up to end.
ParsedComponent parse_options(const std::vector<std::string>& args, std::size_t begin, std::size_t end,
                              const LauncherSyntax& syntax) {
    ParsedComponent parsed;
    parsed.command = end;
    for (std::size_t i = begin; i < end; ++i) {
        const std::string& word = args[i];
        if (word == "--") {
            parsed.command = i + 1;
            return parsed;
        }
        if (word.size() < 2 || word[0] != '-') {
            parsed.command = i;
            return parsed;
        }
        if (word[1] == '-') {
            const std::size_t equals = word.find('=');
            const std::string_view name =
                std::string_view(word).substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
            const LongOption* option = find_long(syntax.longs, name);
            if (option == nullptr) continue;  // a flag (they need no entry), or unknown (refused by Slurm)
            const bool is_export = option->name == "export";
            if (option->name == "wrap") parsed.wrap = true;
            if (option->name == "wait" && option->arg == Arg::None) parsed.wait = true;  // sbatch's --wait
            if (equals != std::string::npos) {
                if (is_export) parsed.exports.push_back({i, equals + 1});
            } else if (option->arg == Arg::Required && i + 1 < end) {
                if (is_export) parsed.exports.push_back({i + 1, 0});
                ++i;
            }
            continue;
        }
        // A cluster of short options: "-l", "-N2", "-lN", "2".
        for (std::size_t j = 1; j < word.size(); ++j) {
            const char c = word[j];
            if (syntax.short_required.find(c) != std::string_view::npos) {
                if (j + 1 == word.size() && i + 1 < end) ++i;
                break;
            }
            if (syntax.short_optional.find(c) != std::string_view::npos) break;
            // sbatch's -W is --wait (srun's takes a value: in short_required; salloc has none).
            if (c == 'W') parsed.wait = true;
        }
    }
    return parsed;
}

std::vector<std::string_view> split_commas(std::string_view s) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = s.find(',', start);
        parts.push_back(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        if (comma == std::string_view::npos) return parts;
        start = comma + 1;
    }
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
           });
}

std::string_view name_of(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// LD_PRELOAD as an --export entry: the recorder's own path when the list
// can hold it (no comma), else by name (the caller's whole value).
std::string preload_entry(const RecorderVariables& recorder) {
    if (recorder.preload.empty() || recorder.preload.find(',') != std::string::npos) return "LD_PRELOAD";
    return "LD_PRELOAD=" + recorder.preload;
}

std::string base_name(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The --export values of a batch script's #SBATCH lines (sbatch reads them
// up to the first command; the command line overrides them).
std::vector<std::string> script_exports(const std::string& script) {
    std::vector<std::string> values;
    std::ifstream in(script);
    std::string line;
    for (int n = 0; n < 10000 && std::getline(in, line); ++n) {
        if (n == 0 && line.rfind("#!", 0) == 0) continue;
        const std::size_t first = line.find_first_not_of(" \t");
        if (first == std::string::npos) continue;
        if (line[first] != '#') break;
        if (line.compare(first, 7, "#SBATCH") != 0) continue;
        std::size_t at = line.find("--export", first);
        if (at == std::string::npos) continue;
        at += 8;
        if (at < line.size() && line[at] == '=') {
            const std::size_t stop = line.find_first_of(" \t", at + 1);
            values.push_back(line.substr(at + 1, stop == std::string::npos ? std::string::npos : stop - at - 1));
        } else if (at == line.size() || line[at] == ' ' || line[at] == '\t') {
            values.push_back("ALL");
        }
    }
    return values;
}

class Forwarder {
public:
    Forwarder(const EnvironmentLookup& environment, const RecorderVariables& recorder)
        : environment_(environment), recorder_(recorder) {}

    SlurmForwarding result;

    void srun(std::size_t begin) {
        // One component, or several separated by ":" words (a heterogeneous step).
        bool a_component_reads_the_environment = false;
        std::size_t start = begin + 1;
        const std::size_t end = result.command.size();
        while (start <= end) {
            // The component's options, then its command up to the next ":".
            const ParsedComponent parsed =
                parse_options(result.command, start, end, {kSrunLong, kSrunShortRequired, kSrunShortOptional});
            std::size_t stop = parsed.command;
            while (stop < end && result.command[stop] != ":") ++stop;
            if (parsed.exports.empty()) a_component_reads_the_environment = true;
            for (const ValueSite& site : parsed.exports) rewrite_word(site, "srun --export");
            if (stop >= end) break;
            start = stop + 1;
        }
        if (a_component_reads_the_environment) {
            // srun reads SRUN_EXPORT_ENV first, then SLURM_EXPORT_ENV.
            if (!rewrite_variable("SRUN_EXPORT_ENV")) rewrite_variable("SLURM_EXPORT_ENV");
        }
    }

    void salloc() {
        const std::size_t end = result.command.size();
        ParsedComponent parsed =
            parse_options(result.command, 1, end, {kSallocLong, kSallocShortRequired, kSallocShortOptional});
        if (parsed.command < end && base_name(result.command[parsed.command]) == "srun") {
            srun(parsed.command);
            return;
        }
        // Steps started later (a shell, a script) read SLURM_EXPORT_ENV.
        if (!rewrite_variable("SRUN_EXPORT_ENV")) rewrite_variable("SLURM_EXPORT_ENV");
        result.notes.push_back(
            "salloc: the steps of this allocation inherit the recorder, but an srun given --export=NONE or a list "
            "of variables drops it; there, write `srun ... stacksage run -- ./app`");
    }

    void sbatch() {
        const std::size_t end = result.command.size();
        ParsedComponent parsed =
            parse_options(result.command, 1, end, {kSbatchLong, kSbatchShortRequired, kSbatchShortOptional});
        for (const ValueSite& site : parsed.exports) rewrite_word(site, "sbatch --export");
        if (parsed.exports.empty() && !rewrite_variable("SBATCH_EXPORT") && !parsed.wrap && parsed.command < end) {
            // The script's own #SBATCH --export: a command-line --export overrides it.
            const std::vector<std::string> in_script = script_exports(result.command[parsed.command]);
            if (!in_script.empty()) {
                const std::string rewritten = export_value_with_recorder(in_script.back(), recorder_);
                if (rewritten != in_script.back()) {
                    result.command.insert(result.command.begin() + 1, "--export=" + rewritten);
                    result.notes.push_back("the script's #SBATCH --export=" + in_script.back() +
                                           " would keep the recorder's variables from the tasks: adding --export=" +
                                           rewritten + " to sbatch's command line, which overrides it");
                }
            }
        }
        if (!parsed.wait)
            result.notes.push_back(
                "sbatch returns when the job is queued, before it runs: what its tasks record goes into the output "
                "directory while the job runs (it must be on a file system the nodes share); run `stacksage report` "
                "on it once the job has ended, or give sbatch --wait");
    }

private:
    const EnvironmentLookup& environment_;
    const RecorderVariables& recorder_;

    void say_rewritten(std::string_view where, std::string_view before, std::string_view after) {
        result.notes.push_back(std::string(where) + "=" + std::string(before) +
                               " would keep the recorder's variables from the tasks: using " + std::string(where) +
                               "=" + std::string(after) + " (nothing else added to what you export)");
    }

    void rewrite_word(const ValueSite& site, std::string_view where) {
        std::string& word = result.command[site.index];
        const std::string value = word.substr(site.offset);
        const std::string rewritten = export_value_with_recorder(value, recorder_);
        if (rewritten == value) return;
        word = word.substr(0, site.offset) + rewritten;
        say_rewritten(where, value, rewritten);
    }

    // True when the variable is set (and now carries the recorder).
    bool rewrite_variable(const char* name) {
        const std::optional<std::string> value = environment_(name);
        if (!value) return false;
        const std::string rewritten = export_value_with_recorder(*value, recorder_);
        if (rewritten != *value) {
            result.environment.push_back({name, rewritten});
            say_rewritten(name, *value, rewritten);
        }
        return true;
    }
};

}  // namespace

std::string export_value_with_recorder(std::string_view value, const RecorderVariables& recorder) {
    const std::vector<std::string_view> entries = split_commas(value);
    for (std::string_view e : entries)
        if (equals_ignoring_case(e, "ALL")) return std::string(value);  // the whole environment goes, ours in it
    std::string out;
    auto add = [&out](std::string_view entry) {
        if (entry.empty()) return;
        out += (out.empty() ? "" : ",") + std::string(entry);
    };
    const bool nothing = entries.empty() || equals_ignoring_case(entries.front(), "NONE") ||
                         equals_ignoring_case(entries.front(), "NIL") || value.empty();
    bool have_preload = false;
    std::vector<bool> have(recorder.names.size(), false);
    if (!nothing) {
        for (std::string_view e : entries) {
            const std::string_view name = name_of(e);
            if (name == "LD_PRELOAD") {
                have_preload = true;
                if (e.size() > name.size()) {  // LD_PRELOAD=value: the recorder goes first
                    const std::string_view given = e.substr(name.size() + 1);
                    if (!recorder.preload.empty() && recorder.preload.find(',') == std::string::npos &&
                        given.find(recorder.preload) == std::string_view::npos)
                        add("LD_PRELOAD=" + recorder.preload + (given.empty() ? "" : ":" + std::string(given)));
                    else add(e);
                    continue;
                }
            }
            const auto ours = std::find(recorder.names.begin(), recorder.names.end(), name);
            if (ours != recorder.names.end()) {
                have[static_cast<std::size_t>(ours - recorder.names.begin())] = true;
                add(name);  // by name: the value `stacksage run` set
                continue;
            }
            add(e);
        }
    }
    if (!have_preload) add(preload_entry(recorder));
    for (std::size_t i = 0; i < recorder.names.size(); ++i)
        if (!have[i]) add(recorder.names[i]);
    return out;
}

std::string slurm_launcher_of(const std::vector<std::string>& command) {
    if (command.empty()) return {};
    const std::string name = base_name(command.front());
    return name == "srun" || name == "salloc" || name == "sbatch" ? name : std::string();
}

std::optional<SlurmForwarding> forward_through_slurm(const std::vector<std::string>& command,
                                                     const EnvironmentLookup& environment,
                                                     const RecorderVariables& recorder) {
    const std::string launcher = slurm_launcher_of(command);
    if (launcher.empty()) return std::nullopt;
    Forwarder forwarder(environment, recorder);
    forwarder.result.command = command;
    if (launcher == "srun") forwarder.srun(0);
    else if (launcher == "salloc") forwarder.salloc();
    else forwarder.sbatch();
    return std::move(forwarder.result);
}

}  // namespace stacksage::cli
