// The annotation listings of a sampled run, as the run prints them and `lockprof annotate`
// reprints them from a saved result.
#pragma once

#include <string>

#include "lockprof/attribution/run_attribution.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::report {

// Annotation listings of every sampled cell, after the attribution's warnings (top_functions
// 0: none), with each cell's `top_functions` hottest functions in `detail`. The short form
// (ListingDetail::hottest) shows each lock at its largest sampled thread count only, and says
// how many cells it left out.
std::string render_annotations(
    const workload::RunResult& run, const attribution::RunAttribution& attribution,
    unsigned top_functions, attribution::ListingDetail detail = attribution::ListingDetail::full);

}  // namespace lockprof::report
