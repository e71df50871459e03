// Small rules perf applies when it picks one of several symbols, shared by the kallsyms reader
// and the ELF symbol resolver (both follow tools/perf/util/symbol.c).
#pragma once

#include <cstddef>
#include <string_view>

namespace lockprof::symbols::perf_rules {

// How many '_' a name starts with: perf prefers the alias with fewer ("mmap64" over
// "__mmap64").
inline std::size_t leading_underscores(std::string_view name) {
    std::size_t n = 0;
    while (n < name.size() && name[n] == '_') ++n;
    return n;
}

}  // namespace lockprof::symbols::perf_rules
