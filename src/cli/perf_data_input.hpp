// perf.data as an input of `fold`, `flamegraph` and `convert`: recognised by its magic, folded
// by perfdata::fold(), and the fold's warnings printed as `lockprof fold` prints them.
#pragma once

#include <string>

#include "lockprof/export/folded.hpp"
#include "lockprof/export/perf_script.hpp"

namespace lockprof::cli {

// True when the file at `path` starts with perf.data's magic (false when it cannot be read:
// the caller's own open reports that).
bool is_perf_data_file(const std::string& path);

// Prints what folding `name` left out or could not read: the first problems, skipped lines or
// records, samples of other events; UsageError when --event named an event it does not have.
void print_fold_report(const exporting::PerfScriptReport& report, const std::string& name,
                       const std::string& event_option, bool perf_data);

// Folds the perf.data file at `path` and prints its report.
exporting::FoldedStacks fold_perf_data_file(const std::string& path,
                                            const exporting::PerfScriptOptions& options);

}  // namespace lockprof::cli
