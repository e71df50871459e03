// The three number formats (lockprof/common/number_format.hpp), at and around each threshold,
// and the earlier names that run_report and cli still call.
#include "lockprof/common/number_format.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

namespace lockprof {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(FormatSi, SuffixesAndThresholds) {
    EXPECT_EQ(format_si(0), "0");
    EXPECT_EQ(format_si(950), "950");
    EXPECT_EQ(format_si(0.84), "1");  // whole numbers below 10k
    EXPECT_EQ(format_si(9999), "9999");
    EXPECT_EQ(format_si(10000), "10.0k");
    EXPECT_EQ(format_si(12345), "12.3k");
    EXPECT_EQ(format_si(999999), "1000.0k");
    EXPECT_EQ(format_si(1e6), "1.00M");
    EXPECT_EQ(format_si(12345678), "12.35M");
    EXPECT_EQ(format_si(2.5e9), "2.50G");
    EXPECT_EQ(format_si(-2e6), "-2.00M");
    EXPECT_EQ(format_si(kNaN), "-");
    EXPECT_EQ(format_si(-kInf), "-");
}

TEST(FormatTableNumber, DecimalsShrinkAsTheValueGrows) {
    EXPECT_EQ(format_table_number(0), "0.00");
    EXPECT_EQ(format_table_number(0.84), "0.84");
    EXPECT_EQ(format_table_number(9.999), "10.00");
    EXPECT_EQ(format_table_number(10), "10.0");
    EXPECT_EQ(format_table_number(12.34), "12.3");
    EXPECT_EQ(format_table_number(100), "100");
    EXPECT_EQ(format_table_number(123456.7), "123457");
    EXPECT_EQ(format_table_number(2.5e6), "2.50M");
    EXPECT_EQ(format_table_number(-15), "-15.0");
    EXPECT_EQ(format_table_number(kInf), "-");
}

TEST(FormatFigure, AsTheExplanationQuotesThem) {
    EXPECT_EQ(format_figure(0), "0");
    EXPECT_EQ(format_figure(37.2), "37");
    EXPECT_EQ(format_figure(9.95), "10");
    EXPECT_EQ(format_figure(9.94), "9.9");
    EXPECT_EQ(format_figure(1.34), "1.3");
    EXPECT_EQ(format_figure(0.2), "0.2");
    EXPECT_EQ(format_figure(0.012), "0.012");
    EXPECT_EQ(format_figure(0.0012345), "0.0012");
    EXPECT_EQ(format_figure(1234.5), "1234");
}

}  // namespace
}  // namespace lockprof
