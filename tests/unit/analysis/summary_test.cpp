#include "lockprof/analysis/summary.hpp"

#include <gtest/gtest.h>

using namespace lockprof;

namespace {
workload::CellResult summary_cell(const std::string& lock, unsigned threads,
                                  std::vector<std::uint64_t> acquires_per_trial) {
    workload::CellResult c;
    c.lock = c.algorithm = lock;
    c.threads = threads;
    unsigned index = 0;
    for (auto acquires : acquires_per_trial) {
        workload::TrialResult t;
        t.trial = index++;
        t.wall_ns = 1'000'000'000;  // 1 s: acquires/s == acquires
        t.ticks = 2'000'000'000;
        for (unsigned i = 0; i < threads; ++i) {
            workload::ThreadResult th;
            th.acquires = acquires / threads;
            th.rmw_attempts = 3 * th.acquires;
            th.spin_iterations = th.acquires;
            th.cpu_ns = 1'000'000'000;
            t.threads.push_back(th);
        }
        c.trials.push_back(t);
    }
    return c;
}
}  // namespace

TEST(Summary, PerAcquireFiguresAndComparison) {
    workload::RunResult run;
    run.cells = {summary_cell("tas", 2, {1000, 1100, 900}),
                 summary_cell("cas", 2, {2000, 2100, 1900}),
                 summary_cell("ttas", 2, {1050, 950, 1000})};
    const auto s = analysis::summarize(run);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_DOUBLE_EQ(s[0].acquires_per_second.median, 1000);
    EXPECT_DOUBLE_EQ(s[0].wall_ns_per_acquire.median, 1e6);
    EXPECT_DOUBLE_EQ(s[0].cpu_ns_per_acquire.median, 2e6);  // two threads' CPU time
    EXPECT_DOUBLE_EQ(s[0].ticks_per_acquire.median, 2e6);
    EXPECT_DOUBLE_EQ(s[0].rmw_per_acquire.median, 3);
    EXPECT_DOUBLE_EQ(s[0].spins_per_acquire.median, 1);
    EXPECT_DOUBLE_EQ(s[0].jain.median, 1);
    EXPECT_FALSE(s[0].comparison.has_value());  // the baseline
    ASSERT_TRUE(s[1].comparison.has_value());
    const auto& faster = s[1].comparison->effect;
    EXPECT_NEAR(faster.ratio, 2.0, 0.01);  // ratio of geometric means
    EXPECT_EQ(faster.verdict, analysis::Verdict::faster);
    EXPECT_EQ(faster.family, 2u) << "both comparisons of the run, corrected together";
    // ttas: 10% spread over 3 trials, ratio near 1: inconclusive, not "within noise".
    EXPECT_EQ(s[2].comparison->effect.verdict, analysis::Verdict::inconclusive);
    const auto notes = analysis::verdict_notes(s);
    ASSERT_EQ(notes.size(), 2u);
    EXPECT_EQ(notes[0].rfind("vs first: verdicts: ratio of geometric means", 0), 0u) << notes[0];
    EXPECT_EQ(notes[1].rfind("ttas vs tas at 2 threads: inconclusive, interval [", 0), 0u)
        << notes[1];
    EXPECT_NE(notes[1].find("trials per side would likely settle it"), std::string::npos)
        << notes[1];
}

TEST(Summary, TheEquivalenceBandComesFromTheOptions) {
    workload::RunResult run;
    run.cells = {summary_cell("tas", 1, {1000, 1001, 999, 1000}),
                 summary_cell("cas", 1, {1030, 1031, 1029, 1030})};
    EXPECT_EQ(analysis::summarize(run)[1].comparison->effect.verdict, analysis::Verdict::faster);
    analysis::VerdictOptions wide;
    wide.equivalence = 0.05;
    const auto s = analysis::summarize(run, wide);
    EXPECT_EQ(s[1].comparison->effect.verdict, analysis::Verdict::equivalent);
    EXPECT_DOUBLE_EQ(analysis::verdict_options(s).equivalence, 0.05);
}

TEST(Summary, OneTrialIsAStatedLimit) {
    workload::RunResult run;
    run.cells = {summary_cell("tas", 1, {1000}), summary_cell("cas", 1, {1000})};
    const auto s = analysis::summarize(run);
    EXPECT_EQ(s[1].comparison->effect.verdict, analysis::Verdict::too_few_trials);
    EXPECT_FALSE(s[1].comparison->effect.interval);
    const auto notes = analysis::verdict_notes(s);
    ASSERT_EQ(notes.size(), 2u);
    EXPECT_EQ(notes[1],
              "cas vs tas at 1 thread: 1 trial per side: too few for an interval (at least 3 "
              "per side); run --trials 5 or more");
}

TEST(Summary, EventsAreScaledAndNeverRunIsNotCounted) {
    workload::RunResult run;
    run.cells = {summary_cell("tas", 2, {1000})};
    for (auto& th : run.cells[0].trials[0].threads) {
        th.counters.push_back({"cycles", 500, 2000, 1000});  // ran half the time: x2
        th.counters.push_back({"stxr_fail", 7, 2000, 0});    // never scheduled
    }
    const auto s = analysis::summarize(run);
    ASSERT_EQ(s[0].events.size(), 2u);
    EXPECT_TRUE(s[0].events[0].counted);
    EXPECT_DOUBLE_EQ(s[0].events[0].per_acquire.median, 2.0);  // 2*500*2 / 1000
    EXPECT_DOUBLE_EQ(s[0].events[0].running_fraction, 0.5);
    EXPECT_FALSE(s[0].events[1].counted);
}

TEST(Summary, ScaledValueIsOverflowSafe) {
    measure::CounterReading r{"cycles", UINT64_MAX / 2, UINT64_MAX, UINT64_MAX / 4};
    const auto v = measure::scaled_value(r);
    ASSERT_TRUE(v.has_value());
    EXPECT_NEAR(*v / (static_cast<double>(UINT64_MAX) * 2), 1.0, 1e-9);
    EXPECT_FALSE(measure::scaled_value({"x", 5, 10, 0}).has_value());
}

TEST(Summary, UnfairnessShowsInFairnessIndices) {
    workload::RunResult run;
    run.cells = {summary_cell("tas", 2, {1000})};
    run.cells[0].trials[0].threads[0].acquires = 900;
    run.cells[0].trials[0].threads[1].acquires = 100;
    const auto s = analysis::summarize(run);
    EXPECT_NEAR(s[0].jain.median, 1e6 / (2 * (810000 + 10000.0)), 1e-12);
    EXPECT_NEAR(s[0].min_max.median, 100.0 / 900, 1e-12);
    EXPECT_GT(s[0].cv.median, 0.7);
}

// The observer-effect check, from trials built by construction: the plain twins give the
// throughput and `vs first`; instrumented / plain is judged per cell (raised, lowered,
// equivalent), one family over the cells checked, and said under the table.
TEST(Summary, PerturbationComparesInstrumentedWithPlainTrialsAndPlainTrialsGiveTheVerdicts) {
    workload::RunResult run;
    run.spec.perturbation_check = true;
    run.sampling.emplace();
    // tas: sampling raised it by 25% (plain 1000, sampled 1250); cas: left as it was.
    auto tas = summary_cell("tas", 2, {1250, 1260, 1240});
    tas.plain_trials = summary_cell("tas", 2, {1000, 1010, 990}).trials;
    auto cas = summary_cell("cas", 2, {2000, 2002, 1998});
    cas.plain_trials = summary_cell("cas", 2, {2001, 1999, 2000}).trials;
    run.cells = {tas, cas};
    const auto s = analysis::summarize(run);
    ASSERT_TRUE(s[0].perturbation && s[1].perturbation);
    EXPECT_NEAR(s[0].perturbation->ratio, 1.25, 0.001);
    EXPECT_EQ(s[0].perturbation->verdict, analysis::Verdict::faster);
    EXPECT_STREQ(analysis::perturbation_verdict_name(s[0].perturbation->verdict), "raised");
    EXPECT_EQ(s[0].perturbation->family, 2u);
    EXPECT_EQ(s[1].perturbation->verdict, analysis::Verdict::equivalent);
    EXPECT_EQ(s[0].instruments, "sampling");
    // The table's acquires/s and `vs first` are the plain trials': cas is 2x tas, not 1.6x.
    EXPECT_NEAR(s[0].throughput, 1000, 1);
    EXPECT_NEAR(s[0].acquires_per_second.median, 1000, 1e-9);
    EXPECT_NEAR(s[1].comparison->effect.ratio, 2.0, 0.01);
    EXPECT_EQ(analysis::perturbation_text(*s[0].perturbation), "1.25x raised");
    EXPECT_EQ(analysis::perturbation_text(*s[1].perturbation), "1.00x equivalent");
    const std::string claim = analysis::perturbation_claim(s[0]);
    EXPECT_EQ(claim.rfind("sampling raised tas's throughput by 25% [", 0), 0u) << claim;
    EXPECT_NE(claim.find("at 2 threads: the sampled trials' figures"), std::string::npos) << claim;
    EXPECT_EQ(analysis::perturbation_claim(s[1]), "");
    const auto notes = analysis::perturbation_notes(s, analysis::Detail::brief);
    ASSERT_EQ(notes.size(), 2u);
    EXPECT_EQ(notes[0],
              "instr/plain: acquires/s with sampling over the same trials run without "
              "instruments (interleaved, 3 pairs per cell); 2 cells: 1 equivalent, 1 raised; "
              "acquires/s and vs first are the plain trials'");
    EXPECT_EQ(notes[1], claim);
    // Without the check the same trials are judged as before.
    run.spec.perturbation_check = false;
    const auto unchecked = analysis::summarize(run);
    EXPECT_FALSE(unchecked[0].perturbation);
    EXPECT_NEAR(unchecked[0].throughput, 1250, 10);
    EXPECT_TRUE(analysis::perturbation_notes(unchecked).empty());
}
