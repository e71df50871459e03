// End to end: a real run writes an HTML report (and a sampled run's saved samples become a
// report with hot instructions and the flamegraph); headless Chromium loads it offline, the
// DOM holds every plot and table, the console stays clean, and a screenshot is written to
// LOCKPROF_ARTIFACT_DIR/report. Skips, saying why, when chromium is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "integration/chromium.hpp"

namespace fs = std::filesystem;
using namespace lockprof::test;

namespace {

// Appended to a copy of the report: after layout, records whether the plots really have a
// size on screen (a DOM dump alone cannot tell a collapsed SVG from a drawn one).
const char* kLayoutProbe = R"(<script>
window.addEventListener("load", function () {
  var plots = document.querySelectorAll("svg.lp-plot"), drawn = 0;
  for (var i = 0; i < plots.length; i++) {
    var box = plots[i].getBoundingClientRect();
    if (box.width > 300 && box.height > 150) drawn++;
  }
  document.body.setAttribute("data-test-plots-drawn", String(drawn));
  document.body.setAttribute("data-test-markers",
      String(document.querySelectorAll("#plot-scalability .lp-series .lp-marker").length));
  document.body.setAttribute("data-test-plots", String(plots.length));
});
</script>
)";

}  // namespace

TEST(ReportChromium, LoadsOfflineWithPlotsTablesNoConsoleErrorsAndScreenshot) {
    const auto browser = find_program({"chromium", "chromium-browser", "google-chrome"});
    if (browser.empty())
        GTEST_SKIP() << "chromium not installed (Debian: apt-get install chromium): cannot check "
                        "the HTML report in a browser";
    TempDir dir;
    // A sampled run keeps its raw samples in s.json; the report reads them back.
    auto r = run_lockprof({"--lock=tas,ttas,ticket", "--threads=1,2,4", "--duration=30ms",
                           "--trials=3", "--latency", "--quiet", "--no-explain", "--sample",
                           "--sampler=timer", "--samples-out", (dir / "s.json").string(),
                           "--report", (dir / "live.html").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_lockprof({"report", (dir / "s.json").string(), "-o", (dir / "report.html").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;

    // The harness must notice a broken page, or a clean console below would mean nothing.
    std::ofstream(dir / "broken.html") << "<!DOCTYPE html><p>x</p><script>undefined_fn();</script>";
    auto broken = shell(chromium_command(browser, dir / "profile", "--dump-dom",
                                         "file://" + (dir / "broken.html").string()));
    ASSERT_EQ(broken.status, 0) << broken.err.substr(0, 2000);
    EXPECT_NE(console_errors(broken.err), "") << "the harness missed a deliberate script error";

    for (const char* name : {"live.html", "report.html"}) {
        std::string html = read_all(dir / name);
        html.insert(html.rfind("</body>"), kLayoutProbe);
        const std::string probed = std::string("probed-") + name;
        std::ofstream(dir / probed) << html;
        auto dom = shell(chromium_command(browser, dir / "profile", "--dump-dom",
                                          "file://" + (dir / probed).string()));
        ASSERT_EQ(dom.status, 0) << dom.err.substr(0, 2000);
        EXPECT_EQ(console_errors(dom.err), "") << name;
        for (const char* id :
             {"plot-scalability", "plot-cpu-ns", "plot-rmw", "plot-fairness", "plot-latency-p99",
              "results-table", "latency-table", "provenance", "explanation"})
            EXPECT_NE(dom.out.find(std::string("id=\"") + id + "\""), std::string::npos)
                << name << ": " << id;
        // At least 5 plots (more with counted events), each laid out at a real size; 3 locks x
        // 3 thread counts of markers.
        const std::string plots = dom_attribute(dom.out, "data-test-plots");
        ASSERT_NE(plots, "") << name << ": the layout probe did not run";
        EXPECT_GE(std::stoi(plots), 5) << name;
        EXPECT_EQ(dom_attribute(dom.out, "data-test-plots-drawn"), plots) << name;
        EXPECT_EQ(dom_attribute(dom.out, "data-test-markers"), "9") << name;
        EXPECT_EQ(occurrences(dom.out, "<tr><td><span class=\"swatch\""), 9 + 9)
            << name << ": 9 result rows and 9 latency rows";
    }
    // The saved samples give hot instructions and an embedded, script-driven flamegraph.
    const auto report = read_all(dir / "report.html");
    EXPECT_NE(report.find("<table class=\"asm\">"), std::string::npos);
    EXPECT_NE(report.find("<iframe class=\"flamegraph\""), std::string::npos);

    const fs::path artifacts = fs::path(LOCKPROF_ARTIFACT_DIR) / "report";
    fs::create_directories(artifacts);
    const auto png = artifacts / "report.png";
    fs::remove(png);
    auto shot = shell(chromium_command(
        browser, dir / "profile",
        "--hide-scrollbars --window-size=1200,3400 --screenshot=" + shell_quote(png.string()),
        "file://" + (dir / "report.html").string()));
    ASSERT_EQ(shot.status, 0) << shot.err.substr(0, 2000);
    ASSERT_TRUE(fs::exists(png)) << png;
    EXPECT_EQ(read_all(png).substr(1, 3), "PNG");
    EXPECT_GT(fs::file_size(png), 20000u) << "a report screenshot is not blank";
    // Keep the report next to its screenshot for people to open.
    fs::copy_file(dir / "report.html", artifacts / "report.html",
                  fs::copy_options::overwrite_existing);
    std::cout << "screenshot: " << png.string() << "\n";
}
