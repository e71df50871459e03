// Runs a plan: a verification trial of every cell, then every measured trial of every cell,
// interleaving locks within a thread count so slow drift of the machine affects all locks alike.
//
// The verification trial runs the loop with the exclusion check on every acquire
// (LoopKernel::verify_loop) and no instruments; it finds a lock that lets two holders in, fills
// CellResult::verification, and warms the cell up. The measured trials then run the loop
// without the check, as the lock's users would (workload/loop.hpp).
//
// The observer-effect check (RunSpec::perturbation_check, with instruments in the RunControl):
// each measured trial gets a plain twin, the same trial spec (placement, seed, length) run
// without instruments in the same process, before it on odd trials and after it on even ones,
// into CellResult::plain_trials. The twins double the measured trials' time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lockprof/workload/plan.hpp"
#include "lockprof/workload/results.hpp"
#include "lockprof/workload/trial.hpp"

namespace lockprof::workload {

// A verification trial lasts as long as a measured one, or --warmup, but at most this long
// without --warmup.
inline constexpr std::uint64_t kVerificationCapNs = 200'000'000;
// How SweepHooks::progress names a verification trial: "checking exclusion: tas with 2 threads".
inline constexpr const char* kVerifyingPrefix = "checking exclusion:";

struct SweepHooks {
    // Called before each trial with a one-line description ("tas with 4 threads, trial 2/3";
    // a verification or warm-up trial starts with kVerifyingPrefix or "warm-up").
    std::function<void(const std::string&)> progress;
    // `--trials auto` (RunSpec::max_time_ns): whether a cell's trials so far are enough. The
    // caller judges (cli passes analysis::throughput_precision); the sweep knows no statistics.
    // Unset: no cell ever settles, each runs until the budget is spent.
    std::function<bool(const CellResult&)> settled;
};

// The schedule of `--trials auto`, apart from what a trial is, so tests can drive it with
// synthetic trials. Rounds over the cells in order, each round one trial of every cell still
// running: the budget is spent round-robin, so every cell that needs more trials gets them at
// the same rate. A cell stops, before a trial beyond its first `min_trials`, when `settled(i)`
// says so (TrialStop::settled) or when `elapsed_ns()` has reached `budget_ns`
// (TrialStop::budget). The first `min_trials` always run. `run_one(i)` runs one trial of cell
// i and returns false when the sweep was interrupted: every cell not yet stopped is then
// TrialStop::interrupted. Returns each cell's reason.
struct AdaptiveSchedule {
    std::size_t cells = 0;
    unsigned min_trials = 3;
    std::uint64_t budget_ns = 0;
    std::function<std::uint64_t()> elapsed_ns;
    std::function<bool(std::size_t)> settled;
    std::function<bool(std::size_t)> run_one;
};
std::vector<TrialStop> run_adaptive(const AdaptiveSchedule& schedule);

// Runs all cells: spec.trials of each, or with spec.max_time_ns the adaptive schedule above
// (`hooks.settled` decides). On interrupt (control.interrupted set) stops, keeps finished trials
// and returns with result.interrupted set. A StallError propagates; `partial` (if given) then holds
// what had finished so the caller can still write it.
RunResult run_sweep(const Plan& plan, RunControl& control, const SweepHooks& hooks,
                    RunResult* partial = nullptr);

}  // namespace lockprof::workload
