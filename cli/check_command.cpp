// `stacksage check OUT --fail-on warning|error [--network FILE]`: an exit status for job
// scripts and CI: 1 when findings of that severity (or worse) exist, or when
// loading the run noted an input error (a log skipped, a topology or
// run.json that could not be read: the analysis is incomplete, so the check
// cannot vouch for the run, at either threshold); 0 otherwise; 2 when the
// run cannot be analysed at all.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>
#include <set>
#include <string_view>

#include "cli/analysis_pipeline.hpp"
#include "cli/command_output.hpp"
#include "cli/commands.hpp"
#include "cli/network_analysis.hpp"
#include "reports/terminal_text.hpp"

namespace stacksage::cli {

namespace {
// Input errors printed before "... and N more": a run whose every log is
// corrupt must not print 10,000 lines (the JSON report lists them all).
constexpr std::size_t kMaxInputErrorsPrinted = 20;

struct CheckOptions {
    std::string directory;
    std::string fail_on = "warning";
    bool quiet = false;
    NetworkInputs network;
};

int run_check(const CheckOptions& o) {
    CommandOutput output("stacksage check");
    AnalysisOptions analysis_options;
    analysis_options.load_series_rows = false;  // only the HTML page draws them
    Result<AnalysedRun> analysed = load_and_analyse(o.directory, analysis_options);
    if (!analysed) {
        output.say(analysed.error().message);
        return output.finish(kExitUsage);
    }
    // The network's finding (network-spread), as the report has it: from
    // --network, or from the Slurm switch tree the run's processes kept.
    Result<std::unique_ptr<NetworkAnalysis>> network = analyse_network(o.network, *analysed);
    if (!network) {
        output.say(network.error().message);
        return output.finish(kExitUsage);
    }
    const Severity threshold = o.fail_on == "error" ? Severity::Error : Severity::Warning;
    std::size_t failing = 0;
    // Node names, file names and messages come from the run: shown terminal-safe.
    std::string text;
    const AnalysisResult& a = analysed->analysis;
    // Nodes with the same findings are one group (analysis/node_groups.hpp):
    // one line per finding of the group, its hosts in hostlist notation and
    // its figures as ranges; then the run-wide findings.
    for (const NodeGroup& g : a.node_groups)
        for (const GroupFinding& f : g.findings) {
            if (f.severity < threshold) continue;
            failing += f.findings.size();
            const std::string where =
                g.nodes.size() == 1 ? g.hosts : fmt::format("{} ({} nodes)", g.hosts, g.nodes.size());
            text += fmt::format("{}: {}: {}\n", to_string(f.severity), terminal_safe(where), terminal_safe(f.message));
        }
    std::set<std::string_view> hosts;
    for (const NodeSummary& n : a.nodes) hosts.insert(n.host);
    for (const Finding& f : a.findings) {
        if (f.severity < threshold || hosts.count(f.node)) continue;
        ++failing;
        text += fmt::format("{}: {}: {}\n", to_string(f.severity), terminal_safe(f.node.empty() ? "run" : f.node),
                            terminal_safe(f.message));
    }
    std::size_t input_errors = 0;
    for (const LoadNote& n : analysed->run.notes) {
        if (n.level != LoadNote::Level::Error) continue;
        ++input_errors;
        if (input_errors <= kMaxInputErrorsPrinted)
            text += fmt::format("input error: {}: {}\n", terminal_safe(n.file.empty() ? "run" : n.file),
                                terminal_safe(n.message));
    }
    if (input_errors > kMaxInputErrorsPrinted)
        text += fmt::format("... and {} more input error(s), {} in all (`stacksage report {} --format json` lists them)\n",
                            input_errors - kMaxInputErrorsPrinted, input_errors, terminal_safe(o.directory));
    text += fmt::format("stacksage check: {} error(s), {} warning(s), {} info(s){}{}; {}\n", a.count(Severity::Error),
                        a.count(Severity::Warning), a.count(Severity::Info),
                        input_errors ? fmt::format(", {} input error(s)", input_errors) : "",
                        analysed->run.stats.logs_skipped
                            ? fmt::format(", {} event log(s) skipped", analysed->run.stats.logs_skipped)
                            : "",
                        failing > 0        ? fmt::format("failing on {}", o.fail_on)
                        : input_errors > 0 ? std::string("failing: the input is incomplete")
                                           : std::string("passed"));
    if (!o.quiet) output.print(text);
    keep_until_exit(std::move(*analysed));
    return output.finish(failing > 0 || input_errors > 0 ? kExitFindings : kExitOk);
}
}  // namespace

CommandRunner add_check_command(CLI::App& app) {
    auto options = std::make_shared<CheckOptions>();
    CLI::App* check = app.add_subcommand(
        "check",
        "Exit with 1 when a recorded run has findings of a severity, or input errors (for job scripts and CI)");
    check->add_option("directory", options->directory, "The directory `stacksage run` wrote")->required();
    check->add_option("--fail-on", options->fail_on, "Lowest severity that fails the check")
        ->check(CLI::IsMember({"warning", "error"}));
    check->add_flag("-q,--quiet", options->quiet, "Print nothing; only the exit status");
    add_network_options(*check, options->network);
    return [options] { return run_check(*options); };
}

}  // namespace stacksage::cli
