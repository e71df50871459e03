// Hypervisor steal in the analysis, on synthetic trials: each trial's share, what counts as
// high, the run's one merged note, and the range task_clock must fall in given the steal.
#include "lockprof/analysis/steal.hpp"

#include <gtest/gtest.h>

namespace lockprof::analysis {
namespace {

constexpr std::uint64_t kTick = 10'000'000;  // USER_HZ 100

workload::TrialSteal stolen(std::vector<int> cpus, std::uint64_t steal_ns,
                            std::uint64_t window_ns) {
    return {std::move(cpus), steal_ns, window_ns, kTick};
}

workload::TrialResult trial_with(std::optional<workload::TrialSteal> steal) {
    workload::TrialResult trial;
    trial.wall_ns = 1'000'000'000;
    trial.steal = std::move(steal);
    return trial;
}

// A cell whose trials took these shares of 2 CPUs over 1 s windows (nullopt: not measured).
workload::CellResult cell_with(const std::string& lock, std::vector<std::optional<double>> shares) {
    workload::CellResult cell;
    cell.lock = lock;
    cell.threads = 2;
    for (const auto& share : shares)
        cell.trials.push_back(
            trial_with(share ? std::optional(stolen(
                                   {0, 1}, static_cast<std::uint64_t>(*share * 2e9), 1'000'000'000))
                             : std::nullopt));
    return cell;
}

TEST(Steal, ShareIsOfEveryCoveredCpusWindow) {
    EXPECT_DOUBLE_EQ(steal_share(stolen({0, 1}, 30'000'000, 150'000'000)), 0.1);
    EXPECT_DOUBLE_EQ(steal_share(stolen({3}, 30'000'000, 150'000'000)), 0.2);
    EXPECT_DOUBLE_EQ(steal_share(stolen({3}, 0, 0)), 0.0);
}

// High is above 3% with one tick per CPU taken off: a short trial's single tick is the reading's
// resolution, not evidence of a busy host.
TEST(Steal, OneTickOfAShortTrialIsNotHigh) {
    EXPECT_FALSE(high_steal(stolen({0}, kTick, 150'000'000)));  // 6.7%, all of it one tick
    EXPECT_TRUE(high_steal(stolen({0}, 2 * kTick, 150'000'000)));
    EXPECT_FALSE(high_steal(stolen({0, 1}, 2 * kTick, 1'000'000'000)));   // 1% of 2 CPUs
    EXPECT_TRUE(high_steal(stolen({0, 1}, 280'000'000, 1'000'000'000)));  // 14%
    EXPECT_FALSE(high_steal(stolen({0, 1}, 70'000'000, 1'000'000'000)));  // 3.5%, 2.5% at worst
}

// One note for the whole run, with the range and the count of the high trials over every cell.
TEST(Steal, HighTrialsOfEveryCellMakeOneNote) {
    const auto tas = cell_with("tas", {0.09, 0.01, 0.14, 0.0});
    const auto cas = cell_with("cas", {0.11, 0.005, std::nullopt, 0.10});
    StealTally run;
    run.add(tas);
    run.add(cas);
    EXPECT_EQ(run.trials, 8u);
    EXPECT_EQ(run.measured, 7u);
    EXPECT_EQ(run.high, 4u);
    const std::string note = steal_note(run);
    EXPECT_EQ(note,
              "hypervisor steal: the hypervisor took 9-14% of the threads' CPUs in 4 of 7 trials "
              "(above 3% of a trial's CPU time, /proc/stat; 1 trial not measured): expect spread "
              "between trials; run on an idle or dedicated host");
    // Tallied cell by cell and merged, the same.
    StealTally tas_only, cas_only;
    tas_only.add(tas);
    cas_only.add(cas);
    tas_only.add(cas_only);
    EXPECT_EQ(steal_note(tas_only), note);
}

TEST(Steal, QuietOrUnmeasuredRunsHaveNoNote) {
    StealTally quiet;
    quiet.add(cell_with("tas", {0.01, 0.0, 0.02}));
    EXPECT_EQ(steal_note(quiet), "");
    EXPECT_EQ(steal_overview(quiet),
              "measured in 3 of 3 trials (/proc/stat, 10 ms per CPU): median 1.0%, at most 2.0% of "
              "the threads' CPUs' time");
    StealTally unknown;
    unknown.add(cell_with("tas", {std::nullopt, std::nullopt}));
    EXPECT_EQ(steal_note(unknown), "");
    EXPECT_EQ(steal_overview(unknown), "unknown: not measured in any trial (the notes say why)");
}

// The failing trial: one thread, task_clock 82.0 ms against 65.9 ms of thread CPU time.
// With the steal measured on its CPU over the same window the two agree; without steal, or with
// a counter read twice or scaled twice, they do not.
TEST(Steal, TaskClockRangeAllowsStealAndNothingElse) {
    const std::uint64_t cpu_ns = 65'864'337;
    const double task_clock = 82'029'923;
    EXPECT_TRUE(task_clock_range(cpu_ns, stolen({0}, 2 * kTick, 160'000'000)).contains(task_clock));
    EXPECT_FALSE(task_clock_range(cpu_ns, stolen({0}, 0, 160'000'000)).contains(task_clock));
    EXPECT_FALSE(
        task_clock_range(cpu_ns, stolen({0}, 2 * kTick, 160'000'000)).contains(2 * task_clock));
    EXPECT_FALSE(
        task_clock_range(cpu_ns, stolen({0}, 2 * kTick, 160'000'000)).contains(task_clock / 2));
    // The bounds themselves: CPU time less 2% to CPU time plus 2%, the steal and a tick per CPU.
    const auto range = task_clock_range(100'000'000, stolen({0, 1}, 30'000'000, 200'000'000));
    EXPECT_DOUBLE_EQ(range.low_ns, 98'000'000);
    EXPECT_DOUBLE_EQ(range.high_ns, 102'000'000 + 30'000'000 + 2 * kTick);
}

}  // namespace
}  // namespace lockprof::analysis
