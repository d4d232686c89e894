#include "reports/html_report_page.hpp"

#include "reports/html/page_assets.hpp"

namespace stacksage {

void write_html_page(const TextSink& sink, const std::string& escaped_title,
                     const std::function<void(const TextSink&)>& write_data_json, const std::string& extra_sections) {
    std::string page;
    page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    // No network: the page loads nothing, and says so to the browser too.
    page += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "script-src 'unsafe-inline'; img-src data:\">\n";
    page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" + escaped_title +
            "</title>\n<style>\n";
    // The style sheet: boxes nest like lstopo's (reports/html/report.css).
    page += html_page_style();
    page += "</style>\n</head>\n<body>\n";
    page += R"(<header><h1>stacksage: <span id="run-name"></span></h1><div class="cmd" id="run-cmd"></div><div class="counts" id="counts"></div></header>
<main>
<section id="nodes-section"><h2>Node groups</h2>
<div class="controls"><label>Group <select id="group-select"></select></label><label>Find a host <input id="host-find" type="search" placeholder="n0042"></label><span id="host-found" class="muted"></span></div>
<div class="muted">Nodes with the same findings are one group, worst first, under its hosts, drawn once from one of its nodes (the cell, coloured by its worst finding: green none, blue info, yellow warning, red error); click a cell to open its group.</div>
<div id="grid"></div></section>
<section id="topology-section"><h2 id="node-title"></h2>
<div class="controls"><label>Colour <select id="mode"><option value="allowed">flows allowed per PU</option><option value="cpu">CPU time per PU</option><option value="memory">memory accesses per level</option></select></label>
<select id="level" aria-label="memory level"></select><span id="hl-status" class="muted"></span></div>
<div id="legend"></div><div id="topo"></div></section>
<section id="findings-section"><h2>Findings</h2><div class="controls"><span class="muted">The selected group's findings, figures as ranges over its nodes, and the run's. Click one to highlight the PUs it concerns.</span><label><input id="all-findings" type="checkbox"> all groups</label><span id="findings-status" class="muted"></span></div><div id="findings"></div></section>
<section id="timeline-section"><h2>Timeline of the drawn node's flows, per runtime</h2><div class="muted">Top: the load over time, threads wanting each CPU (green up to one, orange to red above), and the busy threads; red shading: when CPUs were over-demanded. Bars: lifetimes, idle service threads light; black ticks: affinity changes. Hover for details. Times of one host only are comparable.</div><div id="timeline"></div></section>
<section id="tables-section"><h2>Processes and flows</h2>
<div class="controls"><label>Filter <input id="flow-filter" type="search" placeholder="host, rank, pid, runtime, name..."></label><label><input id="all-groups" type="checkbox"> every group's drawn node</label><span class="muted">the processes and flows of the drawn nodes, one per group</span></div>
<h3 class="muted">Flows <span id="flows-status"></span></h3><div class="tablewrap"><table id="flows"></table></div>
<h3 class="muted">Processes <span id="procs-status"></span></h3><div class="tablewrap"><table id="procs"></table></div></section>
<section id="code-section"><h2>Call sites and data objects</h2><div class="muted">Where the drawn node's sampled memory accesses were issued (the innermost frame in the program's own code; its callers in the call path) and which data they touched, per level that served them; first touches are page faults. Click a column to sort.</div>
<h3 class="muted">Call sites <span id="sites-status"></span> <span id="sites-left"></span></h3><div class="tablewrap"><table id="sites"></table></div>
<h3 class="muted">Data objects <span id="objects-status"></span></h3><div id="objects"></div></section>
<section id="notes-section"><h2>Input notes</h2><div id="notes"></div></section>
)";
    // Sections drawn here rather than by the script (the network's).
    page += extra_sections;
    page += R"(</main>
<div id="tip"></div>
<script type="application/json" id="stacksage-data">)";
    sink(page);
    page.clear();
    write_data_json(sink);
    // The renderer writes every string from the run through textContent,
    // createTextNode or setAttribute, never innerHTML (reports/html/report.js).
    page += "</script>\n<script>\n";
    page += html_page_script();
    page += "</script>\n</body>\n</html>\n";
    sink(page);
}

std::string html_page(const std::string& escaped_title, const std::string& data_json,
                      const std::string& extra_sections) {
    std::string page;
    page.reserve(data_json.size() + 40000);
    write_html_page(string_sink(page), escaped_title, [&](const TextSink& sink) { sink(data_json); }, extra_sections);
    return page;
}

}  // namespace stacksage
