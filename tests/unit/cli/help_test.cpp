// What `--help` says about defaults comes from the code that applies them.
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "cli/cli.hpp"
#include "lockprof/pmu/counters.hpp"

namespace lockprof::cli {
namespace {

// A command's --help output with Boost's line wrapping undone (every run of whitespace one
// space), so a list that the wrap broke reads as one.
std::string help_of(int (*command)(const std::vector<std::string>&,
                                   const std::vector<std::string>&)) {
    std::ostringstream captured;
    auto* const old = std::cout.rdbuf(captured.rdbuf());
    const int status = command({"--help"}, {"lockprof"});
    std::cout.rdbuf(old);
    EXPECT_EQ(status, 0);
    std::string flat;
    for (char c : captured.str()) {
        const bool space = c == ' ' || c == '\n';
        if (space && (flat.empty() || flat.back() == ' ')) continue;
        flat += space ? ' ' : c;
    }
    return flat;
}

TEST(CliHelp, RecordListsTheDefaultEventsItCounts) {
    const std::string defaults = fmt::format("{}", fmt::join(pmu::default_event_names(), ", "));
    EXPECT_NE(help_of(record_command).find(defaults), std::string::npos)
        << "record --help should list: " << defaults;
}

// A run measures thread CPU time itself, so its defaults leave task_clock out.
TEST(CliHelp, RunListsTheDefaultEventsItCounts) {
    const std::string defaults =
        fmt::format("{}", fmt::join(pmu::default_event_names(/*with_task_clock=*/false), ", "));
    EXPECT_NE(help_of(run_command).find(defaults), std::string::npos)
        << "run --help should list: " << defaults;
}

}  // namespace
}  // namespace lockprof::cli
