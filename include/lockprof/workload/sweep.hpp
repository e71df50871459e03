// Runs a plan: warm-up, then every trial of every cell, interleaving locks within a thread count
// so slow drift of the machine affects all locks alike.
#pragma once

#include <functional>
#include <string>

#include "lockprof/workload/plan.hpp"
#include "lockprof/workload/results.hpp"
#include "lockprof/workload/trial.hpp"

namespace lockprof::workload {

struct SweepHooks {
    // Called before each trial with a one-line description ("tas 4 threads, trial 2/3").
    std::function<void(const std::string&)> progress;
};

// Runs all cells. On interrupt (control.interrupted set) stops, keeps finished trials and
// returns with result.interrupted set. A StallError propagates; `partial` (if given) then
// holds what had finished so the caller can still write it.
RunResult run_sweep(const Plan& plan, RunControl& control, const SweepHooks& hooks,
                    RunResult* partial = nullptr);

}  // namespace lockprof::workload
