// Recorded file mappings handed to libdwfl, shared by the symbol resolver and the unwinder so
// both lay out a process's modules the same way. Private to symbols/.
#pragma once

#include <elfutils/libdwfl.h>

#include <vector>

#include "lockprof/measure/data.hpp"

namespace lockprof::symbols {

// Reports `modules` to `dwfl` as a /proc/PID/maps listing: libdwfl already knows how to lay
// out modules from one (segments, bias). It joins consecutive lines with the same inode into
// one module, so each file gets its own made-up inode. The vDSO has no file and is left out.
void report_mappings(Dwfl* dwfl, const std::vector<measure::MappedModule>& modules);

}  // namespace lockprof::symbols
