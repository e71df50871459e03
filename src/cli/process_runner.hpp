// `lockprof run --processes N`: the sweep in N fresh processes of lockprof itself, so lock
// placement, page colouring and scheduling differ between them, and the verdicts can resample
// over processes (docs/reports.md, "Trials in several processes").
#pragma once

#include <string>
#include <vector>

#include "lockprof/workload/results.hpp"

namespace lockprof::cli {

// The hidden options a child is started with: where it writes its result (the JSON result
// format, docs/result-schema.md) instead of any output, and which process it is.
inline constexpr const char* kChildResultOption = "child-result";

// Runs `lockprof run ARGS --child-result FILE` `processes` times, one after the other (one at a
// time, so they do not compete for the CPUs), and merges their results into `run`: the first
// child's configuration and calibration, every child's trials of each cell in turn, numbered
// on (trial p * trials + t, `process` p), notes once each. SIGINT/SIGTERM while a child runs is
// passed on to it; its finished trials are kept and no further child starts (run.interrupted).
// A child that stalls (exit 3) ends the run as a stall would (StallError, `run` then holds what
// finished); one that fails otherwise is an Error naming it. Provenance stays `run`'s.
void run_in_processes(const std::vector<std::string>& args, unsigned processes,
                      workload::RunResult& run);

}  // namespace lockprof::cli
