// The text listing (report::render_function_listing) and the HTML report's instruction table
// show a row from the same share of the samples up: report::kListingShare.
#include <gtest/gtest.h>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/report/html_report.hpp"
#include "lockprof/attribution/annotate.hpp"
#include "lockprof/report/annotation_report.hpp"
#include "report/html_page.hpp"

namespace lockprof::report {
namespace {

// A function too long to print whole: one instruction at the threshold, one just below it,
// far apart so that context lines around the first do not reach the second.
attribution::HotFunction long_function() {
    attribution::HotFunction f;
    f.name = f.short_name = "spin_here";
    f.module = "/bin/x";
    f.share = 1;
    for (unsigned i = 0; i < 80; ++i) {
        attribution::AnnotatedInstruction ai;
        ai.instruction.address = 0x1000 + 4 * i;
        ai.instruction.mnemonic = "nop";
        if (i == 10) ai.instruction.mnemonic = "at_threshold", ai.share = report::kListingShare;
        if (i == 60)
            ai.instruction.mnemonic = "below_threshold", ai.share = report::kListingShare * 0.99;
        ai.weight = ai.share * 1000;
        f.instructions.push_back(ai);
    }
    return f;
}

TEST(ListingShare, TextListingShowsRowsFromTheThresholdUp) {
    const std::string out = report::render_function_listing(long_function(), "acquire loop");
    EXPECT_NE(out.find("at_threshold"), std::string::npos) << out;
    EXPECT_EQ(out.find("below_threshold"), std::string::npos) << out;
}

// The HTML report of a one-cell run whose annotation lists `f`.
std::string html_listing(const attribution::HotFunction& f) {
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
    attribution::CellAnnotation annotation;
    annotation.lock = "tas";
    annotation.threads = 2;
    annotation.samples = 1000;
    annotation.functions.push_back(f);
    extras.attribution = attribution::RunAttribution{{annotation}, {}};
    return render_html_report(run, summaries, extras);
}

TEST(ListingShare, HtmlTableShowsRowsFromTheThresholdUp) {
    const std::string html = html_listing(long_function());
    EXPECT_NE(html.find("at_threshold"), std::string::npos);
    EXPECT_EQ(html.find("below_threshold"), std::string::npos);
}

// A function without line or inline information (built without -g) says so in the HTML
// report as the text listing does, and one with source lines does not.
TEST(ListingShare, HtmlTableSaysWhenAFunctionHasNoLineInformation) {
    const std::string note =
        "spin_here: no line or inline information (built without -g, or "
        "stripped): no source lines, no loop phases";
    EXPECT_NE(html_listing(long_function()).find(note), std::string::npos);
    auto with_lines = long_function();
    with_lines.instructions[10].source = "tas.hpp:29";
    const std::string html = html_listing(with_lines);
    EXPECT_EQ(html.find("no line or inline information"), std::string::npos);
    EXPECT_NE(html.find("tas.hpp:29"), std::string::npos);
}

// The HTML table shows each hot instruction with the one before it: skid puts the cost of a
// `lock cmpxchg` on the `jne` after it, and the report's reader must see the culprit (cas's
// table showed `45.1% jne` alone). Rows left out between are counted.
TEST(ListingShare, HtmlTableShowsTheInstructionBeforeEachHotOne) {
    auto f = long_function();
    f.instructions[39].instruction.mnemonic = "lock cmpxchg";
    f.instructions[40].instruction.mnemonic = "jne";
    f.instructions[40].share = 0.451;
    const auto rows = html::instruction_rows(f, 24);
    EXPECT_EQ(rows, (std::vector<std::size_t>{9, 10, 39, 40}));
    const std::string html = html_listing(f);
    const auto cmpxchg = html.find("lock cmpxchg");
    ASSERT_NE(cmpxchg, std::string::npos) << html;
    EXPECT_LT(cmpxchg, html.find(">jne<")) << html;
    EXPECT_NE(html.find("&hellip; 28 instructions not shown"), std::string::npos) << html;
}

}  // namespace
}  // namespace lockprof::report
