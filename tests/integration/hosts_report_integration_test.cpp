// End to end: the cross-host report of this machine's run and the emulated hosts' results
// (tests/cli/fixtures/hosts) loads offline in headless Chromium with its verdict rows, both
// plots laid out at a real size and the provenance table, the console stays clean, and a
// screenshot is written to LOCKPROF_ARTIFACT_DIR/hosts-report. Skips, saying why, when
// chromium is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "integration/chromium.hpp"

namespace fs = std::filesystem;
using namespace lockprof::test;

namespace {

// After layout: how many plots have a real size, and how many lines each has.
const char* kHostsProbe = R"(<script>
window.addEventListener("load", function () {
  var plots = document.querySelectorAll("svg.lp-plot"), drawn = 0;
  for (var i = 0; i < plots.length; i++) {
    var box = plots[i].getBoundingClientRect();
    if (box.width > 300 && box.height > 150) drawn++;
  }
  document.body.setAttribute("data-test-plots", String(plots.length));
  document.body.setAttribute("data-test-plots-drawn", String(drawn));
  document.body.setAttribute("data-test-lines",
      String(document.querySelectorAll("#plot-hosts .lp-line").length));
  document.body.setAttribute("data-test-rows",
      String(document.querySelectorAll("#pair-1 tbody tr").length));
  document.body.setAttribute("data-test-explains",
      String(document.querySelectorAll("#hosts-provenance tr.explains").length));
});
</script>
)";

}  // namespace

TEST(HostsReportChromium, FourHostsRenderWithRowsPlotsAndProvenance) {
    const auto browser = find_program({"chromium", "chromium-browser", "google-chrome"});
    if (browser.empty())
        GTEST_SKIP() << "chromium not installed (Debian: apt-get install chromium): cannot check "
                        "the cross-host report in a browser";
    TempDir dir;
    auto r = run_lockprof({"run", "--lock", "tas,cas", "--threads", "1,2", "--duration", "20ms",
                           "--trials", "5", "-q", "--output", (dir / "this.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> args{"report", "this-host=" + (dir / "this.json").string()};
    const fs::path fixtures = fs::path(LOCKPROF_SOURCE_DIR) / "tests/cli/fixtures/hosts";
    for (const auto& e : fs::directory_iterator(fixtures))
        if (e.path().extension() == ".json") args.push_back(e.path().string());
    std::sort(args.begin() + 2, args.end());
    const std::size_t hosts = args.size() - 1;
    ASSERT_GE(hosts, 4u) << "this host and at least three emulated ones";
    args.insert(args.end(), {"-o", (dir / "hosts.html").string(), "--title", "cas vs tas, hosts"});
    r = run_lockprof(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;

    std::string html = read_all(dir / "hosts.html");
    html.insert(html.rfind("</body>"), kHostsProbe);
    std::ofstream(dir / "probed.html") << html;
    auto dom = shell(chromium_command(browser, dir / "profile", "--dump-dom",
                                      "file://" + (dir / "probed.html").string()));
    ASSERT_EQ(dom.status, 0) << dom.err.substr(0, 2000);
    EXPECT_EQ(console_errors(dom.err), "");
    ASSERT_NE(dom_attribute(dom.out, "data-test-plots"), "") << "the layout probe did not run";
    EXPECT_EQ(dom_attribute(dom.out, "data-test-plots"), "2");
    EXPECT_EQ(dom_attribute(dom.out, "data-test-plots-drawn"), "2");
    EXPECT_EQ(dom_attribute(dom.out, "data-test-lines"), std::to_string(2 * hosts))
        << "a line per host and lock";
    EXPECT_EQ(dom_attribute(dom.out, "data-test-rows"), std::to_string(hosts))
        << "a verdict row per host";
    EXPECT_GE(std::stoi(dom_attribute(dom.out, "data-test-explains")), 1)
        << "LSE differs between the emulated hosts";

    const fs::path artifacts = fs::path(LOCKPROF_ARTIFACT_DIR) / "hosts-report";
    fs::create_directories(artifacts);
    const auto png = artifacts / "hosts.png";
    fs::remove(png);
    auto shot = shell(chromium_command(
        browser, dir / "profile",
        "--hide-scrollbars --window-size=1200,2600 --screenshot=" + shell_quote(png.string()),
        "file://" + (dir / "hosts.html").string()));
    ASSERT_EQ(shot.status, 0) << shot.err.substr(0, 2000);
    ASSERT_TRUE(fs::exists(png)) << png;
    EXPECT_EQ(read_all(png).substr(1, 3), "PNG");
    EXPECT_GT(fs::file_size(png), 20000u) << "a report screenshot is not blank";
    fs::copy_file(dir / "hosts.html", artifacts / "hosts.html",
                  fs::copy_options::overwrite_existing);
    std::cout << "screenshot: " << png.string() << "\n";
}
