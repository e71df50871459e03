// Option parsing that every subcommand shares (src/cli/arguments.hpp): no command guesses what
// an abbreviated option means.
#include <gtest/gtest.h>

#include "cli/cli_runner.hpp"

namespace lockprof::test {
namespace {

struct Abbreviation {
    std::vector<std::string> args;  // the command line, the abbreviation in it
    std::string abbreviation;       // unique prefix of one option of the command
};

// Boost.Program_options would take a unique prefix for the option it starts (`--thr` for
// `--threads`): a typo could then quietly mean another option, and adding an option could
// change what an old command line means. Every command refuses it, in one line, exit 2.
TEST(CliArguments, EveryCommandRefusesAnAbbreviatedOption) {
    for (const auto& [args, abbreviation] : std::vector<Abbreviation>{
             {{"--thr", "1"}, "--thr"},
             {{"run", "--thr", "1"}, "--thr"},
             {{"list-locks", "--disa"}, "--disa"},
             {{"annotate", "--annotate-t", "1", "samples.json"}, "--annotate-t"},
             {{"events", "--al"}, "--al"},
             {{"doctor", "--hel"}, "--hel"},
             {{"flamegraph", "--minw", "1", "-o", "-", "in.folded"}, "--minw"},
             {{"fold", "--roo", "comm", "perf.txt"}, "--roo"},
             {{"report", "--tit", "x", "-o", "r.html", "run.json"}, "--tit"},
             {{"record", "--no-count", "--", "true"}, "--no-count"},
             {{"compare", "--resampl", "100", "a.json", "b.json"}, "--resampl"},
         }) {
        const auto r = run_lockprof(args);
        const std::string what = args[0] + " " + abbreviation;
        EXPECT_EQ(r.exit_code, 2) << what << ": " << r.err;
        EXPECT_EQ(count_lines(r.err), 1) << what << ": " << r.err;
        EXPECT_NE(r.err.find("unknown option '" + abbreviation + "'"), std::string::npos)
            << what << ": " << r.err;
        EXPECT_TRUE(r.out.empty()) << what << ": " << r.out;
    }
}

// The refusal names the option the abbreviation starts, so the fix is one edit away.
TEST(CliArguments, AnAbbreviationSuggestsTheOptionItStarts) {
    const auto run = run_lockprof({"--thr", "1"});
    EXPECT_NE(run.err.find("(did you mean '--threads'?)"), std::string::npos) << run.err;
    const auto compare = run_lockprof({"compare", "--equiv", "5%", "a.json", "b.json"});
    EXPECT_NE(compare.err.find("compare: unknown option '--equiv' (did you mean "
                               "'--equivalence'?); see `lockprof compare --help`"),
              std::string::npos)
        << compare.err;
}

}  // namespace
}  // namespace lockprof::test
