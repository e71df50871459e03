#include "lockprof/export/xml.hpp"

#include "lockprof/export/utf8.hpp"

namespace lockprof::exporting {

void escape_xml(std::string& out, std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            const auto n = utf8_sequence_length(s.substr(i));
            if (n == 0) {
                out += "\xEF\xBF\xBD";
                ++i;
            } else {
                out.append(s.substr(i, n));
                i += n;
            }
            continue;
        }
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                if (c < 0x20 && c != '\t')
                    out += "\xEF\xBF\xBD";
                else
                    out += static_cast<char>(c);
        }
        ++i;
    }
}

std::string escape_xml(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    escape_xml(out, s);
    return out;
}

}  // namespace lockprof::exporting
