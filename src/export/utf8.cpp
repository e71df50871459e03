#include "lockprof/export/utf8.hpp"

namespace lockprof::exporting {

std::size_t utf8_sequence_length(std::string_view s) {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const auto c0 = b(0);
    if (c0 < 0x80) return 1;
    std::size_t n;
    unsigned min_second = 0x80, max_second = 0xbf;
    if (c0 >= 0xc2 && c0 <= 0xdf) {
        n = 2;
    } else if (c0 >= 0xe0 && c0 <= 0xef) {
        n = 3;
        if (c0 == 0xe0) min_second = 0xa0;  // overlong
        if (c0 == 0xed) max_second = 0x9f;  // UTF-16 surrogates
    } else if (c0 >= 0xf0 && c0 <= 0xf4) {
        n = 4;
        if (c0 == 0xf0) min_second = 0x90;  // overlong
        if (c0 == 0xf4) max_second = 0x8f;  // above U+10FFFF
    } else {
        return 0;
    }
    if (s.size() < n) return 0;
    if (b(1) < min_second || b(1) > max_second) return 0;
    for (std::size_t i = 2; i < n; ++i)
        if (b(i) < 0x80 || b(i) > 0xbf) return 0;
    return n;
}

std::size_t first_invalid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const auto n = utf8_sequence_length(s.substr(i));
        if (n == 0) return i;
        i += n;
    }
    return std::string_view::npos;
}

}  // namespace lockprof::exporting
