// `--trials auto`'s stopping rule (analysis::cell_precision, the interval on a cell's own
// acquires/s inside the equivalence band) driving the round-robin schedule
// (workload::run_adaptive) with synthetic trials of known spread and a synthetic clock:
// nothing here depends on how long anything takes.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/analysis/explain.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/analysis/verdict.hpp"
#include "lockprof/workload/sweep.hpp"

using namespace lockprof;

namespace {

// One trial of one thread: `per_second` acquires in 1 s.
workload::TrialResult trial_of(unsigned index, double per_second) {
    workload::TrialResult t;
    t.trial = index;
    t.wall_ns = 1'000'000'000;
    t.ticks = 1'000'000'000;
    workload::ThreadResult th;
    th.acquires = static_cast<std::uint64_t>(per_second);
    th.cpu_ns = 1'000'000'000;
    th.end_ns = 1'000'000'000;
    t.threads.push_back(th);
    return t;
}

// A tight cell (0.1% around 10M/s) and a wide one (about 30%), one thread each, trials drawn
// in turn from a fixed cycle so the test is the same everywhere.
struct Synthetic {
    workload::RunResult run;
    std::uint64_t clock = 0;
    std::vector<workload::TrialStop> stops;

    explicit Synthetic(std::uint64_t budget_ns) {
        run.spec.trials = 3;
        run.spec.max_time_ns = budget_ns;
        for (const char* lock : {"tight", "wide"}) {
            workload::CellResult c;
            c.lock = c.algorithm = lock;
            c.threads = 1;
            run.cells.push_back(c);
        }
        const std::vector<double> tight{1.0, 1.001, 0.999, 1.0005, 0.9995};
        const std::vector<double> wide{1.0, 1.5, 0.7, 1.3, 0.8};
        const analysis::VerdictOptions options;  // 95%, ±2%
        workload::AdaptiveSchedule schedule;
        schedule.cells = 2;
        schedule.min_trials = 3;
        schedule.budget_ns = budget_ns;
        schedule.elapsed_ns = [this] { return clock; };
        schedule.settled = [&](std::size_t i) {
            return analysis::cell_precision(run.cells[i], options, 2).narrow;
        };
        schedule.run_one = [&](std::size_t i) {
            auto& c = run.cells[i];
            const auto& cycle = i == 0 ? tight : wide;
            const auto n = static_cast<unsigned>(c.trials.size());
            c.trials.push_back(trial_of(n, 10e6 * cycle[n % cycle.size()]));
            clock += 100'000'000;  // each trial "takes" 100 ms
            return true;
        };
        stops = workload::run_adaptive(schedule);
        for (std::size_t i = 0; i < stops.size(); ++i) run.cells[i].stop = stops[i];
    }
};

TEST(AdaptiveTrials, PrecisionIsTheIntervalOfTheCellsOwnThroughput) {
    const auto tight = analysis::throughput_precision({10e6, 10.01e6, 9.99e6});
    ASSERT_TRUE(tight.interval);
    EXPECT_TRUE(tight.narrow);
    EXPECT_LT(tight.interval->low, 1.0);
    EXPECT_GT(tight.interval->high, 1.0);
    EXPECT_NEAR(tight.interval->low * tight.interval->high, 1.0, 1e-12);  // [exp(-h), exp(h)]
    EXPECT_FALSE(tight.trials_to_narrow);
    const auto wide = analysis::throughput_precision({10e6, 15e6, 7e6});
    ASSERT_TRUE(wide.interval);
    EXPECT_FALSE(wide.narrow);
    ASSERT_TRUE(wide.trials_to_narrow);
    EXPECT_GT(*wide.trials_to_narrow, 3u);
    // Below the minimum there is no interval, and so nothing is narrow.
    const auto two = analysis::throughput_precision({10e6, 10e6});
    EXPECT_FALSE(two.interval);
    EXPECT_FALSE(two.narrow);
    EXPECT_EQ(analysis::precision_text(two), "no interval (2 trials)");
    // A wider band and a smaller family both make an interval narrow sooner.
    const std::vector<double> medium{10e6, 10.3e6, 9.7e6, 10.1e6, 9.9e6};
    EXPECT_FALSE(analysis::throughput_precision(medium, {0.95, 0.02}, 1).narrow);
    EXPECT_TRUE(analysis::throughput_precision(medium, {0.95, 0.10}, 1).narrow);
    EXPECT_GT(analysis::throughput_precision(medium, {0.95, 0.02}, 10).half_width,
              analysis::throughput_precision(medium, {0.95, 0.02}, 1).half_width);
}

TEST(AdaptiveTrials, ATightCellStopsAtTheMinimumAWideOneAtTheBudget) {
    const Synthetic s(2'000'000'000);  // 20 trials' worth
    ASSERT_EQ(s.stops.size(), 2u);
    EXPECT_EQ(s.stops[0], workload::TrialStop::settled);
    EXPECT_GE(s.run.cells[0].trials.size(), 3u);
    EXPECT_LE(s.run.cells[0].trials.size(), 4u);
    EXPECT_EQ(s.stops[1], workload::TrialStop::budget);
    // The budget went round-robin: the wide cell got everything the tight one left.
    EXPECT_EQ(s.run.cells[0].trials.size() + s.run.cells[1].trials.size(), 20u);

    // Reported: under the table (verdict_notes) and in the explanation.
    const auto summaries = analysis::summarize(s.run);
    ASSERT_TRUE(summaries[0].precision);
    EXPECT_TRUE(summaries[0].precision->narrow);
    ASSERT_TRUE(summaries[1].precision);
    EXPECT_FALSE(summaries[1].precision->narrow);
    const auto notes = analysis::adaptive_notes(summaries);
    ASSERT_EQ(notes.size(), 2u);
    EXPECT_NE(notes[0].find("trials auto: 1 of 2 cells settled"), std::string::npos) << notes[0];
    EXPECT_NE(notes[1].find("wide at 1 thread stayed inconclusive"), std::string::npos) << notes[1];
    EXPECT_NE(notes[1].find("after 17 trials"), std::string::npos) << notes[1];
    EXPECT_NE(notes[1].find("wider than ±2%"), std::string::npos) << notes[1];
    const auto all = analysis::verdict_notes(summaries);
    EXPECT_EQ(all.back(), notes[1]);

    const auto diagnoses = analysis::explain(analysis::evidence_from(summaries));
    ASSERT_EQ(diagnoses.size(), 1u);
    bool said = false;
    for (const auto& f : diagnoses[0].findings)
        said |= f.rule == "trials-auto" && f.text.find("wide at 1 thread") != std::string::npos;
    EXPECT_TRUE(said) << analysis::render_explanation(diagnoses);
}

TEST(AdaptiveTrials, AFixedTrialCountAddsNoNotes) {
    Synthetic s(2'000'000'000);
    for (auto& c : s.run.cells) c.stop = workload::TrialStop::planned;
    s.run.spec.max_time_ns.reset();
    const auto summaries = analysis::summarize(s.run);
    EXPECT_FALSE(summaries[0].precision);
    EXPECT_TRUE(analysis::adaptive_notes(summaries).empty());
}

}  // namespace
