// `stacksage report OUT`: what the job did with the machine, in the terminal
// (default) or as JSON; --html writes the page (docs/html-report.md) besides;
// --format perfetto / graphml export the timeline / the merged model.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <memory>

#include "cli/analysis_pipeline.hpp"
#include "cli/command_output.hpp"
#include "cli/commands.hpp"
#include "cli/network_analysis.hpp"
#include "reports/graphml_export.hpp"
#include "reports/html_report.hpp"
#include "reports/json_report.hpp"
#include "reports/perfetto_export.hpp"
#include "reports/text_report.hpp"

namespace stacksage::cli {

namespace {
struct ReportOptions {
    std::string directory;
    std::string format = "text";
    std::string color = "auto";
    std::string output;
    std::string html;
    bool no_info = false;
    bool timings = false;
    NetworkInputs network;
};

int run_report(const ReportOptions& o) {
    CommandOutput output("stacksage report");
    AnalysisOptions analysis_options;
    // The load series' rows (30 KB a node) only the page draws: it computes
    // them one node at a time as it is written.
    analysis_options.load_series_rows = false;
    Result<AnalysedRun> analysed = load_and_analyse(o.directory, analysis_options);
    if (!analysed) {
        output.say(analysed.error().message);
        return output.finish(kExitUsage);
    }
    Result<std::unique_ptr<NetworkAnalysis>> network = analyse_network(o.network, *analysed);
    if (!network) {
        output.say(network.error().message);
        return output.finish(kExitUsage);
    }
    const auto start = std::chrono::steady_clock::now();
    ReportData data = analysed->report_data();
    if (*network) data.network = &(*network)->report;
    const bool to_terminal = o.output.empty() && ::isatty(STDOUT_FILENO) == 1;
    // The report as pieces of text: JSON is streamed, one node at a time,
    // so that a million ranks' report is never one document in memory.
    CommandOutput::Producer report;
    std::string text;
    if (o.format == "json") {
        report = [&data](const auto& sink) { write_report_json(data, sink); };
    } else {
        if (o.format == "perfetto") {
            text = perfetto_trace(analysed->analysis).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        } else if (o.format == "graphml") {
            // With a fabric, the fabric with the job marked; the run's model otherwise.
            text = *network ? model_to_graphml(network_to_model((*network)->report)) : model_to_graphml(analysed->run.model);
        } else {
            TextReportOptions t;
            // Colour only for a person at a terminal, and never against NO_COLOR.
            const char* no_color = std::getenv("NO_COLOR");
            t.color = o.color == "always" || (o.color == "auto" && to_terminal && (no_color == nullptr || *no_color == '\0'));
            t.show_info = !o.no_info;
            text = render_text_report(data, t);
        }
        report = [&text](const auto& sink) { sink(text); };
    }
    if (!o.html.empty()) {
        std::size_t page_bytes = 0;
        const Model& model = analysed->run.model;
        if (!output.write_file_from(o.html, [&](const auto& sink) { write_html_report(data, model, sink); }, &page_bytes))
            return output.finish(kExitUsage);
        // The report itself still goes to standard output; this line says where the page is.
        output.say(fmt::format("wrote the HTML report to {} ({} KiB); open it in a browser", o.html,
                               (page_bytes + 1023) / 1024));
    }
    if (o.output.empty()) {
        output.print_from(report);
    } else if (!output.write_file_from(o.output, report)) {
        return output.finish(kExitUsage);
    }
    const double render_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (o.timings) output.say(timings_line(*analysed, render_seconds));
    keep_until_exit(std::move(*analysed));
    return output.finish(kExitOk);
}
}  // namespace

CommandRunner add_report_command(CLI::App& app) {
    auto options = std::make_shared<ReportOptions>();
    CLI::App* report = app.add_subcommand("report", "Report how a recorded run used the machine (warnings, suggestions)");
    report->add_option("directory", options->directory, "The directory `stacksage run` wrote")->required();
    report->add_option("-f,--format", options->format, "Output format: text, json, perfetto (Chrome/Perfetto trace of the flows), graphml (the merged model)")->check(CLI::IsMember({"text", "json", "perfetto", "graphml"}));
    report->add_option("--html", options->html,
                       "Also write the HTML report (topology heatmaps, findings, flows, timeline) to this file");
    report->add_option("--color", options->color, "Colours in the text report")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    report->add_option("-o,--output", options->output, "Write the report to this file instead of standard output");
    report->add_flag("--no-info", options->no_info, "Leave information findings out of the text report");
    add_network_options(*report, options->network);
    report->add_flag("--timings", options->timings, "Print the time and memory of each stage on standard error");
    return [options] { return run_report(*options); };
}

}  // namespace stacksage::cli
