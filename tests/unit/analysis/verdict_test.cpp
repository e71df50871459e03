// The one statistical engine: each verdict from synthetic trials of known distributions, the
// stated limits, Tukey outliers, the trials-to-settle estimate, and the interval's coverage over
// seeded simulations.
#include "lockprof/analysis/verdict.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "lockprof/common/error.hpp"

namespace lockprof::analysis {
namespace {

// Log-normal trials: exp(N(log(median), sigma)). Box-Muller over mt19937_64's raw output, so the
// draws are the same with every standard library.
class Trials {
  public:
    explicit Trials(std::uint64_t seed) : rng_(seed) {}
    double normal() {
        const double u1 = (static_cast<double>(rng_() >> 11) + 1) * 0x1.0p-53;
        const double u2 = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
        return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
    }
    std::vector<double> draw(std::size_t n, double median, double sigma) {
        std::vector<double> v;
        for (std::size_t i = 0; i < n; ++i) v.push_back(median * std::exp(sigma * normal()));
        return v;
    }

  private:
    std::mt19937_64 rng_;
};

TEST(Verdict, FasterAndSlowerWhenTheIntervalLiesOutsideTheBand) {
    Trials t(1);
    const auto base = t.draw(5, 100e6, 0.01);
    const auto fast = t.draw(5, 120e6, 0.01);
    const auto e = compare_trials(base, fast);
    EXPECT_EQ(e.verdict, Verdict::faster);
    ASSERT_TRUE(e.interval);
    EXPECT_GT(e.interval->low, 1.02);
    EXPECT_LT(e.interval->low, e.ratio);
    EXPECT_GT(e.interval->high, e.ratio);
    EXPECT_NEAR(e.ratio, 1.2, 0.03);
    EXPECT_EQ(settle_text(e), "");

    const auto slow = t.draw(5, 80e6, 0.01);
    const auto s = compare_trials(base, slow);
    EXPECT_EQ(s.verdict, Verdict::slower);
    EXPECT_LT(s.interval->high, 0.98);
}

TEST(Verdict, EquivalentOnlyWhenTheWholeIntervalIsInsideTheBand) {
    Trials t(2);
    const auto base = t.draw(8, 50e6, 0.002);
    const auto other = t.draw(8, 50.1e6, 0.002);
    const auto e = compare_trials(base, other);
    EXPECT_EQ(e.verdict, Verdict::equivalent);
    EXPECT_GE(e.interval->low, 0.98);
    EXPECT_LE(e.interval->high, 1.02);
    // The same trials with a band narrower than the interval: no longer equivalent.
    VerdictOptions narrow;
    narrow.equivalence = 0.0005;
    EXPECT_NE(compare_trials(base, other, narrow).verdict, Verdict::equivalent);
}

// The 2020 thread's failure mode: a wide spread and no rejection. That is inconclusive, never
// "the same", and the verdict says what would settle it.
TEST(Verdict, InconclusiveWithAWideSpreadSaysWhatWouldSettleIt) {
    Trials t(5);
    const auto base = t.draw(3, 100e6, 0.15);
    const auto other = t.draw(3, 108e6, 0.15);
    const auto e = compare_trials(base, other);
    ASSERT_EQ(e.verdict, Verdict::inconclusive);
    ASSERT_TRUE(e.trials_to_settle);
    EXPECT_GT(*e.trials_to_settle, 3u);
    EXPECT_NE(settle_text(e).find("trials per side would likely settle it at the observed "
                                  "spread"),
              std::string::npos)
        << settle_text(e);
}

// "Would likely settle": at the suggested count, drawn from distributions with the observed
// effect and spread, most simulated comparisons reach a verdict.
TEST(Verdict, TheSuggestedTrialCountUsuallySettlesIt) {
    const double sigma = 0.05;
    Trials t(6);
    const auto base = t.draw(4, 100, sigma);
    const auto other = t.draw(4, 100 * 1.06, sigma);
    const auto e = compare_trials(base, other);
    ASSERT_EQ(e.verdict, Verdict::inconclusive);
    ASSERT_TRUE(e.trials_to_settle);
    const unsigned n = *e.trials_to_settle;
    ASSERT_LE(n, 1000u);
    // Simulate at the observed effect and pooled spread.
    const double observed_sigma = sigma;  // the draws' own sigma; the estimate is close to it
    int settled = 0;
    for (int i = 0; i < 200; ++i) {
        const auto b = t.draw(n, 100, observed_sigma);
        const auto o = t.draw(n, 100 * e.ratio, observed_sigma);
        const auto s = compare_trials(b, o);
        settled += s.verdict != Verdict::inconclusive;
    }
    EXPECT_GE(settled, 60) << n << " trials per side settled only " << settled << " of 200";
}

TEST(Verdict, TooFewTrialsIsAStatedLimitNotAnInterval) {
    const auto e = compare_trials({100, 101}, {120, 121});
    EXPECT_EQ(e.verdict, Verdict::too_few_trials);
    EXPECT_FALSE(e.interval) << "never an interval like [0, 1] from 2 trials";
    EXPECT_EQ(e.limit,
              "2 trials per side: too few for an interval (at least 3 per side); run --trials 5 "
              "or more");
    EXPECT_EQ(interval_text(e), "-");
    EXPECT_EQ(verdict_text(e), "too few trials (2 per side)");
    EXPECT_NEAR(e.ratio, std::sqrt(120.0 * 121) / std::sqrt(100.0 * 101), 1e-12);
    EXPECT_EQ(effect_text(e), "1.20x, too few trials (2 per side)");

    const auto one = compare_trials({100}, {120, 121, 119});
    EXPECT_EQ(one.verdict, Verdict::too_few_trials);
    EXPECT_EQ(one.limit.rfind("1 trial on one side: too few for an interval", 0), 0u) << one.limit;
}

TEST(Verdict, AZeroTrialHasNoRatio) {
    const auto e = compare_trials({100, 0, 101}, {120, 121, 119});
    EXPECT_EQ(e.verdict, Verdict::no_ratio);
    EXPECT_FALSE(e.interval);
    EXPECT_FALSE(e.limit.empty());
    EXPECT_EQ(compare_trials({}, {1, 2, 3}).verdict, Verdict::no_ratio);
}

TEST(Verdict, IdenticalTrialsAreEquivalentWithAZeroWidthInterval) {
    const auto e = compare_trials({5, 5, 5}, {5, 5, 5});
    EXPECT_EQ(e.verdict, Verdict::equivalent);
    EXPECT_DOUBLE_EQ(e.interval->low, 1);
    EXPECT_DOUBLE_EQ(e.interval->high, 1);
}

TEST(Verdict, TukeyOutliersAreFlaggedAndKept) {
    const std::vector<double> base = {100, 101, 99, 100.5, 99.5, 160};
    EXPECT_EQ(tukey_outliers(base), std::vector<std::size_t>{5});
    EXPECT_TRUE(tukey_outliers({1, 2, 100}).empty()) << "fewer than 4 values: no fences";
    const auto e = compare_trials(base, {100, 101, 99, 100.5, 99.5, 100.2});
    EXPECT_EQ(e.base_outliers, std::vector<std::size_t>{5});
    EXPECT_TRUE(e.other_outliers.empty());
    // Kept: the geometric mean includes the outlier, so the ratio is below 1.
    EXPECT_LT(e.ratio, 0.95);
    EXPECT_EQ(outlier_text(e, "base", "new"), "outliers (Tukey fences) kept: base trial 6");
}

TEST(Verdict, BonferroniWidensEachIntervalOfAFamily) {
    EXPECT_DOUBLE_EQ(corrected_level(0.95, 1), 0.95);
    EXPECT_NEAR(corrected_level(0.95, 10), 0.995, 1e-12);
    Trials t(5);
    const auto base = t.draw(5, 100, 0.05);
    const auto other = t.draw(5, 103, 0.05);
    const auto one = compare_trials(base, other, {}, 1);
    const auto of_ten = compare_trials(base, other, {}, 10);
    EXPECT_LT(of_ten.interval->low, one.interval->low);
    EXPECT_GT(of_ten.interval->high, one.interval->high);
    EXPECT_EQ(of_ten.family, 10u);
    EXPECT_NE(method_text({}, 10).find("Bonferroni: 95% over 10 comparisons"), std::string::npos)
        << method_text({}, 10);
}

TEST(Verdict, TQuantilesMatchTables) {
    EXPECT_NEAR(t_quantile(0.975, 4), 2.776, 1e-3);
    EXPECT_NEAR(t_quantile(0.975, 1e6), 1.960, 1e-3);
    EXPECT_NEAR(t_quantile(0.995, 10), 3.169, 1e-3);
    // Computed in double (verdict.cpp says why), it still agrees with Boost's long double
    // computation to 1e-12 relative, at the Welch-style fractional degrees of freedom and the
    // Bonferroni-corrected levels it is asked for.
    const struct {
        double p, df, long_double;
    } cases[] = {{0.975, 4, 2.7764451051977934},
                 {0.995, 10, 3.1692726726169509},
                 {0.999375, 7.3, 5.0871813320659278},
                 {0.6, 2.5, 0.28145951274854758},
                 {0.99995, 38, 4.3455806673746702}};
    for (const auto& c : cases)
        EXPECT_NEAR(t_quantile(c.p, c.df), c.long_double, 1e-12 * c.long_double)
            << "p " << c.p << ", df " << c.df;
}

// 95% intervals cover the true ratio in about 95% of seeded simulations: equal and unequal
// spreads, few and more trials. A generous band, so the test checks the method, not the seed.
TEST(Verdict, IntervalsCoverTheTrueRatioAtTheirStatedLevel) {
    struct Case {
        std::size_t nb, no;
        double sigma_b, sigma_o, ratio;
    };
    for (const Case c : {Case{5, 5, 0.05, 0.05, 1.10}, Case{3, 3, 0.10, 0.10, 1.0},
                         Case{3, 8, 0.02, 0.10, 0.9}, Case{10, 10, 0.20, 0.05, 1.5}}) {
        Trials t(42);
        int covered = 0;
        for (int i = 0; i < 1000; ++i) {
            const auto base = t.draw(c.nb, 1e6, c.sigma_b);
            const auto other = t.draw(c.no, 1e6 * c.ratio, c.sigma_o);
            const auto e = compare_trials(base, other);
            ASSERT_TRUE(e.interval);
            covered += e.interval->low <= c.ratio && c.ratio <= e.interval->high;
        }
        EXPECT_GE(covered, 900) << c.nb << " vs " << c.no << " trials";
        EXPECT_LE(covered, 990) << c.nb << " vs " << c.no << " trials";
    }
}

// With the Bonferroni correction, all 8 intervals of a family cover together in at least 95%
// of simulations (Bonferroni is conservative: usually more).
TEST(Verdict, AFamilyOfIntervalsCoversTogether) {
    Trials t(7);
    int all_covered = 0;
    for (int i = 0; i < 500; ++i) {
        bool all = true;
        for (int k = 0; k < 8; ++k) {
            const auto base = t.draw(5, 1e6, 0.05);
            const auto other = t.draw(5, 1.05e6, 0.05);
            const auto e = compare_trials(base, other, {}, 8);
            all = all && e.interval->low <= 1.05 && 1.05 <= e.interval->high;
        }
        all_covered += all;
    }
    EXPECT_GE(all_covered, 450);
}

TEST(Verdict, EquivalenceParsesPercentOrFraction) {
    EXPECT_DOUBLE_EQ(parse_equivalence("5%"), 0.05);
    EXPECT_DOUBLE_EQ(parse_equivalence("0.05"), 0.05);
    EXPECT_DOUBLE_EQ(parse_equivalence("2.5%"), 0.025);
    for (const char* bad : {"5", "60%", "0%", "x", "", "-1%"})
        EXPECT_THROW(parse_equivalence(bad), UsageError) << bad;
    try {
        parse_equivalence("5");
    } catch (const UsageError& e) {
        EXPECT_STREQ(e.what(),
                     "--equivalence: '5' is ambiguous without a unit; write 5% or a fraction "
                     "like 0.05");
    }
    EXPECT_EQ(band_text(0.05), "±5%");
}

}  // namespace
}  // namespace lockprof::analysis
