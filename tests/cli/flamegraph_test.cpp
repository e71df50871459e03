// Golden tests of `lockprof flamegraph` and `lockprof fold` on small synthetic inputs.
#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "cli/cli_runner.hpp"

using lockprof::test::count_lines;
using lockprof::test::read_all;
using lockprof::test::run_lockprof;
using lockprof::test::TempDir;

namespace {
void write(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
}
std::size_t files_in(const std::filesystem::path& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
    return n;
}
const char* kPerfScript =
    "prog  77  10.000001:     250000 cpu-clock: \n"
    "\t          401136 s_lock+0x16 (/tmp/prog)\n"
    "\t          401160 main+0x10 (/tmp/prog)\n"
    "\n"
    "prog  77  10.000002:     250000 cpu-clock: \n"
    "\tffffffff81775b9a do_syscall_64+0x28a ([kernel.kallsyms])\n"
    "\t          401160 main+0x10 (/tmp/prog)\n"
    "\n"
    "prog  77  10.000003:     250000 cpu-clock: \n"
    "\t          401136 s_lock+0x16 (/tmp/prog)\n"
    "\t          401160 main+0x10 (/tmp/prog)\n"
    "\n";
}  // namespace

TEST(CliFlamegraph, HelpExplainsBothForms) {
    auto r = run_lockprof({"flamegraph", "--help"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("lockprof flamegraph IN.folded -o OUT.svg"), std::string::npos);
    EXPECT_NE(r.out.find("--diff BEFORE.folded AFTER.folded"), std::string::npos);
    EXPECT_NE(r.out.find("--minwidth"), std::string::npos);
}

TEST(CliFlamegraph, RendersSvgWithTitleAndDefaultSubtitle) {
    TempDir dir;
    write(dir / "in.folded", "main;s_lock 3\nmain;work 1\n");
    auto r = run_lockprof({"flamegraph", (dir / "in.folded").string(), "-o",
                           (dir / "out.svg").string(), "--title", "TAS <vs> CAS"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const auto svg = read_all(dir / "out.svg");
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_NE(svg.find(">TAS &lt;vs&gt; CAS</text>"), std::string::npos);
    EXPECT_NE(svg.find("in.folded: 4 samples, 2 unique stacks"), std::string::npos);
    EXPECT_NE(svg.find("<title>s_lock (3 samples, 75.00%)</title>"), std::string::npos);
    EXPECT_EQ(files_in(dir.path), 2u) << "no temporary file left behind";
}

// A folded file lockprof wrote says its unit on its first line, and the graph takes it from
// there: a run's --folded on a machine that samples cpu-clock (every VM) counts ns of CPU
// time, which the diff of two such files names, never "samples".
TEST(CliFlamegraph, UnitComesFromTheFilesLockprofWrote) {
    TempDir dir;
    for (const char* name : {"a.folded", "b.folded"}) {
        const auto r = run_lockprof({"--lock", "tas", "--threads", "1", "--duration", "100ms",
                                     "--trials", "1", "--quiet", "--sample-event", "cpu-clock",
                                     "--folded", (dir / name).string()});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(read_all(dir / name)
                      .rfind("# lockprof folded stacks; counts are ns of CPU "
                             "time\n",
                             0),
                  0u)
            << read_all(dir / name).substr(0, 300);
    }
    const auto d = run_lockprof({"flamegraph", "--diff", (dir / "a.folded").string(),
                                 (dir / "b.folded").string(), "-o", (dir / "d.svg").string()});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    const auto diff = read_all(dir / "d.svg");
    EXPECT_NE(diff.find("ns of CPU time"), std::string::npos) << diff.substr(0, 3000);
    EXPECT_FALSE(std::regex_search(diff, std::regex("[0-9,] samples"))) << diff.substr(0, 3000);

    // Files that say different units are not compared without --unit.
    write(dir / "c.folded", "# lockprof folded stacks; counts are cycles\nmain;work 10\n");
    const auto mixed = run_lockprof({"flamegraph", "--diff", (dir / "a.folded").string(),
                                     (dir / "c.folded").string(), "-o", (dir / "m.svg").string()});
    EXPECT_EQ(mixed.exit_code, 2) << mixed.err;
    EXPECT_NE(mixed.err.find("a.folded counts ns of CPU time and c.folded counts cycles"),
              std::string::npos)
        << mixed.err;
    EXPECT_EQ(count_lines(mixed.err), 1) << mixed.err;
    const auto forced = run_lockprof({"flamegraph", "--diff", (dir / "a.folded").string(),
                                      (dir / "c.folded").string(), "-o", (dir / "m.svg").string(),
                                      "--unit", "units"});
    EXPECT_EQ(forced.exit_code, 0) << forced.err;
    // A file without the comment (perf's, stackcollapse's) still counts samples.
    write(dir / "plain.folded", "main;work 10\n");
    const auto plain = run_lockprof(
        {"flamegraph", (dir / "plain.folded").string(), "-o", (dir / "p.svg").string()});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_NE(read_all(dir / "p.svg").find("plain.folded: 10 samples"), std::string::npos);
}

// lockprof's own folded files weigh cpu-clock samples in CPU nanoseconds: --unit names them,
// in the subtitle, the tooltips and the diff's.
TEST(CliFlamegraph, UnitNamesWhatTheCountsAre) {
    TempDir dir;
    write(dir / "in.folded", "main;s_lock 3000000\nmain;work 1000000\n");
    auto r = run_lockprof({"flamegraph", (dir / "in.folded").string(), "-o",
                           (dir / "out.svg").string(), "--unit", "ns"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto svg = read_all(dir / "out.svg");
    EXPECT_NE(svg.find("in.folded: 4000000 ns, 2 unique stacks"), std::string::npos) << svg;
    EXPECT_NE(svg.find("<title>s_lock (3,000,000 ns, 75.00%)</title>"), std::string::npos);
    EXPECT_FALSE(std::regex_search(svg, std::regex("[0-9] samples"))) << svg;
    auto d = run_lockprof({"flamegraph", "--diff", (dir / "in.folded").string(),
                           (dir / "in.folded").string(), "-o", (dir / "d.svg").string(), "--unit",
                           "ns"});
    ASSERT_EQ(d.exit_code, 0) << d.err;
    const auto diff = read_all(dir / "d.svg");
    EXPECT_NE(diff.find("(after: 3,000,000 ns, 75.00%; before: 3,000,000 ns"), std::string::npos)
        << diff;
    EXPECT_FALSE(std::regex_search(diff, std::regex("[0-9] samples"))) << diff;
}

TEST(CliFlamegraph, SkipsMalformedLinesWithCountOnStderr) {
    TempDir dir;
    write(dir / "in.folded", "main;a 3\nmain;b\nmain;c -1\nmain;d 2\r\nmain;e 1\n");
    auto r = run_lockprof(
        {"flamegraph", (dir / "in.folded").string(), "-o", (dir / "out.svg").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("in.folded:2: no count"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("in.folded:3: negative count '-1'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("in.folded:4: CRLF"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("skipped 3 malformed lines of 5"), std::string::npos) << r.err;
    EXPECT_NE(read_all(dir / "out.svg").find("4 samples"), std::string::npos);
}

TEST(CliFlamegraph, StrictFailsWithExit2AndWritesNothing) {
    TempDir dir;
    write(dir / "in.folded", "main;a 3\nmain;b x\n");
    auto r = run_lockprof(
        {"flamegraph", "--strict", (dir / "in.folded").string(), "-o", (dir / "out.svg").string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("in.folded:2: non-numeric count 'x'"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "out.svg"));
    EXPECT_EQ(files_in(dir.path), 1u);
}

TEST(CliFlamegraph, EmptyStdinGivesNoSamplesSvg) {
    TempDir dir;
    auto r = run_lockprof({"flamegraph", "-", "-o", (dir / "out.svg").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(read_all(dir / "out.svg").find(">no samples</text>"), std::string::npos);
}

TEST(CliFlamegraph, UsageErrorsAreOneLineExit2) {
    TempDir dir;
    write(dir / "in.folded", "a 1\n");
    const auto in = (dir / "in.folded").string(), out = (dir / "o.svg").string();
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"flamegraph", in},                                            // no -o
             {"flamegraph", "-o", out},                                     // no input
             {"flamegraph", in, in, "-o", out},                             // two without --diff
             {"flamegraph", "--diff", in, "-o", out},                       // one with --diff
             {"flamegraph", (dir / "missing").string(), "-o", out},         // unreadable
             {"flamegraph", in, "-o", (dir / "no/such/dir.svg").string()},  // unwritable
             {"flamegraph", in, "-o", out, "--minwidth", "-1"},
             {"flamegraph", in, "-o", out, "--bogus"},
             {"fold", "--root", "pid"},
         }) {
        auto r = run_lockprof(args);
        EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
        EXPECT_EQ(r.err.rfind("lockprof: ", 0), 0u) << r.err;
    }
}

TEST(CliFlamegraph, DiffShowsChangeAndVanished) {
    TempDir dir;
    write(dir / "before.folded", "m;lock 50\nm;work 30\nm;old 20\n");
    write(dir / "after.folded", "m;lock 90\nm;work 10\n");
    auto r = run_lockprof({"flamegraph", "--diff", (dir / "before.folded").string(),
                           (dir / "after.folded").string(), "-o", (dir / "diff.svg").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto svg = read_all(dir / "diff.svg");
    EXPECT_NE(svg.find(">Differential Flame Graph</text>"), std::string::npos);
    EXPECT_NE(svg.find("<title>lock (after: 90 samples, 90.00%; before: 50 samples, 50.00%; "
                       "change +40.00 percentage points of total)</title>"),
              std::string::npos);
    EXPECT_NE(svg.find("fill=\"rgb(255,0,0)\""), std::string::npos);  // lock: largest growth
    EXPECT_NE(svg.find("m;old [before: 20 samples, 20.00%]"), std::string::npos);
}

TEST(CliFold, PerfScriptToFoldedGolden) {
    TempDir dir;
    write(dir / "perf.txt", kPerfScript);
    auto r = run_lockprof({"fold", (dir / "perf.txt").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "prog;main;do_syscall_64_[k] 1\nprog;main;s_lock 2\n");
    EXPECT_EQ(r.err, "");
    r = run_lockprof({"fold", (dir / "perf.txt").string(), "--root", "none", "-o",
                      (dir / "out.folded").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read_all(dir / "out.folded"), "main;do_syscall_64_[k] 1\nmain;s_lock 2\n");
    r = run_lockprof({"fold", (dir / "perf.txt").string(), "--weight", "period"});
    EXPECT_EQ(r.out, "prog;main;do_syscall_64_[k] 250000\nprog;main;s_lock 500000\n");
}

TEST(CliFold, NonPerfInputIsOneLineExit2AndStrictToo) {
    TempDir dir;
    write(dir / "x.txt", "this is not perf output\n");
    auto r = run_lockprof({"fold", (dir / "x.txt").string(), "-o", (dir / "x.folded").string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("x.txt:1: unrecognised line"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "x.folded"));
    // Some usable lines: warnings, and the samples folded.
    write(dir / "mixed.txt", std::string("garbage\n") + kPerfScript);
    r = run_lockprof({"fold", (dir / "mixed.txt").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("skipped 1 unrecognised line"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("s_lock"), std::string::npos) << r.out;
    r = run_lockprof({"fold", "--strict", (dir / "x.txt").string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

// The wrong file given as folded stacks or perf script text: a binary, a result JSON.
TEST(CliFlamegraph, InputWithNoUsableLineIsOneLineExit2AndWritesNothing) {
    TempDir dir;
    write(dir / "before.folded", "main;a 3\nmain;b 1\n");
    write(dir / "result.json",
          "{\n  \"schema\": \"lockprof.result\",\n  \"schema_version\": 1,\n  \"cells\": [\n"
          "    {\n      \"threads\": 2\n    }\n  ]\n}\n");
    write(dir / "binary", std::string("\x7f"
                                      "ELF\x02\x01\x01\0\0\0\0\n\xff\xfe 1\n",
                                      17));
    const auto svg = (dir / "out.svg").string();
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"flamegraph", "--diff", (dir / "before.folded").string(),
              (dir / "result.json").string(), "-o", svg},
             {"flamegraph", (dir / "binary").string(), "-o", svg},
             {"fold", (dir / "result.json").string(), "-o", svg},
             {"fold", (dir / "binary").string(), "-o", svg}}) {
        const auto r = run_lockprof(args);
        EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
        EXPECT_NE(r.err.find("none of its"), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(svg)) << args[1];
    }
}
