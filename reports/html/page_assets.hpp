// The HTML page's style sheet and script, as written in reports/html/report.css
// and reports/html/report.js: the build embeds them (embed_assets.cmake), so
// the page needs no file besides itself.
#pragma once

#include <string_view>

namespace stacksage {

// \return the text of report.css, byte for byte.
std::string_view html_page_style();

// \return the text of report.js, byte for byte.
std::string_view html_page_script();

}  // namespace stacksage
