// `lockprof record --spin`: uprobes on a helper's PostgreSQL-like s_lock() and a plain slow
// path, with exact entries per call site. Skips where uprobes cannot be used (no uprobe PMU,
// not root, perf_event missing as under qemu-user), saying why.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "cli/process.hpp"
#include "support/uprobes.hpp"

extern char** environ;

namespace lockprof::test {
namespace {

using nlohmann::json;

json entries_by_site(const json& doc) {
    json out = json::object();
    for (const auto& s : doc["spin_calls"]["sites"]) out[s["site"].get<std::string>()] = s;
    return out;
}

TEST(CliRecordSpin, SLockEntriesPerCallSiteAreExact) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    TempDir dir;
    const auto r = run_lockprof({"record", "--no-counters", "--spin", "s_lock", "--output",
                                 (dir / "r.json").string(), "--", LOCKPROF_SPIN_HELPER});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("Spin slow paths (uprobes on s_lock in lockprof_spin_helper): 1500 "
                         "entries"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("xlog.c:1234 XLogGetLastRemovedSegno"), std::string::npos) << r.out;
    const json doc = json::parse(read_all(dir / "r.json"));
    const json& spin = doc["spin_calls"];
    EXPECT_EQ(spin["entries"], 1500);
    EXPECT_EQ(spin["timed"], 1500);
    ASSERT_EQ(spin["functions"].size(), 1u);
    EXPECT_EQ(spin["functions"][0]["kernel_entries"], 1500);
    const json sites = entries_by_site(doc);
    ASSERT_EQ(sites.size(), 2u) << spin.dump(1);
    const json& first = sites["spin_helper.c:101 first_caller"];
    const json& second = sites["xlog.c:1234 XLogGetLastRemovedSegno"];
    EXPECT_EQ(first["entries"], 1000);
    EXPECT_EQ(second["entries"], 500);
    EXPECT_EQ(second["file"], "src/backend/access/transam/xlog.c");
    EXPECT_EQ(second["line"], 1234);
    EXPECT_EQ(second["caller"], "XLogGetLastRemovedSegno");
    EXPECT_GT(first["total_ns"].get<double>(), 0);
    EXPECT_GT(second["mean_ns"].get<double>(), 0);
    EXPECT_EQ(first["distinct_locks"], 1);
    EXPECT_EQ(first["processes"], 1);
    EXPECT_NE(first["locks"][0], second["locks"][0]);  // two different lock words
    // s_lock's result is its sleeps: the helper's returns line % 5, 1 and 4 per call.
    EXPECT_EQ(first["sleeps"], 1000);
    EXPECT_EQ(second["sleeps"], 2000);
    EXPECT_EQ(spin["sleeps"], 3000);
    EXPECT_EQ(spin["functions"][0]["sleeps"], 3000);
    EXPECT_NE(r.out.find("1500 entries, "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(", 3000 sleeps"), std::string::npos) << r.out;
    // Sorted by time in the slow path (which site is first depends on preemption here).
    EXPECT_GE(spin["sites"][0]["total_ns"].get<double>(),
              spin["sites"][1]["total_ns"].get<double>());
}

TEST(CliRecordSpin, PlainSlowPathIsNamedByItsReturnAddress) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    TempDir dir;
    const auto r =
        run_lockprof({"record", "--no-counters", "--spin", "lock_slow_path,s_lock", "--output",
                      (dir / "r.json").string(), "--", LOCKPROF_SPIN_HELPER});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const json doc = json::parse(read_all(dir / "r.json"));
    EXPECT_EQ(doc["spin_calls"]["entries"], 1800);
    bool found = false;
    for (const auto& s : doc["spin_calls"]["sites"]) {
        if (s["function"] != "lock_slow_path") continue;
        found = true;
        EXPECT_EQ(s["entries"], 300);
        EXPECT_EQ(s["caller"], "third_caller");
        EXPECT_TRUE(s["sleeps"].is_null()) << s;  // a function that does not say
        EXPECT_NE(s["file"].get<std::string>().find("spin_helper.cpp"), std::string::npos) << s;
        EXPECT_GT(s["line"].get<int>(), 0);
    }
    EXPECT_TRUE(found) << doc["spin_calls"].dump(1);
}

// --spin-folded/--spin-flamegraph: one stack per call site, CALLER;FUNCTION at SITE, weighted by
// its slow-path nanoseconds as the JSON gives them; they imply --spin (the known slow paths).
TEST(CliRecordSpin, SlowPathTimeIsFoldedByCallSite) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    TempDir dir;
    const auto r =
        run_lockprof({"record", "--no-counters", "--spin-folded", (dir / "spin.folded").string(),
                      "--spin-flamegraph", (dir / "spin.svg").string(), "--output",
                      (dir / "r.json").string(), "--", LOCKPROF_SPIN_HELPER});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const json doc = json::parse(read_all(dir / "r.json"));
    std::map<std::string, std::uint64_t> expected;
    for (const auto& site : doc["spin_calls"]["sites"])
        expected[site["caller"].get<std::string>() + ";" + site["function"].get<std::string>() +
                 " at " + site["site"].get<std::string>()] =
            static_cast<std::uint64_t>(site["total_ns"].get<double>() + 0.5);
    ASSERT_EQ(expected.size(), 2u) << doc["spin_calls"].dump(1);  // s_lock's two sites
    EXPECT_TRUE(
        expected.count("XLogGetLastRemovedSegno;s_lock at xlog.c:1234 XLogGetLastRemovedSegno"));
    std::map<std::string, std::uint64_t> folded;
    std::istringstream lines(folded_stack_lines(read_all(dir / "spin.folded")));
    for (std::string line; std::getline(lines, line);) {
        const auto space = line.rfind(' ');
        ASSERT_NE(space, std::string::npos) << line;
        folded[line.substr(0, space)] = std::stoull(line.substr(space + 1));
    }
    EXPECT_EQ(folded, expected);
    const std::string svg = read_all(dir / "spin.svg");
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_NE(svg.find("ns in the slow path"), std::string::npos);
    EXPECT_NE(svg.find("XLogGetLastRemovedSegno"), std::string::npos);
}

// --call-graph dwarf: each entry also copies its stack (up to 256 kept per call site), unwound
// from the call site up to main; --spin-folded splits each site's time over its stacks, the
// totals unchanged.
TEST(CliRecordSpin, DwarfStacksReachMainAndKeepEachSitesTime) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    TempDir dir;
    const auto r =
        run_lockprof({"record", "--no-counters", "--spin", "s_lock", "--call-graph", "dwarf,4096",
                      "--spin-folded", (dir / "spin.folded").string(), "--output",
                      (dir / "r.json").string(), "--", LOCKPROF_SPIN_HELPER});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const json doc = json::parse(read_all(dir / "r.json"));
    const json& spin = doc["spin_calls"];
    EXPECT_EQ(spin["entries"], 1500);  // the stack events add no entries
    EXPECT_EQ(spin["call_graph"], "dwarf");
    EXPECT_EQ(spin["stack_size"], 4096);
    // 1000 and 500 entries, each with its stack (unless a full buffer dropped it), 256 kept
    // per site.
    EXPECT_LE(spin["stacks_seen"].get<int>(), 1500) << spin.dump(1);
    EXPECT_GE(spin["stack_samples"].get<int>(), 50) << spin.dump(1);
    EXPECT_LE(spin["stack_samples"].get<int>(), 2 * 256) << spin.dump(1);
    EXPECT_NE(r.out.find("call stacks: "), std::string::npos) << r.out;
    const json sites = entries_by_site(doc);
    const json& first = sites["spin_helper.c:101 first_caller"];
    ASSERT_FALSE(first["stacks"].empty()) << first.dump(1);
    const auto frames = first["stacks"][0]["frames"].get<std::vector<std::string>>();
    ASSERT_GE(frames.size(), 2u) << first.dump(1);
    EXPECT_EQ(frames.back(), "first_caller");
    EXPECT_EQ(frames[frames.size() - 2], "main");

    // Per site, the folded weights add up to its time (each stack's share rounded).
    std::map<std::string, std::uint64_t> by_leaf;
    std::map<std::string, std::size_t> lines_of;
    bool whole = false;
    std::istringstream lines(folded_stack_lines(read_all(dir / "spin.folded")));
    for (std::string line; std::getline(lines, line);) {
        const auto space = line.rfind(' ');
        ASSERT_NE(space, std::string::npos) << line;
        const std::string stack = line.substr(0, space);
        const std::string leaf = stack.substr(stack.rfind(';') + 1);
        by_leaf[leaf] += std::stoull(line.substr(space + 1));
        ++lines_of[leaf];
        whole = whole || stack.find(
                             "main;first_caller;s_lock at spin_helper.c:101 "
                             "first_caller") != std::string::npos;
    }
    EXPECT_TRUE(whole) << read_all(dir / "spin.folded");
    for (const auto& site : spin["sites"]) {
        const std::string leaf = "s_lock at " + site["site"].get<std::string>();
        const auto total = static_cast<double>(site["total_ns"].get<double>());
        EXPECT_NEAR(static_cast<double>(by_leaf[leaf]), total,
                    static_cast<double>(lines_of[leaf]) + 1)
            << leaf;
    }
}

// A sample taken while s_lock runs under its uretprobe finds the kernel's trampoline where
// its caller's return address was; the recorder gives it back from the call the probe saw, so
// s_lock's samples keep first_caller and second_caller as their callers (they read
// `main;[unknown];s_lock` before), with DWARF stacks and with frame pointers.
TEST(CliRecordSpin, SamplesInAProbedFunctionKeepTheirCallers) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    for (const std::string graph : {"dwarf", "fp"}) {
        TempDir dir;
        const auto r = run_lockprof({"record", "--no-counters", "--spin", "s_lock", "--sample",
                                     "--sample-freq", "20000", "--call-graph", graph, "--folded",
                                     (dir / "f.folded").string(), "--", LOCKPROF_SPIN_HELPER});
        ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
        std::uint64_t in_s_lock = 0, under_callers = 0;
        std::istringstream lines(folded_stack_lines(read_all(dir / "f.folded")));
        for (std::string line; std::getline(lines, line);) {
            const auto space = line.rfind(' ');
            const std::string stack = line.substr(0, space);
            if (!stack.ends_with(";s_lock")) continue;
            const auto weight = std::stoull(line.substr(space + 1));
            in_s_lock += weight;
            if (stack.find("first_caller;s_lock") != std::string::npos ||
                stack.find("second_caller;s_lock") != std::string::npos ||
                (graph == "fp" && stack.ends_with("main;s_lock")))
                under_callers += weight;
            EXPECT_EQ(stack.find("[unknown];s_lock"), std::string::npos) << graph << ": " << line;
        }
        // s_lock spins for ~5 us a call, 1500 calls: dozens of samples at 20 kHz.
        ASSERT_GT(in_s_lock, 0u) << graph << ": no sample in s_lock\n"
                                 << read_all(dir / "f.folded");
        EXPECT_EQ(under_callers, in_s_lock) << graph << "\n" << read_all(dir / "f.folded");
    }
}

// record measures what its probes and samples cost here before it attaches, and says what
// share of the targets' CPU time they took: the calibrated cost times the calls the kernel
// counted and the samples taken, over task_clock; above 5%, a warning that says how to lower it.
TEST(CliRecordSpin, InstrumentsCostIsCalibratedAndReported) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    TempDir dir;
    const auto r = run_lockprof({"record", "--spin", "s_lock", "--sample", "--output",
                                 (dir / "r.json").string(), "--", LOCKPROF_SPIN_HELPER});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("\nInstruments (their cost calibrated here before attaching): spin "
                         "probes "),
              std::string::npos)
        << r.out;
    const json cost = json::parse(read_all(dir / "r.json"))["instrument_cost"];
    ASSERT_TRUE(cost.is_object()) << cost;
    const json& probe = cost["calibration"]["probe_call"];
    ASSERT_TRUE(probe.is_object()) << cost.dump(1);
    EXPECT_GT(probe["ns"].get<double>(), 0) << cost.dump(1);
    EXPECT_LE(probe["low_ns"].get<double>(), probe["ns"].get<double>());
    EXPECT_EQ(cost["probe_calls"], 1500);
    EXPECT_NEAR(cost["probes_ns"].get<double>(), 1500 * probe["ns"].get<double>(), 1);
    ASSERT_TRUE(cost["calibration"]["sample"].is_object()) << cost.dump(1);
    // 10 kHz, or the kernel's ceiling where it lowered that below (the emulated arm64 guest).
    const auto frequency = cost["calibration"]["sample_frequency"].get<std::uint64_t>();
    EXPECT_LE(frequency, 10000u) << cost.dump(1);
    EXPECT_GT(frequency, 0u);
    EXPECT_EQ(cost["target_cpu_source"], "task_clock");
    const double share = cost["share"].get<double>();
    EXPECT_NEAR(share,
                (cost["probes_ns"].get<double>() + cost["sampling_ns"].get<double>()) /
                    cost["target_cpu_ns"].get<double>(),
                1e-9);
    // 1500 traps into the kernel and back around a few microseconds of spinning each.
    EXPECT_GT(share, 0.05) << cost.dump(1);
    // "took about 38% of ..." or, where the calibrated estimate exceeds the targets' CPU time
    // (a loaded host: the calibration's hits cost more than the run's), "took most of ...".
    EXPECT_NE(r.out.find("warning: the instruments took "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("probe fewer functions or calls"), std::string::npos) << r.out;
}

TEST(CliRecordSpin, DefaultFindsTheKnownSlowPaths) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    TempDir dir;
    const auto r = run_lockprof({"record", "--no-counters", "--spin", "--output",
                                 (dir / "r.json").string(), "--", LOCKPROF_SPIN_HELPER});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const json doc = json::parse(read_all(dir / "r.json"));
    bool s_lock = false;
    for (const auto& f : doc["spin_calls"]["functions"])
        if (f["function"] == "s_lock") {
            s_lock = true;
            EXPECT_EQ(f["kernel_entries"], 1500);
        }
    EXPECT_TRUE(s_lock) << doc["spin_calls"].dump(1);
}

// A copy of the spin helper (and its plugin) of the test's own. The helpers attached by pid wait
// until they see a breakpoint in their own code, and a command recorded with --spin alongside
// puts one in every process of the same file (UprobeSampler's system-wide keeper event).
std::string private_copy(const TempDir& dir, const std::string& file) {
    const auto copy = dir / std::filesystem::path(file).filename();
    std::filesystem::copy_file(file, copy);
    return copy.string();
}

TEST(CliRecordSpin, AttachedProcessIsProbedPerThread) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    // The helper makes its calls once it is probed (waiting up to 10 s): every call is seen.
    TempDir copies;
    std::string helper = private_copy(copies, LOCKPROF_SPIN_HELPER), before = "10000",
                after = "100";
    char* argv[] = {helper.data(), before.data(), after.data(), nullptr};
    pid_t pid = -1;
    ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv, environ), 0);
    TempDir dir;
    const auto r = run_lockprof({"record", "--no-counters", "--spin", "s_lock", "--pid",
                                 std::to_string(pid), "--output", (dir / "r.json").string()});
    waitpid(pid, nullptr, 0);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const json doc = json::parse(read_all(dir / "r.json"));
    EXPECT_EQ(doc["spin_calls"]["entries"], 1500) << doc["spin_calls"].dump(1);
    const json sites = entries_by_site(doc);
    EXPECT_EQ(sites["spin_helper.c:101 first_caller"]["entries"], 1000);
    EXPECT_EQ(sites["xlog.c:1234 XLogGetLastRemovedSegno"]["entries"], 500);
}

// A library the process loads with dlopen after the recording started is searched when its
// mapping appears, and its definition of the function is probed in the attached threads from
// then on: all 200 of its calls are counted, apart from the executable's own 300.
TEST(CliRecordSpin, LibraryLoadedLaterIsSearchedAndProbed) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    TempDir copies;
    std::string helper = private_copy(copies, LOCKPROF_SPIN_HELPER), before = "10000",
                after = "300", plugin = private_copy(copies, LOCKPROF_SPIN_PLUGIN);
    char* argv[] = {helper.data(), before.data(), after.data(), plugin.data(), nullptr};
    pid_t pid = -1;
    ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv, environ), 0);
    TempDir dir;
    const auto r = run_lockprof({"record", "--no-counters", "--spin", "lock_slow_path", "--pid",
                                 std::to_string(pid), "--output", (dir / "r.json").string()});
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the helper failed";
    const json doc = json::parse(read_all(dir / "r.json"));
    const json& spin = doc["spin_calls"];
    ASSERT_EQ(spin["functions"].size(), 2u) << spin.dump(1);
    const std::string plugin_name = std::filesystem::path(plugin).filename().string();
    for (const auto& f : spin["functions"]) {
        const bool in_plugin = f["path"].get<std::string>().find(plugin_name) != std::string::npos;
        EXPECT_EQ(f["kernel_entries"], in_plugin ? 200 : 300) << f;
        EXPECT_EQ(f["entries"], in_plugin ? 200 : 300) << f;
    }
    bool searched = false;
    for (const auto& s : spin["searched"])
        searched |= s.get<std::string>().find(plugin_name) != std::string::npos;
    EXPECT_TRUE(searched) << spin["searched"].dump();
    EXPECT_NE(r.out.find("after the recording started: probed from when lockprof saw it"),
              std::string::npos)
        << r.out;
    const json sites = entries_by_site(doc);
    bool plugin_site = false;
    for (const auto& [name, site] : sites.items())
        plugin_site |= site["caller"] == "spin_plugin_run" && site["entries"] == 200;
    EXPECT_TRUE(plugin_site) << sites.dump(1);
}

TEST(CliRecordSpin, CommandExitingAtOnceStillNamesItsSites) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    // No sleep after the calls: strings not read while it lived come from its mapped file.
    TempDir dir;
    const auto r = run_lockprof({"record", "--no-counters", "--spin", "s_lock", "--output",
                                 (dir / "r.json").string(), "--", LOCKPROF_SPIN_HELPER, "0", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const json sites = entries_by_site(json::parse(read_all(dir / "r.json")));
    EXPECT_EQ(sites["spin_helper.c:101 first_caller"]["entries"], 1000) << sites.dump(1);
    EXPECT_EQ(sites["xlog.c:1234 XLogGetLastRemovedSegno"]["entries"], 500) << sites.dump(1);
}

TEST(CliRecordSpin, MatchedProcessIsProbed) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    // A copy with a name of its own, so helpers of tests running alongside do not match.
    TempDir dir;
    const std::string name = "spinm" + std::to_string(getpid() % 1000000);
    std::filesystem::copy_file(LOCKPROF_SPIN_HELPER, dir / name);
    std::string helper = (dir / name).string(), before = "10000", after = "100";
    char* argv[] = {helper.data(), before.data(), after.data(), nullptr};
    pid_t pid = -1;
    ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv, environ), 0);
    // The recording ends when the helper is done, not at a fixed time: a 2 s --duration ended
    // it after 174 of the 1500 calls once, the suite's other record tests loading the VM (the
    // helper calls only after the probe is in place, so a slow attach delays all its calls).
    Child lockprof =
        Child::start({LOCKPROF_BIN, "record", "--no-counters", "--spin", "s_lock", "--match", name,
                      "--duration", "120s", "--output", (dir / "r.json").string()},
                     dir / "out", dir / "err");
    ASSERT_GT(lockprof.pid, 0);
    waitpid(pid, nullptr, 0);
    ASSERT_TRUE(signal_and_wait_taken(lockprof, SIGINT))
        << lockprof.describe() << read_all(dir / "err");
    ASSERT_TRUE(lockprof.wait()) << "hung after SIGINT";
    ASSERT_EQ(lockprof.exit_code(), 130) << lockprof.describe() << read_all(dir / "err");
    const json doc = json::parse(read_all(dir / "r.json"));
    EXPECT_EQ(doc["spin_calls"]["entries"], 1500) << doc["spin_calls"].dump(1);
    EXPECT_EQ(doc["spin_calls"]["functions"][0]["kernel_entries"], 1500);
    EXPECT_EQ(doc["spin_calls"]["functions"][0]["path"], helper);
}

TEST(CliRecordSpin, ProcessWithoutTheFunctionIsAUsageError) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    const auto r = run_lockprof({"record", "--no-counters", "--spin", "s_lock", "--duration",
                                 "200ms", "--pid", std::to_string(getpid())});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--spin: no function s_lock in the target's binaries (searched"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

TEST(CliRecordSpin, UnknownFunctionNamesTheBinariesSearched) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    const auto r = run_lockprof(
        {"record", "--no-counters", "--spin", "no_such_function_xyz", "--", LOCKPROF_SPIN_HELPER});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("no function no_such_function_xyz"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("lockprof_spin_helper"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("libc.so.6"), std::string::npos) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

}  // namespace
}  // namespace lockprof::test
