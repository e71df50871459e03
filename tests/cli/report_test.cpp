// Golden tests of `lockprof compare` and `lockprof report` on synthetic result files written
// here, so verdicts and warnings do not depend on this machine's timing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "support/screen.hpp"

using lockprof::test::read_all;
using lockprof::test::run_lockprof;
using lockprof::test::TempDir;
using nlohmann::json;

namespace {

// One cell: per trial, the acquires of each of `threads` threads over a 1 s window.
json cell(const std::string& lock, unsigned threads, const std::vector<double>& per_second) {
    json trials = json::array();
    for (std::size_t i = 0; i < per_second.size(); ++i) {
        json ts = json::array();
        for (unsigned k = 0; k < threads; ++k)
            ts.push_back({{"index", k},
                          {"cpu", -1},
                          {"acquires", static_cast<std::uint64_t>(per_second[i] / threads)},
                          {"rmw_attempts", static_cast<std::uint64_t>(per_second[i] / threads)},
                          {"spin_iterations", 0},
                          {"cpu_ns", 1000000000},
                          {"start_ns", 0},
                          {"end_ns", 1000000000}});
        trials.push_back(
            {{"trial", i}, {"wall_ns", 1000000000}, {"ticks", 1000000000}, {"threads", ts}});
    }
    return {{"lock", lock},       {"algorithm", lock}, {"flavour", ""},     {"delay", "pause"},
            {"threads", threads}, {"complete", true},  {"lost_updates", 0}, {"trials", trials}};
}

json result(std::vector<json> cells, bool assertions = false, unsigned trials = 3) {
    json doc = {{"schema", "lockprof.result"},
                {"schema_version", 1},
                {"interrupted", false},
                {"provenance",
                 {{"lockprof_version", "0.1.0"},
                  {"git_revision", "test"},
                  {"command_line", "lockprof --lock=tas,cas --threads=1,2"},
                  {"timestamp_utc", "2024-01-01T00:00:00Z"},
                  {"hostname", "h"},
                  {"arch", "x86_64"},
                  {"cpu_model", "Test CPU"},
                  {"cpu_vendor", "Test"},
                  {"midr", ""},
                  {"lse", false},
                  {"spe", false},
                  {"logical_cpus", 2},
                  {"kernel", "6.1.0"},
                  {"perf_event_paranoid", 2},
                  {"vm_hint", ""},
                  {"compiler", "GNU 12.2.0"},
                  {"compiler_flags", "-O2 -g"},
                  {"build_type", assertions ? "Debug" : "RelWithDebInfo"},
                  {"assertions", assertions}}},
                {"config",
                 {{"locks", {"tas", "cas"}},
                  {"threads", {1, 2}},
                  {"duration_ns", 1000000000},
                  {"acquires_per_thread", nullptr},
                  {"critical_ns", 0},
                  {"parallel_ns", 0},
                  {"shared_lines", 1},
                  {"delay", nullptr},
                  {"pin", {{"mode", "none"}, {"cpus", json::array()}}},
                  {"warmup_ns", 0},
                  {"trials", trials},
                  {"seed", 1},
                  {"latency", false},
                  {"watchdog_ns", 10000000000LL}}},
                {"calibration", {{"burn_iterations_per_ns", 1.0}, {"ticks_per_ns", 1.0}}},
                {"notes", json::array()},
                {"cells", cells}};
    return doc;
}

struct Files {
    TempDir dir;
    std::string base, fast, assert_build, single_a, single_b;
    Files() {
        base =
            write("base.json",
                  result({cell("tas", 1, {100e6, 101e6, 99e6}), cell("cas", 1, {50e6, 51e6, 49e6}),
                          cell("tas", 2, {80e6, 90e6, 70e6}), cell("cas", 2, {40e6, 41e6, 39e6})}));
        // tas/1 faster, cas/1 slower, tas/2 inconclusive, cas/2 missing, mcs/2 new.
        fast =
            write("new.json",
                  result({cell("tas", 1, {120e6, 121e6, 119e6}), cell("cas", 1, {40e6, 41e6, 39e6}),
                          cell("tas", 2, {82e6, 88e6, 71e6}), cell("mcs", 2, {30e6, 31e6, 29e6})}));
        assert_build = write("assert.json", result({cell("tas", 1, {300e6, 301e6, 299e6})}, true));
        single_a = write("one_a.json", result({cell("tas", 1, {100e6})}, false, 1));
        single_b = write("one_b.json", result({cell("tas", 1, {110e6})}, false, 1));
    }
    std::string write(const std::string& name, const json& doc) {
        std::ofstream(dir / name) << doc.dump(1);
        return (dir / name).string();
    }
};

// The line of a table that starts with `lock` and `threads`.
std::string row(const std::string& out, const std::string& lock, const std::string& threads) {
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string a, b;
        words >> a >> b;
        if (a == lock && b == threads) return line;
    }
    return "";
}

TEST(CompareCli, VerdictsMismatchedCellsAndTheStatedTest) {
    Files f;
    auto r = run_lockprof({"compare", f.base, f.fast});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(row(r.out, "tas", "1").find("faster"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "tas", "1").find("1.200"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "cas", "1").find("slower"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "cas", "1").find("0.800"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "tas", "2").find("inconclusive"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("noise"), std::string::npos) << "never 'within noise'";
    EXPECT_NE(r.out.find("tas/2t: inconclusive; about "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("98.3333% interval"), std::string::npos) << "Bonferroni over 3 cells";
    EXPECT_NE(r.out.find("only in base: cas/2t"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("only in new:  mcs/2t"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Welch t interval on log acquires/s"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Bonferroni: 95% over 3 comparisons"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("warning:"), std::string::npos) << "same provenance: no warnings";
    // Deterministic: the same files give byte-identical output.
    EXPECT_EQ(run_lockprof({"compare", f.base, f.fast}).out, r.out);
}

TEST(CompareCli, WarnsAboveTheTableWhenOneBuildHasAssertions) {
    Files f;
    auto r = run_lockprof({"compare", f.base, f.assert_build});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto warning = r.out.find("warning: assertions are ON in the new build only");
    ASSERT_NE(warning, std::string::npos) << r.out;
    EXPECT_LT(warning, r.out.find("verdict")) << "warnings come above the table";
    EXPECT_NE(r.out.find("warning: build_type differs"), std::string::npos);
    EXPECT_NE(row(r.out, "tas", "1").find("faster"), std::string::npos) << "refuses nothing";
    // ... but the verdict itself says the comparison is not like-for-like.
    EXPECT_NE(row(r.out, "tas", "1")
                  .find("faster, but the builds differ (assertions on in new only, build type "
                        "RelWithDebInfo vs Debug): not a like-for-like comparison"),
              std::string::npos)
        << r.out;
}

TEST(CompareCli, TheEquivalenceBandIsAnOption) {
    Files f;
    // tas/1 is 20% faster: still faster with a 5% band.
    auto r = run_lockprof({"compare", f.base, f.fast, "--equivalence", "5%"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(row(r.out, "tas", "1").find("faster"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("±5% equivalence band"), std::string::npos) << r.out;
    // 3% faster with a tight spread: faster outside a 2% band, equivalent inside a 5% one,
    // inconclusive when the interval reaches across the edge of a 3% one.
    const auto base = f.write("same.json", result({cell("tas", 1, {100e6, 100.1e6, 99.9e6})}));
    const auto near = f.write("near.json", result({cell("tas", 1, {103e6, 103.1e6, 102.9e6})}));
    const auto verdict = [&](const char* band) {
        return row(run_lockprof({"compare", base, near, "--equivalence", band}).out, "tas", "1");
    };
    EXPECT_NE(verdict("2%").find("faster"), std::string::npos) << verdict("2%");
    EXPECT_NE(verdict("5%").find("equivalent"), std::string::npos) << verdict("5%");
    EXPECT_NE(verdict("0.03").find("inconclusive"), std::string::npos) << verdict("0.03");
    r = run_lockprof({"compare", f.base, f.fast, "--equivalence", "5"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(lockprof::test::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("write 5% or a fraction like 0.05"), std::string::npos) << r.err;
}

TEST(CompareCli, OneTrialIsAStatedLimitNotAnInterval) {
    Files f;
    auto r = run_lockprof({"compare", f.single_a, f.single_b});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(row(r.out, "tas", "1").find("too few trials (1 per side)"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("tas/1t: 1 trial per side: too few for an interval (at least 3 per "
                         "side); run --trials 5 or more"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("[0.000, 1.000]"), std::string::npos) << r.out;
}

TEST(CompareCli, EveryFormat) {
    Files f;
    auto md = run_lockprof({"compare", f.base, f.fast, f.assert_build, "--format", "markdown"});
    ASSERT_EQ(md.exit_code, 0) << md.err;
    EXPECT_NE(md.out.find("| lock | threads | base acquires/s |"), std::string::npos);
    EXPECT_NE(md.out.find("| tas | 1 | "), std::string::npos);
    EXPECT_NE(md.out.find("**faster**"), std::string::npos);
    EXPECT_NE(md.out.find("faster, but the builds differ (assertions on in new only"),
              std::string::npos)
        << "not bold when not like-for-like: " << md.out;
    EXPECT_NE(md.out.find("- tas/2t: inconclusive; about "), std::string::npos) << md.out;
    EXPECT_NE(md.out.find("> **Warning:** assertions are ON"), std::string::npos);
    EXPECT_NE(md.out.find("Only in new: mcs/2t"), std::string::npos);
    EXPECT_EQ(md.out.find("### lockprof compare:"), 0u);
    EXPECT_NE(md.out.find("### lockprof compare:", 1), std::string::npos) << "one per NEW file";

    auto js = run_lockprof({"compare", f.base, f.fast, "-f", "json"});
    ASSERT_EQ(js.exit_code, 0) << js.err;
    const auto doc = json::parse(js.out);
    EXPECT_EQ(doc["schema"], "lockprof.compare");
    EXPECT_EQ(doc["schema_version"], 2);
    EXPECT_EQ(doc["test"]["interval"], "Welch t interval on log acquires/s");
    EXPECT_DOUBLE_EQ(doc["test"]["equivalence"].get<double>(), 0.02);
    const auto& c = doc["comparisons"][0];
    EXPECT_EQ(c["cells"][0]["lock"], "tas");
    EXPECT_EQ(c["cells"][0]["verdict"], "faster");
    EXPECT_EQ(c["cells"][1]["verdict"], "slower");
    EXPECT_EQ(c["cells"][2]["verdict"], "inconclusive");
    EXPECT_TRUE(c["cells"][2]["trials_to_settle"].is_number()) << c["cells"][2];
    EXPECT_EQ(c["family"], 3);
    EXPECT_EQ(c["caveat"], "");
    EXPECT_EQ(c["cells"][0]["verdict_line"], "faster");
    EXPECT_GT(c["cells"][0]["interval"]["low"].get<double>(), 1.0);
    EXPECT_EQ(c["cells"][0]["base"]["trials"].size(), 3u);
    EXPECT_EQ(c["only_in_base"][0]["lock"], "cas");
    EXPECT_EQ(c["only_in_new"][0]["lock"], "mcs");

    auto csv = run_lockprof({"compare", f.base, f.assert_build, "--format=csv"});
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    EXPECT_EQ(
        csv.out.substr(0, csv.out.find('\n')),
        "new_file,lock,threads,base_median,base_min,base_max,base_trials,new_median,new_min,"
        "new_max,new_trials,ratio,interval_low,interval_high,verdict,trials_to_settle,caveat");
    EXPECT_NE(csv.out.find(",tas,1,1e+08,9.9e+07,1.01e+08,3,3e+08,"), std::string::npos) << csv.out;
    EXPECT_NE(csv.out.find(",cas,1,,,,,,,,,,,,only in base,,"), std::string::npos) << csv.out;
    EXPECT_NE(csv.err.find("warning:"), std::string::npos) << "CSV warnings go to stderr";
    EXPECT_NE(csv.err.find("assertions are ON"), std::string::npos);

    auto tbl = run_lockprof({"compare", f.base, f.fast, "--format", "table"});
    EXPECT_EQ(tbl.exit_code, 0);
    auto bad = run_lockprof({"compare", f.base, f.fast, "--format", "xml"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("use table, markdown, json or csv"), std::string::npos);
}

TEST(CompareCli, BadInputIsOneLineAndExitTwo) {
    Files f;
    const auto one_line = [](const lockprof::test::CliResult& r) {
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_EQ(lockprof::test::count_lines(r.err), 1) << r.err;
        EXPECT_EQ(r.err.rfind("lockprof: ", 0), 0u) << r.err;
        EXPECT_EQ(r.out, "");
    };
    auto doc = result({cell("tas", 1, {1e6})});
    doc["schema_version"] = 99;
    const auto v99 = f.write("v99.json", doc);
    auto r = run_lockprof({"compare", f.base, v99});
    one_line(r);
    EXPECT_NE(r.err.find("schema version 99"), std::string::npos) << r.err;

    const auto other = f.write("other.json", json{{"name", "package.json"}});
    r = run_lockprof({"compare", other, f.base});
    one_line(r);
    EXPECT_NE(r.err.find("not a lockprof result"), std::string::npos) << r.err;

    // lockprof's other documents are named for what they are and what reads them.
    const auto recording =
        f.write("record.json", json{{"schema", "lockprof.record"}, {"schema_version", 2}});
    r = run_lockprof({"compare", f.base, recording});
    one_line(r);
    EXPECT_NE(r.err.find("a `lockprof record` recording (schema lockprof.record), not a run "
                         "result: compare and annotate read `lockprof run -o FILE` results; "
                         "`lockprof report FILE -o REPORT.html` renders a recording"),
              std::string::npos)
        << r.err;
    // report renders recordings (record_test.cpp), and refuses one that is not whole.
    r = run_lockprof({"report", recording, "-o", (f.dir / "r.html").string()});
    one_line(r);
    EXPECT_NE(r.err.find("not a complete lockprof recording"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(f.dir / "r.html"));
    const auto future_recording =
        f.write("record2.json", json{{"schema", "lockprof.record"}, {"schema_version", 99}});
    r = run_lockprof({"report", future_recording, "-o", (f.dir / "r.html").string()});
    one_line(r);
    EXPECT_NE(r.err.find("recording schema version 99 is not supported"), std::string::npos)
        << r.err;
    // A recording from before the naming rule is still recognised as one.
    const auto v1_recording =
        f.write("record1.json", json{{"schema", "lockprof-record"}, {"version", 1}});
    r = run_lockprof({"compare", f.base, v1_recording});
    one_line(r);
    EXPECT_NE(r.err.find("a `lockprof record` recording"), std::string::npos) << r.err;
    r = run_lockprof({"report", v1_recording, "-o", (f.dir / "r.html").string()});
    one_line(r);
    EXPECT_NE(r.err.find("not a complete lockprof recording"), std::string::npos) << r.err;
    const auto v1_unknown =
        f.write("record3.json", json{{"schema", "lockprof-record"}, {"version", 99}});
    r = run_lockprof({"report", v1_unknown, "-o", (f.dir / "r.html").string()});
    one_line(r);
    EXPECT_NE(r.err.find("recording schema version 99 is not supported"), std::string::npos)
        << r.err;
    const auto comparison = f.write("cmp.json", json{{"schema", "lockprof.compare"}});
    r = run_lockprof({"compare", f.base, comparison});
    one_line(r);
    EXPECT_NE(r.err.find("a `lockprof compare` output"), std::string::npos) << r.err;
    const auto unknown = f.write("unknown.json", json{{"schema", "speedscope"}});
    r = run_lockprof({"compare", f.base, unknown});
    one_line(r);
    EXPECT_NE(r.err.find("not a lockprof result (schema \"speedscope\""), std::string::npos)
        << r.err;

    const std::string text = read_all(f.base);
    std::ofstream(f.dir / "cut.json") << text.substr(0, text.size() / 2);
    r = run_lockprof({"compare", f.base, (f.dir / "cut.json").string()});
    one_line(r);
    EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;

    auto missing_field = result({cell("tas", 1, {1e6})});
    missing_field["cells"][0].erase("trials");
    r = run_lockprof({"compare", f.base, f.write("partial.json", missing_field)});
    one_line(r);

    r = run_lockprof({"compare", f.base, (f.dir / "absent.json").string()});
    one_line(r);
    r = run_lockprof({"compare", f.base});
    one_line(r);
    EXPECT_NE(r.err.find("BASE.json NEW.json"), std::string::npos);
    r = run_lockprof({"compare", f.base, f.fast, "--confidence", "2"});
    one_line(r);
}

TEST(CompareCli, TheBootstrapsOptionsSayTheyWereRemovedAndWhy) {
    Files f;
    for (const char* option : {"--resamples", "--seed"}) {
        const auto r = run_lockprof({"compare", f.base, f.fast, option, "100"});
        EXPECT_EQ(r.exit_code, 2) << option;
        EXPECT_EQ(lockprof::test::count_lines(r.err), 1) << r.err;
        EXPECT_NE(r.err.find(std::string(option) + " was removed"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("no longer come from a bootstrap"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("drop " + std::string(option)), std::string::npos) << r.err;
    }
    const auto r = run_lockprof({"compare", f.base, f.fast, "--resamples=100"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--resamples was removed"), std::string::npos) << r.err;
}

TEST(ReportCli, WritesSelfContainedHtmlAndStandaloneSvg) {
    Files f;
    auto r = run_lockprof({"report", f.base, "-o", (f.dir / "r.html").string(), "--plot",
                           (f.dir / "p.svg").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto html = read_all(f.dir / "r.html");
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    for (const char* id : {"plot-scalability", "plot-fairness", "plot-rmw", "results-table"})
        EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
    EXPECT_NE(html.find("The run was not sampled"), std::string::npos);
    const auto svg = read_all(f.dir / "p.svg");
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_NE(svg.find("Throughput vs threads"), std::string::npos);
    EXPECT_NE(svg.find("data-series=\"2\""), std::string::npos);

    // Assertions on: the report says so loudly.
    r = run_lockprof({"report", f.assert_build, "-o", (f.dir / "a.html").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(read_all(f.dir / "a.html").find("assertions-banner"), std::string::npos);
}

TEST(ReportCli, UsageErrors) {
    Files f;
    auto r = run_lockprof({"report", f.base, "-o", "/nonexistent-dir/r.html"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(lockprof::test::count_lines(r.err), 1);
    std::ofstream(f.dir / "junk.json") << "[1, 2";
    r = run_lockprof({"report", (f.dir / "junk.json").string(), "-o", (f.dir / "j.html").string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_FALSE(std::filesystem::exists(f.dir / "j.html")) << "nothing written on bad input";
}

TEST(ReportCli, RunWritesReportAndPlot) {
    TempDir dir;
    auto r = run_lockprof({"--lock=tas,ttas", "--threads=1,2", "--duration=20ms", "--trials=2",
                           "--quiet", "--report", (dir / "run.html").string(), "--plot",
                           (dir / "run.svg").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto html = read_all(dir / "run.html");
    EXPECT_NE(html.find("id=\"plot-scalability\""), std::string::npos);
    EXPECT_NE(html.find("data-series=\"2\" data-points=\"4\""), std::string::npos);
    EXPECT_NE(html.find("this run"), std::string::npos);
    EXPECT_EQ(read_all(dir / "run.svg").rfind("<?xml", 0), 0u);
    // Unwritable targets fail before the run, with exit 2.
    r = run_lockprof(
        {"--lock=tas", "--threads=1", "--duration=10ms", "--report", "/nonexistent-dir/x.html"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "") << "nothing ran";
}

// A sampled run's report uses the samples it has in memory: hot instructions and the
// flamegraph without --samples-out, while --output still leaves the raw samples out.
TEST(ReportCli, SampledRunReportHasHotInstructionsAndFlamegraph) {
    TempDir dir;
    const auto r = run_lockprof({"--lock=tas", "--threads=2", "--duration=200ms", "--trials=1",
                                 "--quiet", "--sample", "--report", (dir / "run.html").string(),
                                 "--output", (dir / "run.json").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto html = read_all(dir / "run.html");
    EXPECT_EQ(html.find("not in this report: hot instructions"), std::string::npos);
    EXPECT_NE(html.find("src=\"data:image/svg+xml;base64,"), std::string::npos)
        << "the flamegraph is embedded";
    EXPECT_NE(html.find("<table class=\"asm\">"), std::string::npos) << "hot instructions";
    EXPECT_NE(html.find("; call stacks: frame pointers (the kernel"), std::string::npos)
        << "the page says how call stacks were taken";
    const auto json = read_all(dir / "run.json");
    EXPECT_EQ(json.find("\"samples\":"), std::string::npos) << "--output keeps no raw samples";
    EXPECT_NE(json.find("\"sampling\""), std::string::npos);
}

}  // namespace

// Damaged result files (docs/result-schema.md, "Validation when reading"): refused by file,
// JSON path and reason in one line, exit 2, before anything is written.
TEST(CompareCli, DamagedResultsAreRefusedByFileAndPath) {
    Files f;
    struct Case {
        const char* name;
        std::function<void(json&)> damage;
        std::string path;
    };
    const std::vector<Case> cases = {
        {"negative acquires",
         [](json& d) { d["cells"][0]["trials"][0]["threads"][0]["acquires"] = -1000; },
         "cells[0].trials[0].threads[0].acquires: -1000 is negative"},
        {"wall_ns 0", [](json& d) { d["cells"][1]["trials"][2]["wall_ns"] = 0; },
         "cells[1].trials[2].wall_ns: is 0"},
        {"no trials",
         [](json& d) {
             d["cells"][2]["trials"] = json::array();
             d["cells"][2]["complete"] = false;
         },
         "cells[2].trials: tas with 2 threads has no trials"},
    };
    for (const auto& c : cases) {
        json doc = json::parse(read_all(f.base));
        c.damage(doc);
        const auto bad = f.write("damaged.json", doc);
        for (const auto& args : std::vector<std::vector<std::string>>{
                 {"compare", f.base, bad}, {"report", bad, "-o", (f.dir / "r.html").string()}}) {
            const auto r = run_lockprof(args);
            EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
            EXPECT_EQ(lockprof::test::count_lines(r.err), 1) << r.err;
            EXPECT_NE(r.err.find("'" + bad + "': " + c.path), std::string::npos)
                << c.name << ": " << r.err;
            EXPECT_EQ(r.out, "");
            EXPECT_FALSE(std::filesystem::exists(f.dir / "r.html"));
        }
    }
}

// The issue-30 line budget through the CLI: a real 6-cell run's result file (tas, ttas, cas at
// 1 and 2 threads, 3 trials), its trials rewritten to what the 2-core VM gave (every pair
// inconclusive, the threads on 0.62 of their CPUs in every cell), printed by `lockprof report`
// as the run prints it: at most 25 lines at 100 columns, one off-CPU note for all six cells;
// --verbose brings back each cell's own.
TEST(ReportCli, SixCellRunFitsOneScreenAndVerboseRestoresEachCellsNote) {
    TempDir dir;
    const auto file = (dir / "six.json").string();
    auto r = run_lockprof({"--lock=tas,ttas,cas", "--threads=1,2", "--trials=3", "--duration=10ms",
                           "--quiet", "--output", file});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json doc = json::parse(read_all(file));
    ASSERT_EQ(doc["cells"].size(), 6u);
    // As a Release or RelWithDebInfo build writes it: the sanitizer builds' assertions add the
    // header's warning line, which is not part of the budget.
    doc["provenance"]["assertions"] = false;
    const std::uint64_t window = 200'000'000;
    const std::uint64_t acquires[6][3] = {{20, 14, 19}, {16, 19, 11}, {11, 18, 15},
                                          {10, 6, 9},   {5, 8, 7},    {7, 4, 9}};
    for (std::size_t c = 0; c < 6; ++c) {
        doc["cells"][c].erase("summary");  // derived from the trials rewritten below
        auto& trials = doc["cells"][c]["trials"];
        ASSERT_EQ(trials.size(), 3u);
        for (std::size_t t = 0; t < 3; ++t) {
            trials[t]["wall_ns"] = window;
            trials[t].erase("steal");
            for (auto& thread : trials[t]["threads"]) {
                thread["acquires"] = acquires[c][t] * 1'000'000;
                thread["rmw_attempts"] = acquires[c][t] * 1'000'000;
                thread["spin_iterations"] = 0;
                thread["start_ns"] = 0;
                thread["end_ns"] = window;
                thread["cpu_ns"] = window * 62 / 100;
            }
        }
    }
    std::ofstream(file) << doc.dump();
    r = run_lockprof({"report", file});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_LE(lockprof::test::screen_lines(r.out), 25) << r.out;
    const auto count = [](const std::string& text, const std::string& what) {
        std::size_t n = 0;
        for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
        return n;
    };
    EXPECT_EQ(count(r.out,
                    "note: off-CPU: threads ran on only 0.62 of 1 CPU in all 3 cells at 1 "
                    "thread and 1.24 of 2 in all 3 cells at 2 threads"),
              1u)
        << r.out;
    EXPECT_NE(r.out.find("inconclusive at 3 trials, intervals ttas "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ttas, cas vs tas at 1 and 2 threads: inconclusive"), std::string::npos)
        << r.out;
    r = run_lockprof({"report", file, "--verbose"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(count(r.out, "the threads ran on only"), 6u) << r.out;
    EXPECT_NE(r.out.find("    1. throughput inconclusive"), std::string::npos) << r.out;
}
