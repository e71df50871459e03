#include "lockprof/workload/sweep.hpp"

#include <fmt/format.h>

#include "lockprof/common/error.hpp"

namespace lockprof::workload {

RunResult run_sweep(const Plan& plan, RunControl& control, const SweepHooks& hooks,
                    RunResult* partial) {
    RunResult local;
    RunResult& run = partial ? *partial : local;
    run.spec = plan.spec;
    run.calibration = plan.calibration;
    for (const auto& cell : plan.cells) {
        CellResult result;
        result.lock = cell.lock->name;
        result.algorithm = cell.lock->algorithm;
        result.flavour = cell.lock->flavour;
        result.delay = cell.delay;
        result.threads = cell.threads;
        result.complete = false;
        run.cells.push_back(result);
    }
    auto interrupted = [&] { return control.interrupted && control.interrupted->load(); };

    if (plan.spec.warmup_ns > 0) {
        for (const auto& cell : plan.cells) {
            if (interrupted()) break;
            if (hooks.progress)
                hooks.progress(
                    fmt::format("warm-up {} with {} threads", cell.lock->name, cell.threads));
            TrialSpec warm = plan.trial_spec(cell, 0);
            warm.duration_ns = plan.spec.warmup_ns;
            warm.acquires_per_thread.reset();
            RunControl quiet;  // no instruments during warm-up
            quiet.interrupted = control.interrupted;
            run_trial(*cell.lock, warm, quiet);
        }
    }

    // Cells of one thread count are contiguous in the plan; run their trials interleaved.
    std::size_t group_start = 0;
    while (group_start < plan.cells.size() && !interrupted()) {
        std::size_t group_end = group_start;
        while (group_end < plan.cells.size() &&
               plan.cells[group_end].threads == plan.cells[group_start].threads)
            ++group_end;
        for (unsigned trial = 0; trial < plan.spec.trials && !interrupted(); ++trial) {
            for (std::size_t i = group_start; i < group_end && !interrupted(); ++i) {
                const PlannedCell& cell = plan.cells[i];
                if (hooks.progress)
                    hooks.progress(fmt::format("{} with {} threads, trial {}/{}", cell.lock->name,
                                               cell.threads, trial + 1, plan.spec.trials));
                TrialOutcome outcome = run_trial(*cell.lock, plan.trial_spec(cell, trial), control);
                if (outcome.interrupted) break;
                outcome.result.trial = trial;
                run.cells[i].trials.push_back(std::move(outcome.result));
                run.cells[i].overlaps += outcome.overlaps;
                run.cells[i].lost_updates += outcome.lost_updates;
                run.cells[i].complete = run.cells[i].trials.size() == plan.spec.trials;
            }
        }
        group_start = group_end;
    }
    run.interrupted = interrupted();
    for (const auto& cell : run.cells)
        if (cell.overlaps > 0 || cell.lost_updates > 0)
            run.notes.push_back(fmt::format(
                "MUTUAL EXCLUSION FAILED: lock '{}' with {} threads let a second holder in at "
                "{} acquires and lost {} critical-section updates; its figures are meaningless",
                cell.lock, cell.threads, cell.overlaps, cell.lost_updates));
    return partial ? *partial : local;
}

}  // namespace lockprof::workload
