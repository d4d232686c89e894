#include "analysis/launch_command.hpp"

#include <algorithm>
#include <iterator>
#include <charconv>

#include "core/formats/launcher_options.hpp"
#include "core/hostlist.hpp"

namespace stacksage {

namespace {

constexpr std::string_view kMpiLaunchers[] = {
    "mpirun", "mpiexec", "orterun", "prterun", "mpirun.openmpi", "mpiexec.openmpi",
    "mpiexec.hydra", "mpirun.mpich", "mpiexec.mpich", "mpirun.mpich2", "mpiexec.mpich2", "oshrun",
};
constexpr std::string_view kSlurmLaunchers[] = {"srun", "mpiexec.slurm"};

std::string_view base_name(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

template <std::size_t N> bool one_of(std::string_view word, const std::string_view (&list)[N]) {
    return std::find(std::begin(list), std::end(list), word) != std::end(list);
}

std::int64_t count_of(std::string_view text) {
    std::int64_t n = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    return ec == std::errc() && end == text.data() + text.size() && n > 0 ? n : -1;
}

// "a,b:2,c:slots=4" (Open MPI, Hydra): the host names.
void add_hosts(std::string_view list, std::vector<std::string>& out) {
    while (!list.empty()) {
        const std::size_t comma = list.find(',');
        std::string_view host = list.substr(0, comma);
        host = host.substr(0, host.find(':'));
        if (!host.empty() && std::find(out.begin(), out.end(), host) == out.end()) out.emplace_back(host);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
}

// "--name=value" or "--name" "value".
struct Option {
    std::string_view name, value;
    bool has_inline_value = false;
};
Option split_option(std::string_view arg) {
    const std::size_t eq = arg.find('=');
    if (arg.starts_with("--") && eq != std::string_view::npos) return {arg.substr(0, eq), arg.substr(eq + 1), true};
    return {arg, {}, false};
}

void parse_mpi(const std::vector<std::string>& args, std::size_t i, LaunchCommand& out) {
    for (; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        if (arg == "--" || arg == ":") {  // an MPMD separator: what follows is not this job's first program
            ++i;
            break;
        }
        if (!arg.starts_with('-')) break;
        const Option o = split_option(arg);
        const bool next = i + 1 < args.size();
        auto value = [&]() -> std::string_view {
            if (o.has_inline_value) return o.value;
            return next ? std::string_view(args[++i]) : std::string_view{};
        };
        if (o.name == "-np" || o.name == "-n" || o.name == "--np" || o.name == "--n" || o.name == "-c") {
            if (const std::int64_t n = count_of(value()); n > 0) out.ranks = n;
        } else if (o.name == "--host" || o.name == "-H" || o.name == "-host" || o.name == "-hosts" ||
                   o.name == "--hosts") {
            add_hosts(value(), out.hosts);
        } else if (o.name == "--hostfile" || o.name == "-hostfile" || o.name == "--machinefile" ||
                   o.name == "-machinefile" || o.name == "-f" || o.name == "--default-hostfile") {
            out.hostfile = std::string(value());
        } else if (one_of(o.name, launcher_options::kOpenMpiWithTwoValues) ||
                   one_of(o.name, launcher_options::kHydraWithTwoValues)) {
            if (!o.has_inline_value && next) ++i;
            if (i + 1 < args.size()) ++i;
        } else if (one_of(o.name, launcher_options::kOpenMpiWithValue) ||
                   one_of(o.name, launcher_options::kHydraWithValue)) {
            value();
        }
    }
    out.launcher_args.assign(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(std::min(i, args.size())));
    if (i < args.size()) out.program_args.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
}

void parse_srun(const std::vector<std::string>& args, std::size_t i, LaunchCommand& out) {
    for (; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (!arg.starts_with('-') || arg == "-") break;
        std::string_view name, value;
        bool takes_value = false;
        if (arg.starts_with("--")) {
            const Option o = split_option(arg);
            name = o.name;
            const launcher_options::Arg how = launcher_options::srun_long_arg(o.name.substr(2));
            takes_value = how == launcher_options::Arg::Required ||
                          (how == launcher_options::Arg::Optional && o.has_inline_value);
            if (takes_value) value = o.has_inline_value ? o.value : (i + 1 < args.size() ? std::string_view(args[++i]) : "");
        } else {
            name = arg.substr(0, 2);
            const launcher_options::Arg how =
                arg.size() >= 2 ? launcher_options::srun_short_arg(arg[1]) : launcher_options::Arg::None;
            takes_value = how == launcher_options::Arg::Required ||
                          (how == launcher_options::Arg::Optional && arg.size() > 2);
            if (takes_value)
                value = arg.size() > 2 ? arg.substr(2) : (i + 1 < args.size() ? std::string_view(args[++i]) : "");
        }
        if (!takes_value) continue;
        if (name == "-n" || name == "--ntasks") {
            if (const std::int64_t n = count_of(value); n > 0) out.ranks = n;
        } else if (name == "-w" || name == "--nodelist") {
            if (value.find('/') == std::string_view::npos)  // a file of names is not read here
                if (auto hosts = parse_hostlist(value))
                    for (std::string& h : *hosts)
                        if (std::find(out.hosts.begin(), out.hosts.end(), h) == out.hosts.end())
                            out.hosts.push_back(std::move(h));
        } else if (name == "--export") {
            out.export_none = !value.starts_with("ALL") && value.find("LD_PRELOAD") == std::string_view::npos;
        }
    }
    out.launcher_args.assign(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(std::min(i, args.size())));
    if (i < args.size()) out.program_args.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
}

}  // namespace

std::vector<std::string> split_command_line(std::string_view line) {
    std::vector<std::string> out;
    std::string word;
    bool in_word = false, quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '\'') quoted = false;
            else word += c;
        } else if (c == '\'') {
            quoted = in_word = true;
        } else if (c == '\\' && i + 1 < line.size()) {
            word += line[++i];
            in_word = true;
        } else if (c == ' ') {
            if (in_word) out.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) out.push_back(std::move(word));
    return out;
}

LaunchCommand parse_launch_command(const std::vector<std::string>& args) {
    LaunchCommand out;
    std::size_t i = 0;
    // `env VAR=value ... mpirun ...`, `VAR=value mpirun ...`.
    if (i < args.size() && base_name(args[i]) == "env") ++i;
    while (i < args.size() && args[i].find('=') != std::string::npos && !args[i].starts_with('-')) ++i;
    if (i >= args.size()) return out;
    const std::string_view name = base_name(args[i]);
    if (one_of(name, kMpiLaunchers)) {
        out.is_launcher = true;
        out.launcher = std::string(name);
        parse_mpi(args, i + 1, out);
    } else if (one_of(name, kSlurmLaunchers)) {
        out.is_launcher = true;
        out.slurm = true;
        out.launcher = std::string(name);
        parse_srun(args, i + 1, out);
    }
    return out;
}

}  // namespace stacksage
