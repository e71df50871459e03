// run_sweep() on a small real plan (tas and ticket, 1 and 2 threads, short acquire counts): the
// order it runs trials in, what each cell keeps, the verification trials (also the warm-up), a
// broken lock caught by a normal run, and an interrupt part-way.
#include "lockprof/workload/sweep.hpp"

#include <atomic>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/workload/pinning.hpp"
#include "lockprof/workload/plan.hpp"
#include "support/broken_locks.hpp"

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
                            "checking exclusion: tas with 1 thread",
                            "checking exclusion: ticket with 1 thread",
                            "checking exclusion: tas with 2 threads",
                            "checking exclusion: ticket with 2 threads",
                            "tas with 1 thread, trial 1/2",
                            "ticket with 1 thread, trial 1/2",
                            "tas with 1 thread, trial 2/2",
                            "ticket with 1 thread, trial 2/2",
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
        // One verification trial of the measured trials' shape (200 acquires each, well under
        // its 200 ms cap), kept apart from them.
        ASSERT_TRUE(cell.verification) << cell.lock;
        EXPECT_EQ(cell.verification->trials, 1u);
        EXPECT_EQ(cell.verification->acquires, 200u * cell.threads) << cell.lock;
        EXPECT_GT(cell.verification->wall_ns, 0u);
        EXPECT_EQ(cell.verification->overlaps, 0u);
        EXPECT_EQ(cell.verification->lost_updates, 0u);
    }
    EXPECT_EQ(run.spec.trials, 2u);
}

// --warmup sets the verification trial's length (then without an acquire limit): it is the
// warm-up too, so no cell runs a second one.
TEST(Sweep, VerifiesEveryCellFirstForAsLongAsTheWarmUp) {
    RunSpec spec = small_sweep();
    spec.trials = 1;
    spec.threads = {1};
    // 20 ms: long enough that a thread descheduled for a while (a loaded machine, qemu-user
    // beside another shard) still does hundreds of acquires.
    spec.warmup_ns = 20'000'000;
    std::vector<std::string> progress;
    SweepHooks hooks;
    hooks.progress = [&](const std::string& line) { progress.push_back(line); };
    RunControl control;
    const RunResult run = run_sweep(plan_of(spec), control, hooks);
    EXPECT_EQ(progress, (std::vector<std::string>{
                            "checking exclusion: tas with 1 thread",
                            "checking exclusion: ticket with 1 thread",
                            "tas with 1 thread, trial 1/1",
                            "ticket with 1 thread, trial 1/1",
                        }));
    // Verification trials are not among the measured ones.
    for (const auto& cell : run.cells) {
        EXPECT_EQ(cell.trials.size(), 1u);
        ASSERT_TRUE(cell.verification) << cell.lock;
        EXPECT_GE(cell.verification->wall_ns, 20'000'000u) << cell.lock;
        EXPECT_GT(cell.verification->acquires, 200u)
            << cell.lock << ": ran to the warm-up's length";
    }
}

// A lock that claims no exclusion (`empty`) has nothing to verify: it runs a plain warm-up, and
// only with --warmup.
TEST(Sweep, ALockWithoutExclusionIsNotVerified) {
    RunSpec spec = small_sweep();
    spec.locks = {"empty"};
    spec.threads = {2};
    spec.trials = 1;
    std::vector<std::string> progress;
    SweepHooks hooks;
    hooks.progress = [&](const std::string& line) { progress.push_back(line); };
    RunControl control;
    RunResult run = run_sweep(plan_of(spec), control, hooks);
    EXPECT_EQ(progress, (std::vector<std::string>{"empty with 2 threads, trial 1/1"}));
    EXPECT_FALSE(run.cells.at(0).verification);
    spec.warmup_ns = 1'000'000;
    progress.clear();
    run = run_sweep(plan_of(spec), control, hooks);
    EXPECT_EQ(progress, (std::vector<std::string>{"warm-up empty with 2 threads",
                                                  "empty with 2 threads, trial 1/1"}));
    EXPECT_FALSE(run.cells.at(0).verification);
}

// The measured trials check nothing per acquire; a plain run still finds a lock that lets two
// holders in, by its verification trial, and says so. Without shared lines, the case where
// measured trials have no count to compare either.
TEST(Sweep, ANormalRunCatchesALockThatLetsTwoHoldersIn) {
    const auto cpus = allowed_cpus();
    if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs to run two holders at once";
    const RunnableLock lock = test_locks::test_lock<test_locks::TwoHolders>();
    Plan plan;
    plan.spec.locks = {lock.name};
    plan.spec.threads = {2};
    plan.spec.duration_ns = 100'000'000;
    plan.spec.work.shared_lines = 0;
    plan.spec.work.critical_ns = 1000;
    plan.cpus = cpus;
    plan.spec.pin.mode = PinMode::compact;
    plan.cells = {PlannedCell{&lock, arch::Delay::none, 2}};
    test_locks::TwoHolders<arch::Delay::none>::overlapping_entries = 0;
    RunControl control;
    const RunResult run = run_sweep(plan, control, SweepHooks{});
    if (test_locks::TwoHolders<arch::Delay::none>::overlapping_entries < 1000)
        GTEST_SKIP() << "the two threads hardly ran at once: nothing to detect";
    const CellResult& cell = run.cells.at(0);
    ASSERT_TRUE(cell.verification);
    EXPECT_GT(cell.verification->overlaps + cell.verification->lost_updates, 0u);
    EXPECT_EQ(cell.overlaps, cell.verification->overlaps);
    ASSERT_EQ(cell.trials.size(), 1u);
    ASSERT_FALSE(run.notes.empty());
    EXPECT_NE(run.notes.back().find("MUTUAL EXCLUSION FAILED: lock 'two-holders' with 2 threads"),
              std::string::npos)
        << run.notes.back();
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
    // Interrupt as the third measured trial starts (after the four verification trials): it
    // stops early and is dropped.
    hooks.progress = [&](const std::string& line) {
        if (line.find(", trial ") != std::string::npos && ++calls == 3) interrupted = true;
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
                            "checking exclusion: tas with 1 thread",
                            "checking exclusion: ticket with 1 thread",
                            "tas with 1 thread, trial 1 (auto)",
                            "ticket with 1 thread, trial 1 (auto)",
                            "tas with 1 thread, trial 2 (auto)",
                            "ticket with 1 thread, trial 2 (auto)",
                            "tas with 1 thread, trial 3 (auto)",
                            "ticket with 1 thread, trial 3 (auto)",
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
