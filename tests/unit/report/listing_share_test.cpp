// The text listing (sampling::render_function_listing) and the HTML report's instruction table
// show a row from the same share of the samples up: sampling::kListingShare.
#include <gtest/gtest.h>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/report/html_report.hpp"
#include "lockprof/sampling/annotate.hpp"

namespace lockprof::report {
namespace {

// A function too long to print whole: one instruction at the threshold, one just below it,
// far apart so that context lines around the first do not reach the second.
sampling::HotFunction long_function() {
    sampling::HotFunction f;
    f.name = f.short_name = "spin_here";
    f.module = "/bin/x";
    f.share = 1;
    for (unsigned i = 0; i < 80; ++i) {
        sampling::AnnotatedInstruction ai;
        ai.instruction.address = 0x1000 + 4 * i;
        ai.instruction.mnemonic = "nop";
        if (i == 10) ai.instruction.mnemonic = "at_threshold", ai.share = sampling::kListingShare;
        if (i == 60)
            ai.instruction.mnemonic = "below_threshold", ai.share = sampling::kListingShare * 0.99;
        ai.weight = ai.share * 1000;
        f.instructions.push_back(ai);
    }
    return f;
}

TEST(ListingShare, TextListingShowsRowsFromTheThresholdUp) {
    const std::string out = sampling::render_function_listing(long_function(), "acquire loop");
    EXPECT_NE(out.find("at_threshold"), std::string::npos) << out;
    EXPECT_EQ(out.find("below_threshold"), std::string::npos) << out;
}

TEST(ListingShare, HtmlTableShowsRowsFromTheThresholdUp) {
    workload::RunResult run;
    run.spec.locks = {"tas"};
    run.spec.threads = {2};
    run.spec.trials = 1;
    workload::CellResult cell;
    cell.lock = cell.algorithm = "tas";
    cell.threads = 2;
    workload::TrialResult trial;
    trial.wall_ns = 1'000'000;
    for (unsigned i = 0; i < 2; ++i) {
        workload::ThreadResult t;
        t.index = i;
        t.acquires = t.rmw_attempts = 1000;
        t.cpu_ns = t.end_ns = trial.wall_ns;
        trial.threads.push_back(t);
    }
    cell.trials.push_back(trial);
    run.cells.push_back(cell);
    const auto summaries = analysis::summarize(run);

    ReportExtras extras;
    sampling::CellAnnotation annotation;
    annotation.lock = "tas";
    annotation.threads = 2;
    annotation.samples = 1000;
    annotation.functions.push_back(long_function());
    extras.attribution = analysis::Attribution{{annotation}, {}};
    const std::string html = render_html_report(run, summaries, extras);
    EXPECT_NE(html.find("at_threshold"), std::string::npos);
    EXPECT_EQ(html.find("below_threshold"), std::string::npos);
}

}  // namespace
}  // namespace lockprof::report
