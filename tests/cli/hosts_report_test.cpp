// `lockprof report A.json B.json ...` across hosts, and `compare` across hosts, on real results:
// tests/cli/fixtures/hosts holds results made by the emulated arm64 systems and qemu-user
// (README.md there says how), and this machine's own result is made here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace lockprof::test {
namespace hosts_cli {

using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(LOCKPROF_SOURCE_DIR) / "tests/cli/fixtures/hosts";

std::vector<fs::path> fixtures() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(kFixtures))
        if (e.path().extension() == ".json") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// This machine's result, with the fixtures' locks, thread counts and trials.
fs::path this_host(const TempDir& dir) {
    const fs::path file = dir / "this-host.json";
    const auto r =
        run_lockprof({"run", "--lock", "tas,cas", "--threads", "1,2", "--duration", "20ms",
                      "--trials", "5", "--no-counters", "-q", "--output", file.string()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return file;
}

// A copy of `from` with its provenance edited.
fs::path edited(const fs::path& from, const fs::path& to, const std::function<void(json&)>& edit) {
    json doc = json::parse(read_all(from));
    edit(doc);
    std::ofstream(to) << doc.dump();
    return to;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST(HostsReportCli, FixturesAreRealMultiHostResults) {
    const auto files = fixtures();
    ASSERT_GE(files.size(), 3u) << "tests/cli/fixtures/hosts holds the emulated hosts' results";
    std::set<std::string> hosts;
    for (const auto& f : files) {
        const json doc = json::parse(read_all(f));
        const auto& p = doc["provenance"];
        EXPECT_EQ(p["arch"], "aarch64") << f;
        hosts.insert(p["hostname"].get<std::string>() + "/" + (p["lse"].get<bool>() ? "lse" : ""));
        EXPECT_EQ(doc["cells"].size(), 4u) << f << ": tas and cas at 1 and 2 threads";
    }
    EXPECT_EQ(hosts.size(), files.size()) << "each fixture is another host or CPU";
}

// Four hosts and more: each host's verdict row, one summary per pair, the provenance with the
// planted assertion build singled out, PMU evidence or why not, plots of every host.
TEST(HostsReportCli, FourHostsAsTextAndAsOneHtmlPage) {
    TempDir dir;
    std::vector<std::string> args{"report", "this=" + this_host(dir).string()};
    const auto files = fixtures();
    for (const auto& f : files) args.push_back(f.string());
    // The 2020 thread's mistake, planted: a copy of one host's file from an assert-enabled build.
    args.push_back("asserting=" + edited(files[0], dir / "asserting.json", [](json& doc) {
                                      doc["provenance"]["hostname"] = "asserting";
                                      doc["provenance"]["assertions"] = true;
                                      doc["provenance"]["compiler_flags"] = "-O2 -g";
                                  }).string());
    const std::size_t hosts = files.size() + 2;
    ASSERT_GE(hosts, 4u);
    auto r = run_lockprof(args);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::string& text = r.out;
    EXPECT_NE(text.find(fmt::format("lockprof report: {} hosts", hosts)), std::string::npos)
        << text;
    // The planted host, and this one too where the test runs an assert-enabled build (the
    // sanitizer stages' build type None has no NDEBUG).
    EXPECT_TRUE(text.find("warning: assertions are ON in asserting's build") != std::string::npos ||
                text.find("warning: assertions are ON in the builds of this; asserting:") !=
                    std::string::npos)
        << text;
    EXPECT_NE(text.find("cas vs tas (acquires/s ratio cas/tas on each host):"), std::string::npos);
    EXPECT_EQ(count(text, "\ncas vs tas: "), 1u) << "one summary line for the pair\n" << text;
    EXPECT_NE(text.find("! assertions\n"), std::string::npos) << text;
    EXPECT_NE(text.find("! LSE atomics\n"), std::string::npos) << "qemu max has LSE\n" << text;
    EXPECT_NE(text.find("PMU evidence"), std::string::npos);
    // The emulated systems counted cycles and stxr_fail on their PMU; this host and qemu-user
    // say why they could not.
    EXPECT_NE(text.find("stxr_fail"), std::string::npos) << text;
    EXPECT_NE(text.find("not counted"), std::string::npos) << text;
    // Every host has a row in the pair's table with a cell per thread count (1 and 2).
    const std::regex row(
        "\\n(this|asserting|qemu-system-[a-z0-9-]+|vm/[^\\n]*?) .*(x (faster|"
        "slower|equivalent|inconclusive)|too few).*x ");
    EXPECT_GE(
        std::distance(std::sregex_iterator(text.begin(), text.end(), row), std::sregex_iterator()),
        static_cast<long>(hosts))
        << text;

    args.insert(args.end(),
                {"-o", (dir / "hosts.html").string(), "--plot", (dir / "hosts.svg").string()});
    r = run_lockprof(args);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::string html = read_all(dir / "hosts.html");
    EXPECT_NE(html.find("id=\"pair-1\""), std::string::npos);
    EXPECT_EQ(count(html, "<tr data-host="), hosts) << "a verdict row per host";
    EXPECT_NE(html.find("<tr id=\"field-assertions\" class=\"explains\">"), std::string::npos);
    EXPECT_NE(html.find("<tr id=\"field-lse\" class=\"explains\">"), std::string::npos);
    EXPECT_NE(html.find("id=\"plot-hosts\""), std::string::npos);
    EXPECT_NE(html.find("id=\"plot-hosts-normalised\""), std::string::npos);
    EXPECT_NE(html.find(fmt::format("data-series=\"{}\"", 2 * hosts)), std::string::npos)
        << "a line per host and lock";
    EXPECT_EQ(html.find("<script"), std::string::npos) << "no script of its own";
    const std::string svg = read_all(dir / "hosts.svg");
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
}

TEST(HostsReportCli, NamesVersionsAndBadInput) {
    TempDir dir;
    const auto files = fixtures();
    ASSERT_GE(files.size(), 2u);
    const std::string a = files[0].string(), b = files[1].string();
    // Names given; a different lockprof version is read and said.
    const auto newer = edited(files[1], dir / "newer.json",
                              [](json& doc) { doc["provenance"]["lockprof_version"] = "0.2.0"; });
    auto r = run_lockprof({"report", "left=" + a, "right=" + newer.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\nleft ("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nright ("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("warning: the files come from different lockprof versions (left 0.1.0, "
                         "right 0.2.0)"),
              std::string::npos)
        << r.out;
    // Another schema version is refused in one line naming the file and both versions.
    const auto future =
        edited(files[1], dir / "future.json", [](json& doc) { doc["schema_version"] = 2; });
    r = run_lockprof({"report", a, future.string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
    EXPECT_NE(r.err.find("future.json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("result schema version 2 is not supported (this lockprof reads version "
                         "1)"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("lockprof 0.1.0"), std::string::npos) << "who wrote it: " << r.err;
    for (const auto& bad :
         std::vector<std::vector<std::string>>{{"report", a, (dir / "missing.json").string()},
                                               {"report", "same=" + a, "same=" + b},
                                               {"report", "name=", a},
                                               {"report", a, b, "--threads", "2"},
                                               {"report", a, b, "--verbose"}}) {
        r = run_lockprof(bad);
        EXPECT_EQ(r.exit_code, 2) << bad[2] << r.out << r.err;
        EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
        EXPECT_TRUE(r.out.empty()) << "nothing before the error: " << r.out;
    }
}

TEST(HostsReportCli, CompareAcrossHostsSaysSoAtTheTopAndStillJudges) {
    TempDir dir;
    const auto files = fixtures();
    ASSERT_GE(files.size(), 2u);
    auto r = run_lockprof({"compare", files[0].string(), files[1].string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("across hosts: base ran on ", 0), 0u) << r.out;
    EXPECT_TRUE(std::regex_search(
        r.out, std::regex("; [a-z_, ]+ differs?: each ratio compares the machines as much as the "
                          "runs\n")))
        << r.out;
    EXPECT_NE(r.out.find("new/base"), std::string::npos) << "verdicts are still given";
    EXPECT_NE(r.out.find("but across hosts ("), std::string::npos) << "each verdict says so";
    r = run_lockprof({"compare", files[0].string(), files[1].string(), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(r.out);
    EXPECT_FALSE(doc["comparisons"][0]["across_hosts"].empty());
    // One host against itself: not across hosts.
    r = run_lockprof({"compare", files[0].string(), files[0].string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find("across hosts"), std::string::npos) << r.out;
}

}  // namespace hosts_cli
}  // namespace lockprof::test
