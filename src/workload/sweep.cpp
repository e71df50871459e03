#include "lockprof/workload/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/number_format.hpp"

namespace lockprof::workload {

std::vector<TrialStop> run_adaptive(const AdaptiveSchedule& schedule) {
    std::vector<std::optional<TrialStop>> stop(schedule.cells);
    std::vector<unsigned> done(schedule.cells, 0);
    bool running = true;
    while (running) {
        running = false;
        for (std::size_t i = 0; i < schedule.cells; ++i) {
            if (stop[i]) continue;
            if (done[i] >= schedule.min_trials) {
                if (schedule.settled && schedule.settled(i)) {
                    stop[i] = TrialStop::settled;
                    continue;
                }
                if (schedule.elapsed_ns() >= schedule.budget_ns) {
                    stop[i] = TrialStop::budget;
                    continue;
                }
            }
            if (!schedule.run_one(i)) {
                for (auto& s : stop)
                    if (!s) s = TrialStop::interrupted;
                break;
            }
            ++done[i];
            running = true;
        }
    }
    std::vector<TrialStop> out;
    for (const auto& s : stop) out.push_back(s.value_or(TrialStop::interrupted));
    return out;
}

namespace {

// What every trial adds to its cell besides its figures: the notes of what it could not
// measure (once per run) and the exclusion failures it saw.
void keep_outcome_notes(const TrialOutcome& outcome, CellResult& cell, RunResult& run) {
    const auto note_once = [&run](std::string note) {
        if (std::find(run.notes.begin(), run.notes.end(), note) == run.notes.end())
            run.notes.push_back(std::move(note));
    };
    if (!outcome.physical_address_unknown.empty())
        note_once(
            "--lock-page huge: the physical address of the lock's huge page is not recorded: " +
            outcome.physical_address_unknown);
    if (!outcome.steal_unknown.empty())
        note_once("hypervisor steal is unknown: " + outcome.steal_unknown +
                  "; spread a busy host causes cannot be told from the locks' own here, so "
                  "repeat the run before trusting a difference");
    cell.overlaps += outcome.overlaps;
    cell.lost_updates += outcome.lost_updates;
}

// The plain twin of trial `trial` (RunSpec::perturbation_check): the same spec, no instruments.
// False when interrupted.
bool run_plain_trial(const Plan& plan, std::size_t i, unsigned trial, RunControl& control,
                     const SweepHooks& hooks, RunResult& run, const std::string& of) {
    const PlannedCell& cell = plan.cells[i];
    if (hooks.progress)
        hooks.progress(fmt::format("{} with {}, trial {}{} without instruments", cell.lock->name,
                                   threads_text(cell.threads), trial + 1, of));
    RunControl quiet;
    quiet.interrupted = control.interrupted;
    TrialOutcome outcome = run_trial(*cell.lock, plan.trial_spec(cell, trial), quiet);
    if (outcome.interrupted) return false;
    outcome.result.trial = trial;
    keep_outcome_notes(outcome, run.cells[i], run);
    run.cells[i].plain_trials.push_back(std::move(outcome.result));
    return true;
}

// One trial of `plan.cells[i]` into run.cells[i] (and its plain twin with the observer-effect
// check, before it on odd trials and after it on even ones, so neither always runs on a
// machine the other warmed); false when interrupted.
bool run_one_trial(const Plan& plan, std::size_t i, unsigned trial, RunControl& control,
                   const SweepHooks& hooks, RunResult& run, const std::string& of) {
    const PlannedCell& cell = plan.cells[i];
    const bool twin = plan.spec.perturbation_check && !control.instruments.empty();
    if (twin && trial % 2 == 1 && !run_plain_trial(plan, i, trial, control, hooks, run, of))
        return false;
    if (hooks.progress)
        hooks.progress(fmt::format("{} with {}, trial {}{}", cell.lock->name,
                                   threads_text(cell.threads), trial + 1, of));
    TrialOutcome outcome = run_trial(*cell.lock, plan.trial_spec(cell, trial), control);
    if (outcome.interrupted) return false;
    outcome.result.trial = trial;
    keep_outcome_notes(outcome, run.cells[i], run);
    run.cells[i].trials.push_back(std::move(outcome.result));
    if (!plan.spec.max_time_ns) {  // kept up to date: a StallError leaves the run as it stands
        run.cells[i].complete = run.cells[i].trials.size() == plan.spec.trials;
        run.cells[i].stop = run.cells[i].complete ? TrialStop::planned : TrialStop::interrupted;
    }
    return !(twin && trial % 2 == 0) || run_plain_trial(plan, i, trial, control, hooks, run, of);
}

// Every cell's verification trial, before any measured trial (sweep.hpp). Also the warm-up:
// --warmup sets its length; without it, the length of a measured trial up to
// kVerificationCapNs. A lock that claims no exclusion gets a plain warm-up, and only with
// --warmup.
void verify_cells(const Plan& plan, RunControl& control, const SweepHooks& hooks, RunResult& run) {
    for (std::size_t i = 0; i < plan.cells.size(); ++i) {
        if (control.interrupted && control.interrupted->load()) return;
        const PlannedCell& cell = plan.cells[i];
        const bool verify = cell.lock->excludes;
        if (!verify && plan.spec.warmup_ns == 0) continue;
        TrialSpec spec = plan.trial_spec(cell, 0);
        spec.verify = verify;
        if (plan.spec.warmup_ns > 0) {
            spec.duration_ns = plan.spec.warmup_ns;
            spec.acquires_per_thread.reset();
        } else {
            spec.duration_ns =
                std::min(spec.duration_ns.value_or(kVerificationCapNs), kVerificationCapNs);
        }
        if (hooks.progress)
            hooks.progress(fmt::format("{} {} with {}", verify ? kVerifyingPrefix : "warm-up",
                                       cell.lock->name, threads_text(cell.threads)));
        RunControl quiet;  // no instruments: this trial is not measured
        quiet.interrupted = control.interrupted;
        const TrialOutcome outcome = run_trial(*cell.lock, spec, quiet);
        if (outcome.interrupted || !verify) continue;
        Verification v;
        v.trials = 1;
        for (const auto& thread : outcome.result.threads) v.acquires += thread.acquires;
        v.wall_ns = outcome.result.wall_ns;
        v.overlaps = outcome.overlaps;
        v.lost_updates = outcome.lost_updates;
        CellResult& result = run.cells[i];
        result.verification = v;
        result.overlaps += v.overlaps;
        result.lost_updates += v.lost_updates;
    }
}

}  // namespace

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
        result.stop = TrialStop::interrupted;  // until the sweep says otherwise
        run.cells.push_back(result);
    }
    const auto started = std::chrono::steady_clock::now();  // --max-time counts from here
    auto interrupted = [&] { return control.interrupted && control.interrupted->load(); };

    verify_cells(plan, control, hooks, run);

    if (plan.spec.max_time_ns) {
        // --trials auto: rounds over all cells until each is settled or the budget is spent.
        AdaptiveSchedule schedule;
        schedule.cells = plan.cells.size();
        schedule.min_trials = plan.spec.trials;
        schedule.budget_ns = *plan.spec.max_time_ns;
        schedule.elapsed_ns = [&] {
            return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                  std::chrono::steady_clock::now() - started)
                                                  .count());
        };
        if (hooks.settled)
            schedule.settled = [&](std::size_t i) { return hooks.settled(run.cells[i]); };
        schedule.run_one = [&](std::size_t i) {
            if (interrupted()) return false;
            const auto trial = static_cast<unsigned>(run.cells[i].trials.size());
            return run_one_trial(plan, i, trial, control, hooks, run, " (auto)");
        };
        const auto stops = run_adaptive(schedule);
        for (std::size_t i = 0; i < stops.size(); ++i) {
            run.cells[i].stop = stops[i];
            run.cells[i].complete = stops[i] != TrialStop::interrupted;
        }
    } else {
        // Cells of one thread count are contiguous in the plan; run their trials interleaved.
        const std::string of = fmt::format("/{}", plan.spec.trials);
        std::size_t group_start = 0;
        bool stopped = false;
        while (group_start < plan.cells.size() && !stopped && !interrupted()) {
            std::size_t group_end = group_start;
            while (group_end < plan.cells.size() &&
                   plan.cells[group_end].threads == plan.cells[group_start].threads)
                ++group_end;
            for (unsigned trial = 0; trial < plan.spec.trials && !stopped; ++trial)
                for (std::size_t i = group_start; i < group_end && !stopped; ++i)
                    stopped =
                        interrupted() || !run_one_trial(plan, i, trial, control, hooks, run, of);
            group_start = group_end;
        }
    }
    run.interrupted = interrupted();
    for (const auto& cell : run.cells)
        if (cell.overlaps > 0 || cell.lost_updates > 0)
            run.notes.push_back(fmt::format(
                "MUTUAL EXCLUSION FAILED: lock '{}' with {} let a second holder in at "
                "{} acquires and lost {} critical-section updates; its figures are meaningless",
                cell.lock, threads_text(cell.threads), cell.overlaps, cell.lost_updates));
    if (plan.spec.work.read_fraction > 0) {
        std::vector<std::string> exclusive;
        for (const auto& cell : plan.cells)
            if (!cell.lock->shared &&
                std::find(exclusive.begin(), exclusive.end(), cell.lock->name) == exclusive.end())
                exclusive.push_back(cell.lock->name);
        if (!exclusive.empty())
            run.notes.push_back(fmt::format(
                "--read-fraction {}: {} {} no shared mode and took every acquire exclusive; "
                "only reader-writer locks (`lockprof list-locks`: \"shared mode\") take "
                "acquires shared",
                plan.spec.work.read_fraction, fmt::join(exclusive, ", "),
                exclusive.size() == 1 ? "has" : "have"));
    }
    return partial ? *partial : local;
}

}  // namespace lockprof::workload
