// What `--help` says about defaults comes from the code that applies them.
#include <algorithm>
#include <iostream>
#include <regex>
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

// --help says what an option does, which holds on every reader's machine; a figure measured on
// the developers' ("2-thread tas ran at half its rate here") does not. The README may keep a
// measured example, saying how and where it was measured (issue 30).
TEST(CliHelp, NoCommandQuotesAFigureMeasuredOnSomeMachine) {
    const std::regex measured(
        R"(\b(ran|measured) at\b|\bhalf its (rate|speed|throughput)\b|\bhere until\b|)"
        R"(\b\d+(\.\d+)? ?[kMG]? ?(acquires/s|acq/s|M/s|ops/s)|\b\d+(\.\d+)? ?x (faster|slower)\b|)"
        R"(\b(development|dev) (VM|machine|box)\b)",
        std::regex::icase);
    for (const auto& command : commands()) {
        const std::string help = help_of(command.run);
        std::smatch m;
        if (std::regex_search(help, m, measured))
            ADD_FAILURE() << "lockprof " << command.name << " --help quotes a measurement: ..."
                          << help.substr(static_cast<std::size_t>(
                                             std::max<std::ptrdiff_t>(0, m.position(0) - 80)),
                                         200)
                          << "...";
    }
}

}  // namespace
}  // namespace lockprof::cli
