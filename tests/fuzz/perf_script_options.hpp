// The options of `lockprof fold` from one byte, for the targets that fold (perf script text,
// perf.data): root frame, weight, kernel suffix, which event, strict.
#pragma once

#include <cstdint>

#include "lockprof/export/perf_script.hpp"

namespace lockprof::fuzz {

// `event` is the name the 0x20 bit picks (an event the seeds have).
inline exporting::PerfScriptOptions perf_script_options(std::uint8_t flags, const char* event) {
    exporting::PerfScriptOptions options;
    options.root = flags % 3 == 0   ? exporting::PerfScriptOptions::Root::comm
                   : flags % 3 == 1 ? exporting::PerfScriptOptions::Root::comm_pid
                                    : exporting::PerfScriptOptions::Root::none;
    options.weight_by_period = flags & 0x4;
    options.annotate_kernel = flags & 0x8;
    options.event = (flags & 0x30) == 0x10 ? "all" : (flags & 0x30) == 0x20 ? event : "";
    options.strict = flags & 0x40;
    return options;
}

}  // namespace lockprof::fuzz
