// The calibration's arithmetic (per-round differences, median, range, rounds without units
// left out), and where uprobes and perf_event sampling work here, that a calibration yields a
// cost and measures what it says it measured.
#include "lockprof/sampling/calibration.hpp"

#include <gtest/gtest.h>

#include "lockprof/sampling/sampler.hpp"
#include "support/uprobes.hpp"

namespace lockprof::sampling {
namespace {

TEST(Calibration, MedianOfPerUnitDifferencesWithTheRoundsRange) {
    // Per unit: 2, 4, 3 (and a round that measured nothing, left out).
    const auto e = summarize_rounds({100, 100, 100, 100}, {300, 500, 400, 900}, {100, 100, 100, 0});
    EXPECT_DOUBLE_EQ(e.ns, 3);
    EXPECT_DOUBLE_EQ(e.low, 2);
    EXPECT_DOUBLE_EQ(e.high, 4);
    EXPECT_EQ(e.rounds, 3u);
    EXPECT_EQ(e.units, 300u);
    // Noise below zero is no cost.
    const auto none = summarize_rounds({100, 100}, {90, 95}, {10, 10});
    EXPECT_DOUBLE_EQ(none.ns, 0);
    EXPECT_EQ(summarize_rounds({}, {}, {}).rounds, 0u);
}

TEST(Calibration, ProbedCallsCostSomethingAndEveryCallIsMeasured) {
    if (const auto why = test::uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    std::string why;
    const auto pmu = pmu::uprobe_pmu(why);
    ASSERT_TRUE(pmu) << why;
    const auto cost = probe_call_cost(*pmu, 0, why);
    ASSERT_TRUE(cost) << why;
    EXPECT_GT(cost->ns, 0);  // a trap per entry and one per return
    EXPECT_LE(cost->low, cost->ns);
    EXPECT_GE(cost->high, cost->ns);
    EXPECT_GT(cost->rounds, 0u);
    EXPECT_EQ(cost->units % 1000, 0u);  // whole rounds of calls, each call recorded
}

TEST(Calibration, SamplesCostSomethingAndAreCounted) {
    if (const auto why = test::perf_events_unavailable(); !why.empty()) GTEST_SKIP() << why;
    SamplerRequest request;
    request.event = "cpu-clock";
    request.event_given = true;
    auto choice = choose_perf_event(request);
    ASSERT_TRUE(choice.error.empty()) << choice.error;
    std::string why;
    const auto cost = sample_cost(choice.attr, 10000, why);
    ASSERT_TRUE(cost) << why;
    EXPECT_GE(cost->ns, 0);
    EXPECT_GT(cost->units, 0u);
}

}  // namespace
}  // namespace lockprof::sampling
