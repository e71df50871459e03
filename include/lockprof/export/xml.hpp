// XML text escaping for every SVG and HTML lockprof writes (flamegraphs, plots, reports).
#pragma once

#include <string>
#include <string_view>

namespace lockprof::exporting {

// Appends `s` to `out`, XML-escaped (& < > " '). Bytes that are not valid UTF-8 and control
// characters other than tab (not allowed in XML 1.0) become U+FFFD, so the document always
// parses whatever text it was given (symbol names, file names, users' folded files).
void escape_xml(std::string& out, std::string_view s);
std::string escape_xml(std::string_view s);

}  // namespace lockprof::exporting
