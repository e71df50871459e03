// UTF-8 validation shared by the folded parser and the SVG writer: invalid bytes must never
// reach XML, where they make the whole document unreadable.
#pragma once

#include <cstddef>
#include <string_view>

namespace lockprof::exporting {

// Length (1-4) of the valid UTF-8 sequence at the start of `s`, 0 if it is not valid
// (overlong forms, surrogates and code points above U+10FFFF are invalid). `s` must not be empty.
std::size_t utf8_sequence_length(std::string_view s);

// Index of the first byte that is not part of valid UTF-8, npos if all of `s` is valid.
std::size_t first_invalid_utf8(std::string_view s);

}  // namespace lockprof::exporting
