#include "lockprof/analysis/stats.hpp"

#include <gtest/gtest.h>

using namespace lockprof::analysis;

TEST(Stats, MedianOddAndEven) {
    EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
    EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
    EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(Stats, SummarizeKeepsRangeAndOrder) {
    auto s = summarize({10, 30, 20});
    EXPECT_DOUBLE_EQ(s.median, 20);
    EXPECT_DOUBLE_EQ(s.min, 10);
    EXPECT_DOUBLE_EQ(s.max, 30);
    EXPECT_DOUBLE_EQ(s.relative_spread(), 1.0);
    EXPECT_EQ(s.values, (std::vector<double>{10, 30, 20}));
    EXPECT_DOUBLE_EQ(summarize({5}).relative_spread(), 0);
}

TEST(Stats, RangesOverlap) {
    EXPECT_TRUE(ranges_overlap(summarize({1, 3}), summarize({2, 4})));
    EXPECT_FALSE(ranges_overlap(summarize({1, 2}), summarize({3, 4})));
    EXPECT_TRUE(ranges_overlap(summarize({1, 2}), summarize({2, 4})));  // touching counts
}

TEST(Stats, JainIndex) {
    EXPECT_DOUBLE_EQ(jain_index({5, 5, 5, 5}), 1.0);
    EXPECT_DOUBLE_EQ(jain_index({10, 0, 0, 0}), 0.25);  // 1/n: one thread has everything
    EXPECT_NEAR(jain_index({1, 2}), 9.0 / 10.0, 1e-12);
    EXPECT_DOUBLE_EQ(jain_index({}), 1.0);
    EXPECT_DOUBLE_EQ(jain_index({0, 0}), 1.0);
}

TEST(Stats, MinMaxAndCoefficientOfVariation) {
    EXPECT_DOUBLE_EQ(min_max_ratio({2, 4, 8}), 0.25);
    EXPECT_DOUBLE_EQ(min_max_ratio({0, 4}), 0.0);
    EXPECT_DOUBLE_EQ(coefficient_of_variation({3, 3, 3}), 0.0);
    // mean 2, population sd 1 -> 0.5
    EXPECT_DOUBLE_EQ(coefficient_of_variation({1, 3}), 0.5);
}
