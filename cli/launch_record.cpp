#include "cli/launch_record.hpp"

#include <algorithm>
#include <sstream>

#include "analysis/launch_command.hpp"
#include "parsers/input_file.hpp"

namespace stacksage::cli {

namespace {
// A host file is a list of names: more than this is no host file.
constexpr std::uint64_t kMaxHostfileBytes = 4 * input_limits::kMiB;
}  // namespace

std::vector<std::string> hostfile_hosts(const std::string& text) {
    std::vector<std::string> hosts;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        std::string host;
        if (!(words >> host)) continue;
        host = host.substr(0, host.find(':'));
        if (!host.empty() && std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
    }
    return hosts;
}

std::optional<LaunchRecord> launch_record_of(const std::vector<std::string>& command) {
    const LaunchCommand c = parse_launch_command(command);
    if (!c.is_launcher) return std::nullopt;
    LaunchRecord r;
    r.launcher = c.launcher;
    r.ranks = c.ranks;
    r.hosts = c.hosts;
    r.hostfile = c.hostfile;
    if (!c.hostfile.empty()) {
        // Through input_file: a FIFO or a device named as the host file is
        // refused unopened, never waited on.
        std::string text;
        if (!read_input_file(c.hostfile, kMaxHostfileBytes, "host file", text))
            for (std::string& h : hostfile_hosts(text))
                if (std::find(r.hosts.begin(), r.hosts.end(), h) == r.hosts.end()) r.hosts.push_back(std::move(h));
    }
    return r;
}

}  // namespace stacksage::cli
