// `--processes N`: what the verdicts resample over (analysis::summarize with
// RunSpec::processes), and each process's trials pooled into its geometric mean.
#include <cmath>

#include <gtest/gtest.h>

#include "lockprof/analysis/explain.hpp"
#include "lockprof/analysis/summary.hpp"

using namespace lockprof;

namespace {

// One thread, 1 s trials: acquires/s == acquires. Trial i ran in process i / per_process.
workload::CellResult cell_of(const std::string& lock, const std::vector<double>& per_second,
                             unsigned per_process) {
    workload::CellResult c;
    c.lock = c.algorithm = lock;
    c.threads = 1;
    for (unsigned i = 0; i < per_second.size(); ++i) {
        workload::TrialResult t;
        t.trial = i;
        t.process = i / per_process;
        t.wall_ns = 1'000'000'000;
        t.ticks = 1'000'000'000;
        workload::ThreadResult th;
        th.acquires = static_cast<std::uint64_t>(per_second[i]);
        th.cpu_ns = th.end_ns = 1'000'000'000;
        t.threads.push_back(th);
        c.trials.push_back(t);
    }
    return c;
}

TEST(Processes, EachProcessIsPooledIntoItsGeometricMean) {
    const auto c = cell_of("tas", {100, 400, 1000, 1000, 10, 10}, 2);
    const auto means = analysis::process_throughputs(c, 3);
    ASSERT_EQ(means.size(), 3u);
    EXPECT_NEAR(means[0], 200, 1e-9);
    EXPECT_NEAR(means[1], 1000, 1e-9);
    EXPECT_NEAR(means[2], 10, 1e-9);
}

TEST(Processes, FromThreeProcessesTheVerdictResamplesOverProcesses) {
    workload::RunResult run;
    run.spec.trials = 2;
    run.spec.processes = 3;
    run.cells.push_back(cell_of("tas", {100, 100, 101, 101, 99, 99}, 2));
    run.cells.push_back(cell_of("ttas", {120, 120, 121, 121, 119, 119}, 2));
    auto s = analysis::summarize(run);
    ASSERT_TRUE(s[1].comparison);
    EXPECT_TRUE(s[1].comparison->over_processes);
    EXPECT_EQ(s[1].comparison->effect.base_trials, 3u) << "one value per process";
    EXPECT_EQ(s[0].verdict_values.size(), 3u) << "what the explanation judges with too";
    EXPECT_NE(analysis::verdict_notes(s)[0].find("resampled over 3 processes"), std::string::npos);

    // The explanation judges the pair with the same values, so it says what the table says.
    const auto diagnoses = analysis::explain(analysis::evidence_from(s));
    ASSERT_EQ(diagnoses.size(), 1u);
    EXPECT_NE(diagnoses[0].findings[0].text.find("faster"), std::string::npos)
        << diagnoses[0].findings[0].text;
    EXPECT_EQ(s[1].comparison->effect.verdict, analysis::Verdict::faster);

    run.spec.processes = 2;
    for (auto& c : run.cells)
        for (auto& t : c.trials) t.process = t.trial / 3;
    s = analysis::summarize(run);
    EXPECT_FALSE(s[1].comparison->over_processes);
    EXPECT_EQ(s[1].comparison->effect.base_trials, 6u) << "2 processes: every trial";
    EXPECT_NE(analysis::verdict_notes(s)[0].find("over the trials of 2 processes together"),
              std::string::npos);

    run.spec.processes = 1;
    s = analysis::summarize(run);
    EXPECT_NE(analysis::verdict_notes(s)[0].find("resampled over trials within one process"),
              std::string::npos);
}

}  // namespace
