#include "lockprof/report/html_report.hpp"

#include <gtest/gtest.h>

#include "lockprof/common/number_format.hpp"
#include <libxml/HTMLparser.h>

#include <regex>
#include <set>

namespace lockprof::report {
namespace {

workload::CellResult cell(const std::string& lock, unsigned threads, double rate, bool latency,
                          bool counters) {
    workload::CellResult c;
    c.lock = c.algorithm = lock;
    c.threads = threads;
    for (unsigned trial = 0; trial < 3; ++trial) {
        workload::TrialResult t;
        t.trial = trial;
        t.wall_ns = 1'000'000'000;
        t.ticks = 2'000'000'000;
        for (unsigned i = 0; i < threads; ++i) {
            workload::ThreadResult th;
            th.index = i;
            th.acquires = static_cast<std::uint64_t>(rate / threads * (1 + 0.01 * trial));
            th.rmw_attempts = th.acquires * threads;
            th.spin_iterations = th.acquires;
            th.cpu_ns = t.wall_ns;
            th.end_ns = t.wall_ns;
            if (latency)
                for (std::uint64_t v : {40, 50, 60, 900}) th.latency.record(v);
            if (counters) th.counters.push_back({"cycles", th.acquires * 40 * threads, 1000, 1000});
            t.threads.push_back(th);
        }
        c.trials.push_back(t);
    }
    return c;
}

workload::RunResult synthetic_run(bool assertions) {
    workload::RunResult run;
    auto& p = run.provenance;
    p.lockprof_version = "0.1.0";
    p.git_revision = "abc123";
    p.command_line = "lockprof --lock=tas,cas --threads=1,2,4 --report r.html";
    p.timestamp_utc = "2024-01-02T03:04:05Z";
    p.arch = "aarch64";
    p.cpu_model = "Neoverse-N1 <test>";
    p.lse = true;
    p.kernel = "6.1.0-test";
    p.perf_event_paranoid = 2;
    p.vm_hint = "kvm";
    p.compiler = "GNU 12.2.0";
    p.compiler_flags = "-O2 -g";
    p.build_type = assertions ? "Debug" : "RelWithDebInfo";
    p.assertions = assertions;
    run.spec.locks = {"tas", "cas"};
    run.spec.threads = {1, 2, 4};
    run.spec.duration_ns = 1'000'000'000;
    run.spec.trials = 3;
    run.spec.latency = true;
    run.calibration.ticks_per_ns = 1;
    run.notes = {"dropped event stxr_fail: not supported here"};
    for (unsigned t : {1u, 2u, 4u}) {
        run.cells.push_back(cell("tas", t, 40e6 / t, true, true));
        run.cells.push_back(cell("cas", t, 30e6 / t, true, true));
    }
    return run;
}

bool parses_as_html(const std::string& html) {
    htmlDocPtr doc = htmlReadMemory(html.data(), static_cast<int>(html.size()), "r.html", "utf-8",
                                    HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
    const bool ok = doc != nullptr;
    xmlFreeDoc(doc);
    return ok;
}

TEST(HtmlReport, HasEverySectionPlotAndTable) {
    const auto run = synthetic_run(false);
    const auto summaries = analysis::summarize(run);
    const auto extras = with_flamegraph(analysis::gather_report_inputs(run, summaries, {}), run);
    const auto html = render_html_report(run, summaries, extras);
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_TRUE(parses_as_html(html));
    for (const char* id :
         {"provenance", "throughput", "per-acquire", "fairness", "latency", "explanation",
          "annotation", "flamegraph", "results-table", "latency-table", "plot-scalability",
          "plot-cpu-ns", "plot-rmw", "plot-event-cycles", "plot-fairness", "plot-latency-p99"})
        EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
    // Provenance, escaped; assertions off is not alarming.
    EXPECT_NE(html.find("Neoverse-N1 &lt;test&gt;"), std::string::npos);
    EXPECT_NE(html.find("--lock=tas,cas --threads=1,2,4"), std::string::npos);
    EXPECT_NE(html.find("<dt>LSE atomics</dt><dd>yes</dd>"), std::string::npos);
    EXPECT_EQ(html.find("assertions-banner"), std::string::npos);
    EXPECT_NE(html.find("dropped event stxr_fail"), std::string::npos);
    EXPECT_NE(html.find("not in this report: hot instructions and flamegraph"), std::string::npos);
    // Both locks appear in the legend of every plot with the same colour.
    const std::regex legend(
        "lp-series\" data-name=\"tas\">\\n<path class=\"lp-line\" d=\"[^\"]*\" "
        "fill=\"none\" stroke=\"(#[0-9A-F]{6})\"");
    std::set<std::string> tas_colours;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), legend);
         it != std::sregex_iterator(); ++it)
        tas_colours.insert((*it)[1].str());
    EXPECT_EQ(tas_colours.size(), 1u);
    // The explanation of the pair is there (two locks at three thread counts).
    EXPECT_NE(html.find("cas vs tas, 4 threads"), std::string::npos);
    EXPECT_NE(html.find("@media print"), std::string::npos);
}

// The results table's `vs first` comes from the one engine, with the method under the table.
TEST(HtmlReport, VersusFirstCarriesTheVerdictAndTheMethod) {
    const auto run = synthetic_run(false);
    const auto summaries = analysis::summarize(run);
    const auto html = render_html_report(run, summaries, ReportExtras{});
    EXPECT_NE(html.find("<td>0.75x slower</td>"), std::string::npos) << "cas is 25% slower";
    EXPECT_NE(html.find("<ul class=\"muted verdict-notes\">"), std::string::npos);
    EXPECT_NE(html.find("(Bonferroni: 95% over 3 comparisons)"), std::string::npos);
    EXPECT_EQ(html.find("noise"), std::string::npos) << "never 'within noise'";
    EXPECT_NE(html.find("<dt>CPU frequency</dt><dd>governor unknown (no cpufreq), boost "
                        "unknown</dd>"),
              std::string::npos);
}

TEST(HtmlReport, IsSelfContained) {
    const auto run = synthetic_run(false);
    const auto summaries = analysis::summarize(run);
    ReportExtras extras = with_flamegraph(analysis::gather_report_inputs(run, summaries, {}), run);
    extras.flamegraph_svg =
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" "
        "height=\"77\"><text>x</text></svg>";
    const auto html = render_html_report(run, summaries, extras);
    // Nothing is fetched: every http(s) URL is the SVG namespace name, which is never loaded.
    const std::regex url("https?://[^\"' )]*");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), url);
         it != std::sregex_iterator(); ++it)
        EXPECT_EQ(it->str(), "http://www.w3.org/2000/svg");
    for (const char* external : {"<script src", "<link", "@import", "url("})
        EXPECT_EQ(html.find(external), std::string::npos) << external;
    EXPECT_NE(html.find("src=\"data:image/svg+xml;base64," + base64(extras.flamegraph_svg)),
              std::string::npos);
    EXPECT_NE(html.find("height=\"81\""), std::string::npos) << "iframe sized to the graph";
}

TEST(HtmlReport, AssertionsOnAreHighlighted) {
    const auto run = synthetic_run(true);
    const auto summaries = analysis::summarize(run);
    const auto html = render_html_report(
        run, summaries, with_flamegraph(analysis::gather_report_inputs(run, summaries, {}), run));
    EXPECT_NE(html.find("id=\"assertions-banner\""), std::string::npos);
    EXPECT_NE(html.find("<dd class=\"alert\">ON: numbers not representative"), std::string::npos);
    EXPECT_NE(html.find("ASSERTIONS ON"), std::string::npos) << "in the plot subtitle too";
}

// The report shows what the text table shows: sleeps and the full-concurrency share where some
// cell needs them (the same rule, report::optional_columns), and the measured work next to the
// requested.
TEST(HtmlReport, ShowsSleepsFullConcurrencyAndMeasuredWork) {
    auto run = synthetic_run(false);
    run.spec.work.critical_ns = 100;
    {
        const auto summaries = analysis::summarize(run);
        const auto html = render_html_report(
            run, summaries,
            with_flamegraph(analysis::gather_report_inputs(run, summaries, {}), run));
        EXPECT_EQ(html.find("<th>sleeps/acq</th>"), std::string::npos);
        EXPECT_EQ(html.find("<th>all-run</th>"), std::string::npos);
        EXPECT_EQ(html.find("(measured"), std::string::npos) << "no worker measured anything";
    }
    for (auto& c : run.cells)
        for (auto& t : c.trials)
            for (auto& th : t.threads) th.critical_work_ns = 98.5;
    for (auto& t : run.cells[5].trials) {  // cas, 4 threads: one sleeps, one ends at a quarter
        t.threads[0].sleeps = 7;
        t.threads[1].end_ns = t.wall_ns / 4;
    }
    const auto summaries = analysis::summarize(run);
    const auto html = render_html_report(
        run, summaries, with_flamegraph(analysis::gather_report_inputs(run, summaries, {}), run));
    EXPECT_TRUE(parses_as_html(html));
    EXPECT_NE(html.find("critical 100 ns (measured 98.5 ns)"), std::string::npos);
    EXPECT_NE(html.find("<th>sleeps/acq</th>"), std::string::npos);
    EXPECT_NE(html.find("<th>all-run</th>"), std::string::npos);
    EXPECT_NE(html.find("<td>25%</td>"), std::string::npos);
    EXPECT_NE(html.find("cas with 4 threads: all threads ran at once for only 25%"),
              std::string::npos);
}

TEST(HtmlReport, SaysWhatIsMissing) {
    auto run = synthetic_run(false);
    run.spec.latency = false;
    for (auto& c : run.cells)
        for (auto& t : c.trials)
            for (auto& th : t.threads) th.latency = {}, th.counters.clear();
    run.sampling = measure::SamplingInfo{};
    const auto summaries = analysis::summarize(run);
    const auto extras = with_flamegraph(analysis::gather_report_inputs(run, summaries, {}), run);
    ASSERT_EQ(extras.omitted.size(), 1u);
    EXPECT_NE(extras.omitted[0].find("--samples-out"), std::string::npos);
    const auto html = render_html_report(run, summaries, extras);
    EXPECT_NE(html.find("run with <code>--latency</code>"), std::string::npos);
    EXPECT_NE(html.find("No PMU events were counted"), std::string::npos);
    EXPECT_EQ(html.find("id=\"plot-latency-p99\""), std::string::npos);
    EXPECT_EQ(html.find("id=\"plot-event-"), std::string::npos);
    EXPECT_NE(html.find("holds no raw samples"), std::string::npos);
}

// The provenance says what the hypervisor took, highlighted when it was a lot, with the run's
// one steal note; a run without steal figures says unknown.
TEST(HtmlReport, ProvenanceShowsTheHypervisorsSteal) {
    auto run = synthetic_run(false);
    const auto unknown = render_html_report(run, analysis::summarize(run), ReportExtras{});
    EXPECT_NE(unknown.find("<dt>hypervisor steal</dt><dd>unknown: not measured in any trial"),
              std::string::npos);
    for (auto& c : run.cells)
        for (auto& t : c.trials)
            t.steal = workload::TrialSteal{
                {0, 1}, t.trial == 0 ? 240'000'000u : 0u, 1'000'000'000, 10'000'000};
    const auto html = render_html_report(run, analysis::summarize(run), ReportExtras{});
    EXPECT_NE(html.find("<dt>hypervisor steal</dt><dd class=\"alert\">measured in 18 of 18 trials "
                        "(/proc/stat, 10 ms per CPU): median 0.0%, at most 12.0%"),
              std::string::npos)
        << html.substr(html.find("hypervisor steal"), 300);
    EXPECT_NE(html.find("<li>hypervisor steal: the hypervisor took 12% of the threads&apos; CPUs "
                        "in 6 of 18 trials"),
              std::string::npos)
        << html.substr(html.find("<h3>Notes"), 600);
}

// The provenance says how exclusion was proven, and alerts when a cell failed it; a file from
// before verification trials has no such row.
TEST(HtmlReport, ProvenanceShowsTheExclusionVerification) {
    auto run = synthetic_run(false);
    EXPECT_EQ(
        render_html_report(run, analysis::summarize(run), ReportExtras{}).find("<dt>exclusion"),
        std::string::npos);
    for (auto& c : run.cells)
        c.verification = workload::Verification{1, 2'000'000, 200'000'000, 0, 0};
    auto html = render_html_report(run, analysis::summarize(run), ReportExtras{});
    EXPECT_NE(html.find("<dt>exclusion</dt><dd>no second holder in " +
                        format_si(2e6 * static_cast<double>(run.cells.size())) +
                        " checked acquires (a verification trial in each of"),
              std::string::npos)
        << html.substr(html.find("<dt>exclusion"), 300);
    run.cells[0].verification->overlaps = run.cells[0].overlaps = 3;
    html = render_html_report(run, analysis::summarize(run), ReportExtras{});
    EXPECT_NE(html.find("<dt>exclusion</dt><dd class=\"alert\">FAILED for " + run.cells[0].lock),
              std::string::npos)
        << html.substr(html.find("<dt>exclusion"), 300);
}

TEST(HtmlReport, Base64MatchesRfc4648) {
    EXPECT_EQ(base64(""), "");
    EXPECT_EQ(base64("f"), "Zg==");
    EXPECT_EQ(base64("fo"), "Zm8=");
    EXPECT_EQ(base64("foo"), "Zm9v");
    EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
    EXPECT_EQ(base64(std::string("\xff\x00\x80", 3)), "/wCA");
}

}  // namespace
}  // namespace lockprof::report
