// The progress line of `run` on a terminal: the time left, estimated from the plan and the
// steps so far (issue 30), on synthetic clocks.
#include "cli/sweep_progress.hpp"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "lockprof/workload/sweep.hpp"

namespace lockprof::cli {
namespace {

using namespace std::chrono_literals;
using Clock = SweepProgress::Clock;

const std::string kVerify = std::string(workload::kVerifyingPrefix) + " tas with 1 thread";

TEST(SweepProgress, FormatsTheTimeLeftForPeople) {
    EXPECT_EQ(format_time_left(200ms), "1s");
    EXPECT_EQ(format_time_left(45s), "45s");
    EXPECT_EQ(format_time_left(59'100ms), "59s");
    EXPECT_EQ(format_time_left(59'600ms), "1m 00s");
    EXPECT_EQ(format_time_left(80s), "1m 20s");
    EXPECT_EQ(format_time_left(3725s), "1h 02m");
}

// 4 verification trials of 200 ms, then 12 trials of 1 s: 12.8 s planned.
TEST(SweepProgress, AFixedPlanSaysItsTimeLeftScaledByHowLongTheStepsTook) {
    const SweepShape shape{4, 200'000'000, 12, 1'000'000'000, std::nullopt};
    const Clock::time_point t0{};
    SweepProgress progress(shape, t0);
    EXPECT_EQ(progress.line(kVerify, t0), "[0/12, about 13s left] " + kVerify);
    for (int i = 1; i < 4; ++i) progress.line(kVerify, t0 + i * 200ms);
    // On plan: 12 trials of 1 s left.
    EXPECT_EQ(progress.line("tas with 1 thread, trial 1/3", t0 + 800ms),
              "[1/12, about 12s left] tas with 1 thread, trial 1/3");
    // The first trial took 2 s, not 1: 1.8 s planned took 2.8 s, and the 11 s left are scaled
    // alike (17.1 s).
    EXPECT_EQ(progress.line("tas with 1 thread, trial 2/3", t0 + 2800ms),
              "[2/12, about 17s left] tas with 1 thread, trial 2/3");
}

TEST(SweepProgress, AShortSweepSaysNoTimeLeft) {
    const SweepShape shape{2, 100'000'000, 4, 500'000'000, std::nullopt};  // 2.2 s
    const Clock::time_point t0{};
    SweepProgress progress(shape, t0);
    EXPECT_EQ(progress.line(kVerify, t0), "[0/4] " + kVerify);
    EXPECT_EQ(progress.line("tas with 1 thread, trial 1/2", t0 + 200ms),
              "[1/4] tas with 1 thread, trial 1/2");
}

// --acquires: a trial's length is unknown until one has run; then the measured trials so far
// say it.
TEST(SweepProgress, WithAcquiresTheMeasuredTrialsSoFarSayTheTimeLeft) {
    const SweepShape shape{2, 200'000'000, 10, std::nullopt, std::nullopt};
    const Clock::time_point t0{};
    SweepProgress progress(shape, t0);
    EXPECT_EQ(progress.line(kVerify, t0), "[0/10] " + kVerify);
    progress.line(kVerify, t0 + 200ms);
    EXPECT_EQ(progress.line("tas with 1 thread, trial 1/5", t0 + 400ms),
              "[1/10] tas with 1 thread, trial 1/5");
    EXPECT_EQ(progress.line("tas with 1 thread, trial 2/5", t0 + 1400ms),
              "[2/10, about 9s left] tas with 1 thread, trial 2/5");
}

// --trials auto: at most what is left of --max-time (cells that settle stop sooner), and no
// count of steps.
TEST(SweepProgress, WithABudgetTheBudgetsRestIsTheMost) {
    const SweepShape shape{2, 100'000'000, 6, 100'000'000, 30'000'000'000};
    const Clock::time_point t0{};
    SweepProgress progress(shape, t0);
    EXPECT_EQ(progress.line(kVerify, t0), "[0, up to 30s left] " + kVerify);
    progress.line(kVerify, t0 + 100ms);
    EXPECT_EQ(progress.line("tas with 1 thread, trial 1 (auto)", t0 + 200ms),
              "[1, up to 30s left] tas with 1 thread, trial 1 (auto)");
    EXPECT_EQ(progress.line("tas with 1 thread, trial 2 (auto)", t0 + 10s),
              "[2, up to 20s left] tas with 1 thread, trial 2 (auto)");
    // Past the budget, the trials every cell must still run (its first 3) are what is left:
    // 4 more, at 10 s each, as 0.4 s of plan took 40 s.
    EXPECT_EQ(progress.line("tas with 1 thread, trial 3 (auto)", t0 + 40s),
              "[3, about 40s left] tas with 1 thread, trial 3 (auto)");
}

TEST(SweepProgress, TheShapeOfAPlanIsWhatTheSweepRuns) {
    workload::Plan plan;
    plan.spec.duration_ns = 1'000'000'000;
    plan.spec.trials = 3;
    for (unsigned threads : {1u, 2u})
        for (const char* name : {"tas", "empty"})
            plan.cells.push_back({workload::find_lock(name), arch::Delay::none, threads});
    SweepShape shape = sweep_shape(plan);
    // `empty` claims no exclusion: it has no verification trial without --warmup.
    EXPECT_EQ(shape.verifications, 2u);
    EXPECT_EQ(shape.verification_ns, workload::kVerificationCapNs);
    EXPECT_EQ(shape.measured, 12u);
    EXPECT_EQ(shape.trial_ns, 1'000'000'000u);
    EXPECT_FALSE(shape.budget_ns);
    plan.spec.warmup_ns = 50'000'000;
    shape = sweep_shape(plan);
    EXPECT_EQ(shape.verifications, 4u);
    EXPECT_EQ(shape.verification_ns, 50'000'000u);
    plan.spec.warmup_ns = 0;
    plan.spec.duration_ns.reset();
    plan.spec.acquires_per_thread = 1000;
    plan.spec.max_time_ns = 60'000'000'000;
    shape = sweep_shape(plan);
    EXPECT_FALSE(shape.trial_ns);
    EXPECT_EQ(shape.budget_ns, 60'000'000'000u);
}

}  // namespace
}  // namespace lockprof::cli
