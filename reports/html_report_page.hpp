// The page around the data: the markup, with the CSS and the JavaScript that
// renders it inlined (reports/html/report.css and report.js, embedded at
// build time). Kept apart from the data builder so the page reads as one piece.
#pragma once

#include <functional>
#include <string>

#include "reports/json_stream.hpp"

namespace stacksage {

// The page written in pieces through sink; write_data_json writes the data
// (made safe for a script block) where the page embeds it.
void write_html_page(const TextSink& sink, const std::string& escaped_title,
                     const std::function<void(const TextSink&)>& write_data_json,
                     const std::string& extra_sections = {});

// escaped_title: HTML-escaped already; data_json: from json_for_script_block.
// extra_sections: HTML drawn by the server (escaped), placed after the others.
std::string html_page(const std::string& escaped_title, const std::string& data_json,
                      const std::string& extra_sections = {});

}  // namespace stacksage
