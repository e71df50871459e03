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

}  // namespace
}  // namespace lockprof::workload
