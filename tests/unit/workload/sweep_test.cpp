// run_sweep() on a small real plan (tas and ticket, 1 and 2 threads, short acquire counts): the
// order it runs trials in, what each cell keeps, warm-up, and an interrupt part-way.
#include "lockprof/workload/sweep.hpp"

#include <atomic>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/workload/plan.hpp"

namespace lockprof::workload {
namespace {

RunSpec small_sweep() {
    RunSpec spec;
    spec.locks = {"tas", "ticket"};
    spec.threads = {1, 2};
    spec.acquires_per_thread = 200;
    spec.trials = 2;
    return spec;
}

Plan plan_of(const RunSpec& spec) {
    return make_plan(spec, Calibration{1.0, 1.0});
}

TEST(Sweep, InterleavesLocksWithinAThreadCountAndKeepsEveryTrial) {
    const Plan plan = plan_of(small_sweep());
    std::vector<std::string> progress;
    SweepHooks hooks;
    hooks.progress = [&](const std::string& line) { progress.push_back(line); };
    RunControl control;
    const RunResult run = run_sweep(plan, control, hooks);
    EXPECT_EQ(progress, (std::vector<std::string>{
                            "tas with 1 threads, trial 1/2",
                            "ticket with 1 threads, trial 1/2",
                            "tas with 1 threads, trial 2/2",
                            "ticket with 1 threads, trial 2/2",
                            "tas with 2 threads, trial 1/2",
                            "ticket with 2 threads, trial 1/2",
                            "tas with 2 threads, trial 2/2",
                            "ticket with 2 threads, trial 2/2",
                        }));
    EXPECT_FALSE(run.interrupted);
    EXPECT_TRUE(run.notes.empty());
    ASSERT_EQ(run.cells.size(), 4u);
    EXPECT_EQ(run.cells[0].lock, "tas");
    EXPECT_EQ(run.cells[1].lock, "ticket");
    EXPECT_EQ(run.cells[2].threads, 2u);
    for (const auto& cell : run.cells) {
        EXPECT_TRUE(cell.complete) << cell.lock;
        ASSERT_EQ(cell.trials.size(), 2u) << cell.lock;
        EXPECT_EQ(cell.trials[0].trial, 0u);
        EXPECT_EQ(cell.trials[1].trial, 1u);
        EXPECT_EQ(cell.trials[1].threads.size(), cell.threads);
        for (const auto& t : cell.trials[1].threads) EXPECT_EQ(t.acquires, 200u) << cell.lock;
        EXPECT_EQ(cell.overlaps, 0u);
        EXPECT_EQ(cell.lost_updates, 0u);
    }
    EXPECT_EQ(run.spec.trials, 2u);
}

TEST(Sweep, WarmsUpEveryCellFirst) {
    RunSpec spec = small_sweep();
    spec.trials = 1;
    spec.threads = {1};
    spec.warmup_ns = 1'000'000;
    std::vector<std::string> progress;
    SweepHooks hooks;
    hooks.progress = [&](const std::string& line) { progress.push_back(line); };
    RunControl control;
    const RunResult run = run_sweep(plan_of(spec), control, hooks);
    EXPECT_EQ(progress, (std::vector<std::string>{
                            "warm-up tas with 1 threads",
                            "warm-up ticket with 1 threads",
                            "tas with 1 threads, trial 1/1",
                            "ticket with 1 threads, trial 1/1",
                        }));
    // Warm-up trials are not kept.
    for (const auto& cell : run.cells) EXPECT_EQ(cell.trials.size(), 1u);
}

TEST(Sweep, InterruptKeepsFinishedTrialsAndMarksCellsIncomplete) {
    // Trials that run until stopped: one of 200 acquires can finish before the trial's
    // watcher sees the interrupt, and is then (rightly) kept.
    RunSpec spec = small_sweep();
    spec.acquires_per_thread.reset();
    spec.duration_ns = 100'000'000;
    const Plan plan = plan_of(spec);
    std::atomic<bool> interrupted{false};
    RunControl control;
    control.interrupted = &interrupted;
    unsigned calls = 0;
    SweepHooks hooks;
    // Interrupt as the third trial starts: it stops early and is dropped.
    hooks.progress = [&](const std::string&) {
        if (++calls == 3) interrupted = true;
    };
    RunResult partial;
    const RunResult run = run_sweep(plan, control, hooks, &partial);
    EXPECT_TRUE(run.interrupted);
    EXPECT_EQ(calls, 3u);
    ASSERT_EQ(run.cells.size(), 4u);
    EXPECT_EQ(run.cells[0].trials.size(), 1u);
    EXPECT_EQ(run.cells[1].trials.size(), 1u);
    EXPECT_EQ(run.cells[2].trials.size(), 0u);
    for (const auto& cell : run.cells) EXPECT_FALSE(cell.complete) << cell.lock;
    // `partial` is the result the sweep filled in.
    EXPECT_EQ(partial.cells.size(), 4u);
    EXPECT_TRUE(partial.interrupted);
}

TEST(Sweep, AutoTrialsRunTheMinimumThenStopSettledCells) {
    RunSpec spec = small_sweep();
    spec.trials = 3;
    spec.threads = {1};
    spec.max_time_ns = 3'600'000'000'000;  // an hour: only the hook stops them
    std::vector<std::string> progress;
    SweepHooks hooks;
    hooks.progress = [&](const std::string& line) { progress.push_back(line); };
    hooks.settled = [](const CellResult& cell) { return cell.trials.size() >= 3; };
    RunControl control;
    const RunResult run = run_sweep(plan_of(spec), control, hooks);
    EXPECT_EQ(progress, (std::vector<std::string>{
                            "tas with 1 threads, trial 1 (auto)",
                            "ticket with 1 threads, trial 1 (auto)",
                            "tas with 1 threads, trial 2 (auto)",
                            "ticket with 1 threads, trial 2 (auto)",
                            "tas with 1 threads, trial 3 (auto)",
                            "ticket with 1 threads, trial 3 (auto)",
                        }));
    for (const auto& cell : run.cells) {
        EXPECT_EQ(cell.stop, TrialStop::settled) << cell.lock;
        EXPECT_TRUE(cell.complete);
        ASSERT_EQ(cell.trials.size(), 3u);
        EXPECT_EQ(cell.trials[2].trial, 2u);
    }
}

TEST(Sweep, AutoTrialsStopAtTheBudgetButNeverBelowTheMinimum) {
    RunSpec spec = small_sweep();
    spec.trials = 3;
    spec.max_time_ns = 1;  // spent before the first trial ends
    RunControl control;
    const RunResult run = run_sweep(plan_of(spec), control, SweepHooks{});  // never settles
    for (const auto& cell : run.cells) {
        EXPECT_EQ(cell.stop, TrialStop::budget) << cell.lock;
        EXPECT_TRUE(cell.complete);
        EXPECT_EQ(cell.trials.size(), 3u);
    }
}

TEST(Sweep, FixedTrialsSayPlanned) {
    RunControl control;
    const RunResult run = run_sweep(plan_of(small_sweep()), control, SweepHooks{});
    for (const auto& cell : run.cells) EXPECT_EQ(cell.stop, TrialStop::planned) << cell.lock;
}

TEST(AdaptiveSchedule, RoundRobinUntilSettledOrOutOfBudget) {
    // Cell 0 settles after 4 trials, cell 1 never; each trial "takes" 100 ms of a 1 s budget.
    std::vector<unsigned> trials(2, 0);
    std::vector<std::size_t> order;
    std::uint64_t clock = 0;
    AdaptiveSchedule schedule;
    schedule.cells = 2;
    schedule.min_trials = 3;
    schedule.budget_ns = 1'000'000'000;
    schedule.elapsed_ns = [&] { return clock; };
    schedule.settled = [&](std::size_t i) { return i == 0 && trials[0] >= 4; };
    schedule.run_one = [&](std::size_t i) {
        order.push_back(i);
        ++trials[i];
        clock += 100'000'000;
        return true;
    };
    const auto stops = run_adaptive(schedule);
    EXPECT_EQ(stops, (std::vector<TrialStop>{TrialStop::settled, TrialStop::budget}));
    EXPECT_EQ(trials[0], 4u);
    EXPECT_EQ(trials[1], 6u);  // 10 trials fit the budget; cell 0 took 4
    EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 0, 1, 0, 1, 0, 1, 1, 1}));
}

TEST(AdaptiveSchedule, AnInterruptStopsEveryUnfinishedCell) {
    unsigned runs = 0;
    AdaptiveSchedule schedule;
    schedule.cells = 3;
    schedule.budget_ns = 1'000'000'000;
    schedule.elapsed_ns = [] { return std::uint64_t{0}; };
    schedule.run_one = [&](std::size_t) { return ++runs < 5; };
    const auto stops = run_adaptive(schedule);
    EXPECT_EQ(runs, 5u);
    EXPECT_EQ(stops, std::vector<TrialStop>(3, TrialStop::interrupted));
}

}  // namespace
}  // namespace lockprof::workload
