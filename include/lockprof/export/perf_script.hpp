// Folding `perf script` text output into folded stacks (`lockprof fold`), so users' own perf
// recordings, with or without callchains (`perf record -g`), render as lockprof flamegraphs.
// Follows stackcollapse-perf.pl's conventions: process name as root frame, symbol offsets
// stripped, "[unknown]" symbols named after their module, kernel frames suffixed "_[k]".
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "lockprof/export/folded.hpp"

namespace lockprof::exporting {

struct PerfScriptOptions {
    enum class Root {
        comm,      // "postgres;main;..." (stackcollapse-perf's default)
        comm_pid,  // "postgres-1234;main;...": the id exactly as perf printed it (tid or pid/tid)
        none,      // "main;...": no process frame
    };
    Root root = Root::comm;
    // Weight each sample by its period (e.g. event counts when sampling every N events)
    // instead of 1. Samples without a period field weigh 1.
    bool weight_by_period = false;
    // Which event's samples to fold: "" = the first event seen (stackcollapse-perf's default,
    // mixing events would add incomparable units), "all" = every event, or an event name as
    // perf prints it without the trailing ':' and modifiers ("cpu-clock", "cycles").
    std::string event;
    // Add "_[k]" to kernel frames (module [kernel.*] / [vmlinux] or a kernel-half address).
    bool annotate_kernel = true;
    // Throw UsageError at the first unrecognised line instead of skipping it.
    bool strict = false;
};

struct PerfScriptReport {
    std::size_t lines = 0;
    std::size_t samples = 0;                // sample headers seen
    std::size_t folded = 0;                 // samples that went into the result
    std::size_t other_event = 0;            // samples left out because of their event
    std::size_t skipped = 0;                // unrecognised lines left out
    std::string event;                      // the event folded ("" if none, "all" for all)
    std::vector<std::string> other_events;  // names of the events left out, sorted
    std::vector<std::string> problems;      // "file:line: why", capped at kMaxReportedProblems
};

// Folds `perf script` text. Unrecognised lines are skipped and reported (options.strict: the
// first throws UsageError); input with unrecognised lines and not one sample throws UsageError.
FoldedStacks fold_perf_script(std::istream& in, const std::string& filename,
                              const PerfScriptOptions& options, PerfScriptReport& report);

}  // namespace lockprof::exporting
