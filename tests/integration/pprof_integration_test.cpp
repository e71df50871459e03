// pprof profiles read by the real consumer: `go tool pprof` (Debian golang-go, its vendored
// github.com/google/pprof) opens a profile lockprof built from a sampled run's samples, and its
// -raw, -top, -traces and -tagfocus views agree with lockprof's own report of the same samples
// (`lockprof annotate`): the same number of samples, the same hottest function per lock, and
// -tagfocus lock=tas keeps tas's samples only. Skips, saying why, when go is not installed.
// The profile and pprof's outputs land in LOCKPROF_ARTIFACT_DIR/pprof.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "cli/cli_runner.hpp"

namespace fs = std::filesystem;
using lockprof::test::read_all;
using lockprof::test::run_lockprof;
using lockprof::test::shell;
using lockprof::test::shell_quote;
using lockprof::test::ShellResult;
using lockprof::test::TempDir;

namespace {

fs::path pprof_artifacts() {
    return fs::path(LOCKPROF_ARTIFACT_DIR) / "pprof";
}

// What lockprof's annotation says per lock: its samples and its hottest function.
struct Cell {
    std::uint64_t samples = 0;
    std::string hottest;  // short name, "measured_loop<TasLock<(Delay)1>, false>"
};
std::map<std::string, Cell> annotation_cells(const std::string& text) {
    std::map<std::string, Cell> cells;
    const std::regex header(R"(^Annotation: (\S+), \d+ threads? - (\d+) samples)");
    const std::regex function(R"(^\s+[0-9.]+%\s+(.+?)\s+\[[^\]]*\]\s*$)");
    std::istringstream in(text);
    std::string current;
    std::smatch m;
    for (std::string line; std::getline(in, line);) {
        if (std::regex_search(line, m, header)) {
            current = m[1].str();
            cells[current].samples = std::stoull(m[2].str());
        } else if (!current.empty() && cells[current].hottest.empty() &&
                   std::regex_search(line, m, function)) {
            cells[current].hottest = m[1].str();
        }
    }
    return cells;
}

// "Showing nodes accounting for 49, 33.46% of 146 total": what the view shows (49, the samples
// -tagfocus kept) and the profile's total (146).
std::uint64_t top_shown(const std::string& top) {
    std::smatch m;
    if (!std::regex_search(top, m, std::regex(R"(accounting for (\d+), )"))) return 0;
    return std::stoull(m[1].str());
}
std::uint64_t top_total(const std::string& top) {
    std::smatch m;
    if (!std::regex_search(top, m, std::regex(R"(of (\d+) total)"))) return 0;
    return std::stoull(m[1].str());
}

// The first function row of -top (flat, hottest first): its name.
std::string top_function(const std::string& top) {
    const std::regex row(R"(^\s*\d+\s+[0-9.]+%\s+[0-9.]+%\s+\d+\s+[0-9.]+%\s+(.+)$)");
    std::istringstream in(top);
    std::smatch m;
    for (std::string line; std::getline(in, line);)
        if (std::regex_search(line, m, row)) return m[1].str();
    return {};
}

class GoPprof : public ::testing::Test {
  protected:
    void SetUp() override {
        if (std::system("command -v go >/dev/null 2>&1") != 0)
            GTEST_SKIP() << "go is not installed (Debian golang-go ships `go tool pprof`; "
                            "scripts/setup.sh --extras installs it)";
        fs::create_directories(dir_.path / "home");
        env_ = "env HOME=" + shell_quote((dir_ / "home").string()) +
               " GOCACHE=" + shell_quote((dir_ / "gocache").string()) +
               " GOPATH=" + shell_quote((dir_ / "gopath").string()) + " GOFLAGS= ";
    }
    ShellResult pprof(const std::string& options, const fs::path& file, const std::string& name) {
        const auto r =
            shell(env_ + "timeout 120 go tool pprof " + options + " " + shell_quote(file.string()));
        fs::create_directories(pprof_artifacts());
        std::ofstream(pprof_artifacts() / (name + ".txt")) << r.out << r.err;
        return r;
    }
    TempDir dir_;
    std::string env_;
};

TEST_F(GoPprof, ReadsASampledRunAsLockprofReportsIt) {
    const auto samples = dir_ / "S.json", live = dir_ / "live.pb.gz", profile = dir_ / "S.pb.gz";
    const auto run =
        run_lockprof({"--lock", "tas,cas", "--threads", "2", "--duration", "200ms", "--trials", "1",
                      "--sample", "--samples-out", samples.string(), "--pprof", live.string()});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    // `convert` writes from the saved samples the file the run wrote from memory.
    const auto converted = run_lockprof({"convert", samples.string(), "--pprof", profile.string()});
    ASSERT_EQ(converted.exit_code, 0) << converted.err;
    {
        std::ifstream a(live, std::ios::binary), b(profile, std::ios::binary);
        const std::string live_bytes{std::istreambuf_iterator<char>(a), {}};
        const std::string converted_bytes{std::istreambuf_iterator<char>(b), {}};
        EXPECT_FALSE(live_bytes.empty());
        EXPECT_EQ(live_bytes, converted_bytes) << "run --pprof and convert --pprof differ";
    }
    fs::create_directories(pprof_artifacts());
    fs::copy_file(profile, pprof_artifacts() / "S.pb.gz", fs::copy_options::overwrite_existing);

    const auto annotate = run_lockprof({"annotate", samples.string(), "--no-explain"});
    ASSERT_EQ(annotate.exit_code, 0) << annotate.err;
    const auto cells = annotation_cells(annotate.out);
    ASSERT_EQ(cells.size(), 2u) << annotate.out;
    std::uint64_t total = 0;
    for (const auto& [lock, cell] : cells) {
        ASSERT_GT(cell.samples, 0u) << lock;
        ASSERT_FALSE(cell.hottest.empty()) << annotate.out;
        total += cell.samples;
    }

    // -raw: the profile as pprof decoded it; each sample's first value is its count.
    const auto raw = pprof("-raw", profile, "raw");
    ASSERT_EQ(raw.status, 0) << raw.err;
    EXPECT_NE(raw.out.find("PeriodType: cpu nanoseconds"), std::string::npos) << raw.out;
    EXPECT_NE(raw.out.find("samples/count cpu/nanoseconds"), std::string::npos) << raw.out;
    EXPECT_NE(raw.out.find("Duration:"), std::string::npos) << raw.out;
    std::uint64_t raw_total = 0;
    {
        const std::regex sample(R"(^\s+(\d+)\s+\d+(\s+\d+)?: [0-9 ]+$)");
        std::istringstream in(raw.out);
        std::smatch m;
        for (std::string line; std::getline(in, line);)
            if (std::regex_search(line, m, sample)) raw_total += std::stoull(m[1].str());
    }
    EXPECT_EQ(raw_total, total) << raw.out;
    EXPECT_NE(raw.out.find("lock:[tas]"), std::string::npos) << raw.out;
    EXPECT_NE(raw.out.find("threads:[2]"), std::string::npos) << raw.out;

    // -top: every sample, and with inlined functions folded into their callers (-noinlines)
    // the hottest function is the one lockprof's annotation names.
    const auto top = pprof("-top -sample_index=samples", profile, "top");
    ASSERT_EQ(top.status, 0) << top.err;
    EXPECT_EQ(top_total(top.out), total) << top.out;
    const auto top_functions =
        pprof("-top -noinlines -sample_index=samples", profile, "top-noinlines");
    ASSERT_EQ(top_functions.status, 0) << top_functions.err;
    EXPECT_EQ(top_total(top_functions.out), total) << top_functions.out;
    EXPECT_EQ(top_shown(top_functions.out), total) << top_functions.out;
    // pprof shows lockprof's short names, so the hottest is named as the annotation names it.
    const std::string hottest = top_function(top_functions.out);
    bool named = false;
    for (const auto& [lock, cell] : cells) named |= hottest == cell.hottest;
    EXPECT_TRUE(named) << "pprof's hottest: " << hottest << "\n" << annotate.out;

    // -tagfocus lock=tas: tas's samples only, and its hottest function is tas's.
    const auto tas = pprof("-top -noinlines -sample_index=samples -tagfocus lock=tas", profile,
                           "top-tagfocus-tas");
    ASSERT_EQ(tas.status, 0) << tas.err;
    EXPECT_EQ(top_shown(tas.out), cells.at("tas").samples) << tas.out;
    EXPECT_EQ(top_total(tas.out), total) << tas.out;
    EXPECT_EQ(top_function(tas.out), cells.at("tas").hottest) << tas.out;
    EXPECT_EQ(tas.out.find("CasLock"), std::string::npos) << tas.out;

    // -traces: each sample's stack, with the inlined lock code and its labels.
    const auto traces = pprof("-traces", profile, "traces");
    ASSERT_EQ(traces.status, 0) << traces.err;
    EXPECT_NE(traces.out.find("measured_loop<"), std::string::npos) << traces.out;
    EXPECT_NE(traces.out.find("TasLock<"), std::string::npos) << traces.out;
    for (const auto* key : {"lock:", "flavour:", "threads:", "thread:", "tid:"})
        EXPECT_NE(traces.out.find(key), std::string::npos) << key << "\n" << traces.out;
}

// `go tool pprof` disassembles with Go's own object reader, which cannot place a PIE's
// runtime addresses (its ObjAddr translates nothing), so -disasm there finds no samples in
// lockprof. The standalone pprof, built from the source Debian ships with the schema
// (golang-github-google-pprof-dev, GOPATH mode, offline), uses binutils as pprof normally does:
// -disasm, -list and -weblist work on lockprof's profiles there.
TEST_F(GoPprof, StandalonePprofDisassemblesAndListsTheSampledCode) {
    const std::string gocode = "/usr/share/gocode";
    if (!fs::exists(gocode + "/src/github.com/google/pprof/driver"))
        GTEST_SKIP() << "no pprof source in " << gocode << " (golang-github-google-pprof-dev)";
    const auto standalone = dir_ / "pprof";
    const auto built = shell(env_ + "GO111MODULE=off GOPATH=" + gocode + " go build -o " +
                             shell_quote(standalone.string()) + " github.com/google/pprof");
    ASSERT_EQ(built.status, 0) << built.err;

    const auto samples = dir_ / "S.json", profile = dir_ / "S.pb.gz";
    const auto run = run_lockprof({"--lock", "tas", "--threads", "2", "--duration", "500ms",
                                   "--trials", "1", "--pprof", profile.string()});
    ASSERT_EQ(run.exit_code, 0) << run.err;

    const auto tool = [&](const std::string& options, const std::string& name) {
        const auto r = shell(env_ + "timeout 120 " + shell_quote(standalone.string()) + " " +
                             options + " " + shell_quote(profile.string()));
        fs::create_directories(pprof_artifacts());
        std::ofstream(pprof_artifacts() / (name + ".txt")) << r.out << r.err;
        return r;
    };
    // -disasm matches the binary's symbols (nm, demangled in full); the exchange of TasLock's
    // loop carries samples. pprof takes the binary's load address from the first node of its
    // graph that it maps back (binutils' ObjAddr computes the base once), and when that node is
    // libc's start_thread, the caller of every trial thread, the base is refused and every
    // address misses: "no matches found", in 3 of 40 tries of one profile. -show_from drops the
    // frames above the loop, so every node is lockprof's (0 of 40); docs/flamegraph.md says so.
    const auto disasm =
        tool("-sample_index=samples -show_from 'measured_loop<' -disasm 'measured_loop<.*TasLock'",
             "disasm");
    ASSERT_EQ(disasm.status, 0) << disasm.err << disasm.out;
    EXPECT_NE(disasm.out.find("ROUTINE"), std::string::npos) << disasm.out;
    EXPECT_NE(disasm.out.find("xchg"), std::string::npos) << disasm.out;
    // -list opens the sources the line records name (absolute paths).
    const auto list = tool("-sample_index=samples -list 'measured_loop<TasLock'", "list");
    ASSERT_EQ(list.status, 0) << list.err;
    EXPECT_NE(list.out.find("ROUTINE"), std::string::npos) << list.out;
    EXPECT_EQ(list.out.find("could not find file"), std::string::npos) << list.out;
    EXPECT_NE(list.out.find("lock.lock(context)"), std::string::npos) << list.out;
}

// `record --pprof`: a recorded command's samples, labelled with its processes and threads.
TEST_F(GoPprof, ReadsARecordingWithProcessLabels) {
    const auto profile = dir_ / "R.pb.gz";
    const auto rec =
        run_lockprof({"record", "--pprof", profile.string(), "--", LOCKPROF_BIN, "--lock", "tas",
                      "--threads", "2", "--duration", "300ms", "--trials", "1", "--quiet"});
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    const auto top = pprof("-top -noinlines -sample_index=samples", profile, "record-top");
    ASSERT_EQ(top.status, 0) << top.err;
    EXPECT_GT(top_total(top.out), 0u) << top.out;
    EXPECT_NE(top.out.find("measured_loop<"), std::string::npos) << top.out;
    const auto traces = pprof("-traces", profile, "record-traces");
    ASSERT_EQ(traces.status, 0) << traces.err;
    for (const auto* key : {"process:", "pid:", "tid:"})
        EXPECT_NE(traces.out.find(key), std::string::npos) << key << "\n" << traces.out;
}

}  // namespace
