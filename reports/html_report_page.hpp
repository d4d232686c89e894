// The page around the data: the markup, with the CSS and the JavaScript that
// renders it inlined (reports/html/report.css and report.js, embedded at
// build time). Kept apart from the data builder so the page reads as one piece.
#pragma once

#include <string>

namespace stacksage {

// escaped_title: HTML-escaped already; data_json: from json_for_script_block.
std::string html_page(const std::string& escaped_title, const std::string& data_json);

}  // namespace stacksage
