// End to end: flamegraph SVGs run in a real browser (headless Chromium) without script errors,
// their zoom/search code works there, and a real `perf record -g` recording round-trips
// through `perf script | lockprof fold | lockprof flamegraph`. Each test skips, saying why,
// when its tool (chromium, perf) is missing. Screenshots land in LOCKPROF_ARTIFACT_DIR/flamegraph.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cli/cli_runner.hpp"
#include "integration/chromium.hpp"

namespace fs = std::filesystem;
using lockprof::test::chromium_command;
using lockprof::test::dom_attribute;
using lockprof::test::find_program;
using lockprof::test::read_all;
using lockprof::test::run_lockprof;
using lockprof::test::shell;
using lockprof::test::shell_quote;
using lockprof::test::ShellResult;
using lockprof::test::TempDir;

namespace {

// Script errors show up on the root element (the SVG's error handler) and as console lines.
std::string script_errors(const ShellResult& run) {
    std::string found;
    std::smatch m;
    if (std::regex_search(run.out, m, std::regex("data-lockprof-error=\"([^\"]*)\"")))
        found += "error attribute: " + m[1].str() + "\n";
    std::istringstream err(run.err);
    for (std::string line; std::getline(err, line);)
        if (line.find(":CONSOLE") != std::string::npos &&
            (line.find("Uncaught") != std::string::npos || line.find("Error") != std::string::npos))
            found += line + "\n";
    return found;
}

// A test driver appended to a copy of the SVG: after the SVG's own init it zooms into a frame,
// resets, and searches, recording what the real script did on the root element.
std::string with_driver(std::string svg, const std::string& zoom_to) {
    const std::string driver = R"(<script type="text/ecmascript"><![CDATA[
window.addEventListener("load", function () {
  var root = document.documentElement, gs = document.getElementById("frames").getElementsByTagName("g");
  var target = null;
  for (var i = 0; i < gs.length; i++) if (gs[i].lp && gs[i].lp.name === ")" +
                               zoom_to + R"(") target = gs[i];
  zoom(target);
  var hidden = 0;
  for (var j = 0; j < gs.length; j++) if (gs[j].classList.contains("hide")) hidden++;
  root.setAttribute("data-test-zoom-width", target.lp.rect.getAttribute("width"));
  root.setAttribute("data-test-hidden", String(hidden));
  unzoom();
  root.setAttribute("data-test-unzoom-width", target.lp.rect.getAttribute("width"));
  search("^lock$");
  root.setAttribute("data-test-done", "1");
});
]]></script>
)";
    svg.insert(svg.rfind("</svg>"), driver);
    return svg;
}

}  // namespace

TEST(FlamegraphChromium, RendersWithoutScriptErrorsZoomsSearchesAndScreenshots) {
    const auto browser = find_program({"chromium", "chromium-browser", "google-chrome"});
    if (browser.empty())
        GTEST_SKIP() << "chromium not installed (Debian: apt-get install chromium; "
                        "scripts/setup.sh --extras): cannot check the SVG in a browser";
    TempDir dir;
    std::ofstream(dir / "in.folded") << "all-cells;tas/4t;main;lock;s_lock 600\n"
                                        "all-cells;tas/4t;main;lock;s_lock;s_lock+0x1c stxr 250\n"
                                        "all-cells;tas/4t;main;work 100\n"
                                        "all-cells;cas/4t;main;lock 300\n"
                                        "all-cells;cas/4t;main;do_syscall_64_[k] 50\n";
    std::ofstream(dir / "before.folded") << "main;lock 500\nmain;work 300\nmain;old 200\n";
    auto r = run_lockprof({"flamegraph", (dir / "in.folded").string(), "-o",
                           (dir / "fg.svg").string(), "--title", "lockprof integration"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_lockprof({"flamegraph", "--diff", (dir / "before.folded").string(),
                      (dir / "in.folded").string(), "-o", (dir / "diff.svg").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;

    // The harness must notice a broken script, or a pass below would mean nothing.
    std::ofstream(dir / "broken.svg")
        << "<svg xmlns=\"http://www.w3.org/2000/svg\"><script><![CDATA[window.addEventListener("
           "'error', function (e) { document.documentElement.setAttribute('data-lockprof-error', "
           "e.message); }); undefined_function();]]></script></svg>";
    auto broken = shell(chromium_command(browser, dir / "profile", "--dump-dom",
                                         "file://" + (dir / "broken.svg").string()));
    ASSERT_EQ(broken.status, 0) << broken.err.substr(0, 2000);
    EXPECT_NE(script_errors(broken), "") << "the harness did not see a deliberate script error";

    for (const char* name : {"fg.svg", "diff.svg"}) {
        auto run = shell(chromium_command(browser, dir / "profile", "--dump-dom",
                                          "file://" + (dir / name).string() + "?s=lock"));
        ASSERT_EQ(run.status, 0) << run.err.substr(0, 2000);
        EXPECT_EQ(script_errors(run), "") << name;
        EXPECT_EQ(dom_attribute(run.out, "data-lockprof-ready"), "1")
            << name << ": init did not run";
        EXPECT_NE(dom_attribute(run.out, "data-lockprof-matched"), "") << name << ": ?s= search";
    }

    // Zoom, reset and search inside the browser with the SVG's own functions.
    std::ofstream(dir / "driven.svg") << with_driver(read_all(dir / "fg.svg"), "lock");
    auto driven = shell(chromium_command(browser, dir / "profile", "--dump-dom",
                                         "file://" + (dir / "driven.svg").string()));
    ASSERT_EQ(driven.status, 0);
    EXPECT_EQ(script_errors(driven), "");
    ASSERT_EQ(dom_attribute(driven.out, "data-test-done"), "1") << driven.out.substr(0, 1500);
    // Two "lock" frames (cas, then tas in name order); the driver zoomed into the last one
    // found (tas: 850 of 1300): zoomed it spans the whole width (1180 px), reset its share.
    EXPECT_NEAR(std::stod(dom_attribute(driven.out, "data-test-zoom-width")), 1180, 0.01);
    EXPECT_GT(std::stoi(dom_attribute(driven.out, "data-test-hidden")), 0);
    EXPECT_NEAR(std::stod(dom_attribute(driven.out, "data-test-unzoom-width")), 1180.0 * 850 / 1300,
                0.01);
    // "^lock$" matches both lock frames: (850 + 300) of 1300 samples.
    EXPECT_EQ(dom_attribute(driven.out, "data-lockprof-matched"), "88.5");

    const fs::path artifacts = fs::path(LOCKPROF_ARTIFACT_DIR) / "flamegraph";
    fs::create_directories(artifacts);
    for (const char* name : {"fg", "diff"}) {
        const auto png = artifacts / (std::string(name) + ".png");
        fs::remove(png);
        auto shot = shell(
            chromium_command(browser, dir / "profile",
                             "--window-size=1200,600 --screenshot=" + shell_quote(png.string()),
                             "file://" + (dir / (std::string(name) + ".svg")).string()));
        ASSERT_EQ(shot.status, 0) << shot.err.substr(0, 2000);
        ASSERT_TRUE(fs::exists(png)) << png;
        EXPECT_EQ(read_all(png).substr(1, 3), "PNG");
        EXPECT_GT(fs::file_size(png), 5000u) << "a flamegraph screenshot is not blank";
        std::cout << "screenshot: " << png.string() << "\n";
    }
}

TEST(FlamegraphPerf, RecordScriptFoldRenderRoundTrip) {
    if (find_program({"perf"}).empty())
        GTEST_SKIP() << "perf not installed (Debian: linux-perf): cannot test the round trip";
    const auto cc = find_program({"cc", "gcc"});
    if (cc.empty()) GTEST_SKIP() << "no C compiler to build the profiled program";
    TempDir dir;
    std::ofstream(dir / "spin.c") << R"(
#include <stdio.h>
volatile unsigned long sink;
__attribute__((noinline)) void spin_leaf(long n) { for (long i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void spin_outer(long n) { spin_leaf(n); sink++; }
int main(void) { for (int k = 0; k < 400; k++) spin_outer(400000); printf("%lu\n", sink); return 0; }
)";
    const auto d = [&](const char* f) { return shell_quote((dir / f).string()); };
    auto build = shell(cc + " -O1 -fno-omit-frame-pointer -o " + d("spin") + " " + d("spin.c"));
    ASSERT_EQ(build.status, 0) << build.err;
    auto record = shell("perf record -q -e cpu-clock -g -o " + d("perf.data") + " " + d("spin"));
    if (record.status != 0)
        GTEST_SKIP() << "perf record -e cpu-clock failed here (perf_event_paranoid, seccomp?): "
                     << record.err.substr(0, 300);
    auto script = shell("{ perf script -i " + d("perf.data") + " > " + d("perf.txt") + "; }");
    ASSERT_EQ(script.status, 0) << script.err.substr(0, 500);

    auto r = run_lockprof({"fold", (dir / "perf.txt").string(), "-o", (dir / "p.folded").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const auto folded = read_all(dir / "p.folded");
    // Most samples sit in spin_leaf under main, below the "spin" root. spin_outer is optional:
    // frame-pointer unwinding at -O1 does not always report it.
    std::regex line(R"(^spin;(.*;)?main;(spin_outer;)?spin_leaf (\d+)$)");
    std::uint64_t in_leaf = 0, total = 0;
    std::istringstream lines(folded);
    for (std::string l; std::getline(lines, l);) {
        total += std::stoull(l.substr(l.rfind(' ') + 1));
        std::smatch m;
        if (std::regex_match(l, m, line)) in_leaf += std::stoull(m[3].str());
    }
    ASSERT_GT(total, 50u) << folded.substr(0, 2000);
    EXPECT_GT(in_leaf * 2, total) << folded.substr(0, 2000);

    r = run_lockprof({"flamegraph", (dir / "p.folded").string(), "-o", (dir / "p.svg").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto svg = read_all(dir / "p.svg");
    EXPECT_NE(svg.find("<title>spin_leaf ("), std::string::npos);
    if (!find_program({"xmllint"}).empty()) {
        auto lint = shell("xmllint --noout " + d("p.svg"));
        EXPECT_EQ(lint.status, 0) << lint.err;
    }
}
