#include <random>

#include <gtest/gtest.h>

#include "lockprof/workload/results.hpp"

using lockprof::workload::LatencyHistogram;

TEST(LatencyHistogram, SmallValuesAreExact) {
    LatencyHistogram h;
    for (std::uint64_t v = 0; v < 32; ++v) h.record(v);
    EXPECT_EQ(h.total(), 32u);
    EXPECT_EQ(h.quantile(0.5), 15u);
    EXPECT_EQ(h.quantile(1.0), 31u);
    EXPECT_EQ(h.max(), 31u);
}

TEST(LatencyHistogram, BucketsBoundRelativeError) {
    for (std::uint64_t v :
         std::vector<std::uint64_t>{33, 100, 1000, 123456789, 1ull << 40, UINT64_MAX / 3}) {
        const unsigned b = LatencyHistogram::bucket_of(v);
        const std::uint64_t upper = LatencyHistogram::bucket_upper(b);
        EXPECT_GE(upper, v);
        EXPECT_LE(static_cast<double>(upper - v), static_cast<double>(v) / 32.0) << v;
        EXPECT_LT(b, LatencyHistogram::kBuckets);
    }
}

TEST(LatencyHistogram, QuantilesOfAUniformSampleAndMerge) {
    LatencyHistogram a, b;
    std::mt19937_64 rng(7);
    for (int i = 0; i < 50000; ++i) a.record(1000 + rng() % 9000);
    for (int i = 0; i < 50000; ++i) b.record(1000 + rng() % 9000);
    a.merge(b);
    EXPECT_EQ(a.total(), 100000u);
    EXPECT_NEAR(static_cast<double>(a.quantile(0.5)), 5500, 5500 * 0.05);
    EXPECT_NEAR(static_cast<double>(a.quantile(0.99)), 9910, 9910 * 0.05);
    EXPECT_LE(a.quantile(0.999), a.max());
}

TEST(LatencyHistogram, SerialisedBucketsRoundTrip) {
    LatencyHistogram h, copy;
    for (std::uint64_t v : std::vector<std::uint64_t>{5, 70, 70, 9000}) h.record(v);
    for (auto [index, count] : h.nonzero()) copy.set_bucket(index, count);
    copy.set_max(h.max());
    EXPECT_EQ(copy.total(), h.total());
    EXPECT_EQ(copy.quantile(0.5), h.quantile(0.5));
    EXPECT_EQ(copy.quantile(1.0), h.quantile(1.0));
}
