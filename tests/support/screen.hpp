// How much of a terminal a text takes: the brief output's one-screen budget is checked against
// this, by the unit tests of the renderers and by the CLI tests of the real binary alike.
#pragma once

#include <cstddef>
#include <sstream>
#include <string>

namespace lockprof::test {

// Lines as a terminal `columns` wide shows them: a longer line takes more than one, an empty
// line one. UTF-8: only lead bytes count as columns (the band's "±" is one).
inline int screen_lines(const std::string& text, std::size_t columns = 100) {
    int lines = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::size_t characters = 0;
        for (unsigned char c : line) characters += (c & 0xC0) != 0x80;
        lines += characters == 0 ? 1 : static_cast<int>((characters + columns - 1) / columns);
    }
    return lines;
}

}  // namespace lockprof::test
