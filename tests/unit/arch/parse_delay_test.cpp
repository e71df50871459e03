// Delay policy names: the one parser --delay, list-locks --delay and result files use.
#include <gtest/gtest.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/error.hpp"

namespace lockprof::arch {
namespace {

TEST(ParseDelay, EveryNameRoundTrips) {
    for (auto d : kAllDelays) EXPECT_EQ(parse_delay(delay_name(d), "--delay"), d);
}

std::string error_of(std::string_view name, std::string_view where) {
    try {
        parse_delay(name, where);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "no error";
}

TEST(ParseDelay, UnknownNamesSuggestTheClosestAndListAll) {
    EXPECT_EQ(error_of("paus", "--delay"),
              "--delay: unknown policy 'paus' (did you mean 'pause'?); choose none, pause, "
              "yield, isb or wfe");
    EXPECT_EQ(error_of("isbb", "list-locks --delay"),
              "list-locks --delay: unknown policy 'isbb' (did you mean 'isb'?); choose none, "
              "pause, yield, isb or wfe");
    EXPECT_EQ(error_of("sleepy", "delay in result"),
              "delay in result: unknown policy 'sleepy'; choose none, pause, yield, isb or wfe");
    EXPECT_EQ(error_of("", "--delay"),
              "--delay: unknown policy ''; choose none, pause, yield, isb or wfe");
    // Names are exact: no case folding.
    EXPECT_NE(error_of("PAUSE", "--delay"), "no error");
}

}  // namespace
}  // namespace lockprof::arch
