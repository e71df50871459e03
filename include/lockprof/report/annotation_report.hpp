// The annotation listings of a sampled run, as the run prints them and `lockprof annotate`
// reprints them from a saved result.
#pragma once

#include <string>

#include "lockprof/analysis/attribution.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::report {

// Annotation listings of every sampled cell, after the attribution's warnings (top_functions
// 0: none), with each cell's `top_functions` hottest functions in `detail`. The short form
// (ListingDetail::hottest) shows each lock at its largest sampled thread count only, and says
// how many cells it left out.
std::string render_annotations(const workload::RunResult& run,
                               const analysis::Attribution& attribution, unsigned top_functions,
                               sampling::ListingDetail detail = sampling::ListingDetail::full);

}  // namespace lockprof::report
