// Metrics derived from pairs of counted events: instructions per cycle, and the share of
// store-exclusives that failed (the LL/SC retry rate that separates TAS from CAS on ARMv8.0).
// Computed per trial from the threads' scaled sums, then summarised over trials.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lockprof/analysis/stats.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::analysis {

struct DerivedMetric {
    std::string name;      // "ipc", "stxr_fail_ratio"
    std::string label;     // column heading: "IPC", "stxr fail%"
    bool percent = false;  // shown as a percentage in the table
    Spread value;          // over the trials where both inputs were counted
};

// Present only when both inputs were counted (aliases: cycles + instructions, stxr_fail +
// stxr_pass) in at least one trial.
std::vector<DerivedMetric> derived_metrics(const workload::CellResult& cell);

// Per-trial helpers, exposed for tests: nullopt when an input was not counted or is zero.
std::optional<double> instructions_per_cycle(std::optional<double> instructions,
                                             std::optional<double> cycles);
std::optional<double> failure_ratio(std::optional<double> failed, std::optional<double> passed);

}  // namespace lockprof::analysis
