#include "lockprof/analysis/compare.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace lockprof::analysis {
namespace {

// A cell whose trials reached the given throughputs (one thread, 1 s windows).
workload::CellResult cell(const std::string& lock, unsigned threads,
                          const std::vector<double>& per_second) {
    workload::CellResult c;
    c.lock = c.algorithm = lock;
    c.threads = threads;
    for (std::size_t i = 0; i < per_second.size(); ++i) {
        workload::TrialResult t;
        t.trial = static_cast<unsigned>(i);
        t.wall_ns = 1'000'000'000;
        workload::ThreadResult th;
        th.acquires = static_cast<std::uint64_t>(per_second[i]);
        th.rmw_attempts = th.acquires;
        th.cpu_ns = t.wall_ns;
        th.end_ns = t.wall_ns;
        t.threads.assign(threads, th);
        for (unsigned k = 0; k < threads; ++k) t.threads[k].index = k;
        c.trials.push_back(t);
    }
    return c;
}

workload::RunResult run_with(std::vector<workload::CellResult> cells) {
    workload::RunResult r;
    r.provenance.arch = "x86_64";
    r.provenance.cpu_model = "Test CPU";
    r.provenance.compiler = "GNU 12.2.0";
    r.provenance.compiler_flags = "-O2 -g";
    r.provenance.build_type = "RelWithDebInfo";
    r.provenance.kernel = "6.1.0";
    r.provenance.logical_cpus = 2;
    r.spec.duration_ns = 1'000'000'000;
    r.spec.trials = 5;
    r.cells = std::move(cells);
    return r;
}

TEST(Compare, ClearlyFasterSlowerAndNoise) {
    const auto base = run_with({cell("tas", 1, {100e6, 101e6, 99e6, 100.5e6, 99.5e6}),
                                cell("cas", 1, {50e6, 51e6, 49e6, 50.5e6, 49.5e6}),
                                cell("ttas", 1, {80e6, 90e6, 70e6, 85e6, 75e6})});
    const auto other = run_with({cell("tas", 1, {120e6, 121e6, 119e6, 120.5e6, 119.5e6}),
                                 cell("cas", 1, {40e6, 41e6, 39e6, 40.5e6, 39.5e6}),
                                 cell("ttas", 1, {82e6, 88e6, 71e6, 86e6, 76e6})});
    const auto r = compare_runs(base, other);
    ASSERT_EQ(r.cells.size(), 3u);
    EXPECT_EQ(r.cells[0].verdict, Verdict::faster);
    EXPECT_NEAR(r.cells[0].ratio, 1.2, 1e-9);
    ASSERT_TRUE(r.cells[0].interval);
    EXPECT_GT(r.cells[0].interval->low, 1.0);
    EXPECT_LE(r.cells[0].interval->low, r.cells[0].ratio);
    EXPECT_GE(r.cells[0].interval->high, r.cells[0].ratio);
    EXPECT_EQ(r.cells[1].verdict, Verdict::slower);
    EXPECT_LT(r.cells[1].interval->high, 1.0);
    EXPECT_EQ(r.cells[2].verdict, Verdict::within_noise);
    EXPECT_LT(r.cells[2].interval->low, 1.0);
    EXPECT_GT(r.cells[2].interval->high, 1.0);
    EXPECT_TRUE(r.warnings.empty());
    EXPECT_TRUE(r.only_in_base.empty());
    EXPECT_TRUE(r.only_in_other.empty());
}

TEST(Compare, OneTrialGivesNoNoiseEstimate) {
    const auto r = compare_runs(run_with({cell("tas", 2, {100e6})}),
                                run_with({cell("tas", 2, {300e6, 301e6, 302e6})}));
    ASSERT_EQ(r.cells.size(), 1u);
    EXPECT_EQ(r.cells[0].verdict, Verdict::no_noise_estimate);
    EXPECT_FALSE(r.cells[0].interval);
    EXPECT_NEAR(r.cells[0].ratio, 3.01, 1e-9);
    EXPECT_STREQ(verdict_name(Verdict::no_noise_estimate), "no noise estimate");
}

TEST(Compare, BootstrapIsDeterministicPerSeedAndCoversTheRatio) {
    const std::vector<double> base = {10, 11, 12, 9, 10.5}, other = {12, 13, 11, 12.5, 14};
    CompareOptions options;
    const auto a = bootstrap_ratio_interval(base, other, options);
    const auto b = bootstrap_ratio_interval(base, other, options);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->low, b->low);
    EXPECT_EQ(a->high, b->high);
    // The resampled medians take few distinct values, so with 10000 resamples the quantiles
    // settle on the same ones for any seed; with few resamples another seed moves an end.
    std::vector<double> many_base, many_other;
    for (int i = 0; i < 21; ++i)
        many_base.push_back(100 + i * 1.37), many_other.push_back(103 + (i * 7 % 21) * 1.91);
    CompareOptions few = options;
    few.resamples = 60;
    const auto s1 = bootstrap_ratio_interval(many_base, many_other, few);
    few.seed = 7;
    const auto s7 = bootstrap_ratio_interval(many_base, many_other, few);
    ASSERT_TRUE(s1 && s7);
    EXPECT_TRUE(s1->low != s7->low || s1->high != s7->high) << "the seed must matter";
    // The interval contains the plain ratio of medians (12.5 / 10.5) and stays within the
    // extreme ratios the trials allow.
    EXPECT_LE(a->low, 12.5 / 10.5);
    EXPECT_GE(a->high, 12.5 / 10.5);
    EXPECT_GE(a->low, 11.0 / 12.0);
    EXPECT_LE(a->high, 14.0 / 9.0);
    // A wider confidence gives a wider (or equal) interval.
    options.seed = 1;
    options.confidence = 0.99;
    const auto wide = bootstrap_ratio_interval(base, other, options);
    EXPECT_LE(wide->low, a->low);
    EXPECT_GE(wide->high, a->high);
    EXPECT_FALSE(bootstrap_ratio_interval({1.0}, other, options));
}

TEST(Compare, MismatchedCellsAreListedOnBothSides) {
    const auto base = run_with({cell("tas", 1, {1e6, 1e6}), cell("tas", 8, {2e6, 2e6})});
    const auto other = run_with({cell("tas", 1, {1e6, 1e6}), cell("mcs", 4, {3e6, 3e6})});
    const auto r = compare_runs(base, other);
    ASSERT_EQ(r.cells.size(), 1u);
    ASSERT_EQ(r.only_in_base.size(), 1u);
    EXPECT_EQ(r.only_in_base[0].lock, "tas");
    EXPECT_EQ(r.only_in_base[0].threads, 8u);
    ASSERT_EQ(r.only_in_other.size(), 1u);
    EXPECT_EQ(r.only_in_other[0].lock, "mcs");
    EXPECT_EQ(r.only_in_other[0].threads, 4u);
    // Equal trials: the interval is exactly [1, 1], which is not "faster".
    EXPECT_EQ(r.cells[0].verdict, Verdict::within_noise);
}

TEST(Compare, WarnsAboutAssertionsCpuBuildAndWorkload) {
    auto base = run_with({cell("tas", 1, {1e6, 1e6})});
    auto other = base;
    EXPECT_TRUE(provenance_warnings(base, other).empty());
    other.provenance.assertions = true;
    other.provenance.cpu_model = "Other CPU";
    other.provenance.compiler_flags = "-O0 -g";
    other.provenance.vm_hint = "kvm";
    other.spec.work.critical_ns = 100;
    const auto w = provenance_warnings(base, other);
    std::vector<std::string> fields;
    for (const auto& x : w) fields.push_back(x.field);
    ASSERT_FALSE(w.empty());
    EXPECT_EQ(fields[0], "assertions") << "the thread's mistake is named first";
    EXPECT_NE(w[0].message.find("new build only"), std::string::npos) << w[0].message;
    for (const char* f : {"cpu_model", "compiler_flags", "vm_hint", "workload.critical_ns"})
        EXPECT_NE(std::find(fields.begin(), fields.end(), f), fields.end()) << f;
    EXPECT_EQ(std::find(fields.begin(), fields.end(), "kernel"), fields.end());

    base.provenance.assertions = true;
    other = base;
    const auto both = provenance_warnings(base, other);
    ASSERT_EQ(both.size(), 1u);
    EXPECT_NE(both[0].message.find("both builds"), std::string::npos);
}

// Every field of the workload that changes what the measured loop does is named when the two
// runs differ in it; one mutation at a time, so a field the check forgets fails on its own.
TEST(Compare, WarnsAboutEveryWorkloadField) {
    const auto base = run_with({cell("tas", 1, {1e6, 1e6})});
    using Mutation = void (*)(workload::RunSpec&);
    const std::vector<std::pair<const char*, Mutation>> mutations = {
        {"workload.stop", [](workload::RunSpec& s) { s.duration_ns = 123; }},
        {"workload.critical_ns", [](workload::RunSpec& s) { s.work.critical_ns = 7; }},
        {"workload.parallel_ns", [](workload::RunSpec& s) { s.work.parallel_ns = 7; }},
        {"workload.shared_lines", [](workload::RunSpec& s) { s.work.shared_lines = 3; }},
        {"workload.data",
         [](workload::RunSpec& s) { s.work.data = workload::DataPlacement::same_line; }},
        {"workload.pin", [](workload::RunSpec& s) { s.pin.mode = workload::PinMode::compact; }},
        {"workload.delay", [](workload::RunSpec& s) { s.delay = arch::Delay::none; }},
        {"workload.latency", [](workload::RunSpec& s) { s.latency = true; }},
    };
    for (const auto& [field, mutate] : mutations) {
        auto other = base;
        mutate(other.spec);
        const auto w = provenance_warnings(base, other);
        ASSERT_EQ(w.size(), 1u) << field;
        EXPECT_EQ(w[0].field, field);
    }
}

TEST(Compare, CellsWithoutTrialsAreNotCompared) {
    auto base = run_with({cell("tas", 1, {1e6, 1e6}), cell("cas", 1, {})});
    const auto r = compare_runs(base, base);
    EXPECT_EQ(r.cells.size(), 1u);
    EXPECT_TRUE(r.only_in_base.empty());
}

}  // namespace
}  // namespace lockprof::analysis
