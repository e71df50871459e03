// The CSV field and JSON spread every lockprof document writes (run CSV, compare CSV; result
// file, compare JSON): one function each.
#include <gtest/gtest.h>

#include "lockprof/report/json.hpp"
#include "lockprof/report/run_report.hpp"

namespace lockprof::report {
namespace {

TEST(CsvField, QuotesOnlyWhatNeedsIt) {
    EXPECT_EQ(csv_field("tas@llsc"), "tas@llsc");
    EXPECT_EQ(csv_field(""), "");
    EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
    EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
    EXPECT_EQ(csv_field("runs/old, new.json"), "\"runs/old, new.json\"");
}

TEST(SpreadJson, MedianRangeRelativeSpreadAndTrials) {
    const analysis::Spread s = analysis::summarize({4, 2, 3});
    const auto j = spread_json(s);
    EXPECT_EQ(j.at("median"), 3.0);
    EXPECT_EQ(j.at("min"), 2.0);
    EXPECT_EQ(j.at("max"), 4.0);
    EXPECT_DOUBLE_EQ(j.at("relative_spread").get<double>(), s.relative_spread());
    EXPECT_EQ(j.at("trials").get<std::vector<double>>(), s.values);
    EXPECT_EQ(j.size(), 5u);
}

}  // namespace
}  // namespace lockprof::report
