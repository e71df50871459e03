#include "lockprof/common/parse.hpp"

#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"

using namespace lockprof;

TEST(ParseDuration, Units) {
    EXPECT_EQ(parse_duration_ns("2s", "d"), 2'000'000'000u);
    EXPECT_EQ(parse_duration_ns("500ms", "d"), 500'000'000u);
    EXPECT_EQ(parse_duration_ns("1.5s", "d"), 1'500'000'000u);
    EXPECT_EQ(parse_duration_ns("250us", "d"), 250'000u);
    EXPECT_EQ(parse_duration_ns("100ns", "d"), 100u);
    EXPECT_EQ(parse_duration_ns("1m", "d"), 60'000'000'000u);
    EXPECT_EQ(parse_duration_ns("2min", "d"), 120'000'000'000u);
    EXPECT_EQ(parse_duration_ns("0ms", "d"), 0u);
}

// `--duration 100` once meant 100 s per trial without a word. A number needs its unit, and the
// refusal suggests the two likely ones; zero alone is zero in every unit (--warmup's default).
TEST(ParseDuration, ANumberWithoutItsUnitIsRefusedExceptZero) {
    const std::pair<const char*, std::string> cases[] = {
        {"100", "100"}, {"3", "3"}, {"1.5", "1.5"}, {" 250 ", "250"}};
    for (const auto& [bare, number] : cases) {
        try {
            parse_duration_ns(bare, "warmup");
            ADD_FAILURE() << "accepted '" << bare << "'";
        } catch (const UsageError& e) {
            const std::string message = e.what();
            EXPECT_EQ(message.rfind("--warmup: '", 0), 0u) << message;
            EXPECT_NE(message.find("has no unit"), std::string::npos) << message;
            EXPECT_NE(message.find(number + "ms or " + number + "s"), std::string::npos) << message;
            EXPECT_EQ(message.find('\n'), std::string::npos) << message;
            EXPECT_EQ(e.exit_code(), 2);
        }
    }
    EXPECT_EQ(parse_duration_ns("0", "warmup"), 0u);
    EXPECT_EQ(parse_duration_ns(" 0 ", "warmup"), 0u);
    EXPECT_EQ(parse_duration_ns("0.0", "warmup"), 0u);
}

TEST(ParseDuration, RejectsBadInputWithTheOptionName) {
    for (const char* bad : {"", "-1s", "abc", "1.2.3s", "5 parsecs", "1e3s", "s", ".", ".ms"}) {
        try {
            parse_duration_ns(bad, "duration");
            FAIL() << "accepted '" << bad << "'";
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("--duration"), std::string::npos) << e.what();
        }
    }
}

TEST(ParseCount, SuffixesAndErrors) {
    EXPECT_EQ(parse_count("50000", "n"), 50000u);
    EXPECT_EQ(parse_count("50k", "n"), 50000u);
    EXPECT_EQ(parse_count("2M", "n"), 2000000u);
    EXPECT_THROW(parse_count("-5", "n"), UsageError);
    EXPECT_THROW(parse_count("5x", "n"), UsageError);
    EXPECT_THROW(parse_count("", "n"), UsageError);
    EXPECT_THROW(parse_count("99999999999999999999", "n"), UsageError);
}

TEST(ParseLists, ThreadsAndRanges) {
    EXPECT_EQ(parse_thread_list("1,2,4", "t"), (std::vector<unsigned>{1, 2, 4}));
    EXPECT_EQ(parse_thread_list("1-3,8", "t"), (std::vector<unsigned>{1, 2, 3, 8}));
    EXPECT_THROW(parse_thread_list("", "t"), UsageError);
    EXPECT_THROW(parse_thread_list("0", "t"), UsageError);
    EXPECT_THROW(parse_thread_list("1,,2", "t"), UsageError);
    EXPECT_THROW(parse_thread_list("4-2", "t"), UsageError);
    EXPECT_THROW(parse_thread_list("two", "t"), UsageError);
    EXPECT_EQ(parse_cpu_list("0,2-3", "pin"), (std::vector<int>{0, 2, 3}));
}

TEST(DidYouMean, SuggestsCloseNamesOnly) {
    const std::vector<std::string> locks = {"tas", "ttas", "cas", "ticket", "mcs"};
    EXPECT_EQ(did_you_mean("tsa", locks), "tas");
    EXPECT_EQ(did_you_mean("tiket", locks), "ticket");
    EXPECT_EQ(did_you_mean("completely-different", locks), "");
}

TEST(FormatDuration, PicksUnit) {
    EXPECT_EQ(format_duration(850), "850.0 ns");
    EXPECT_EQ(format_duration(12500), "12.50 us");
    EXPECT_EQ(format_duration(2e9), "2.00 s");
}
