// Golden tests of the default command: table shape, JSON and CSV content, bad input.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

using lockprof::test::run_lockprof;
using lockprof::test::TempDir;

TEST(CliRun, HelpTeachesAndExitsZero) {
    auto r = run_lockprof({"--help"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("Usage:"), std::string::npos);
    EXPECT_NE(r.out.find("--lock"), std::string::npos);
    EXPECT_NE(r.out.find("Examples:"), std::string::npos);
    EXPECT_NE(r.out.find("list-locks"), std::string::npos);
}
