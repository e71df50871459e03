// The run's human table and its CSV form.
#pragma once

#include <string>
#include <vector>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::report {

// Header (provenance and workload), one table per thread count, notes.
std::string render_table(const workload::RunResult& run,
                         const std::vector<analysis::CellSummary>& summaries);

// One row per cell; medians with min/max for throughput; one column per event.
std::string render_csv(const workload::RunResult& run,
                       const std::vector<analysis::CellSummary>& summaries);

}  // namespace lockprof::report
