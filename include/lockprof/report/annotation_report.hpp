// The annotation listings of a sampled run, as the run prints them and `lockprof annotate`
// reprints them from a saved result.
#pragma once

#include <string>

#include "lockprof/analysis/attribution.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::report {

// Annotation listings of every sampled cell, after the attribution's warnings (top_functions
// 0: none).
std::string render_annotations(const workload::RunResult& run,
                               const analysis::Attribution& attribution, unsigned top_functions);

}  // namespace lockprof::report
