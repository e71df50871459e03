// `lockprof record --spin`: uprobes on a helper's PostgreSQL-like s_lock() and a plain slow
// path, with exact entries per call site. Skips where uprobes cannot be used (no uprobe PMU,
// not root, perf_event missing as under qemu-user), saying why.
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

extern char** environ;

namespace lockprof::test {
namespace {

using nlohmann::json;

// Why uprobes cannot be used here, "" when they can.
std::string uprobes_unavailable() {
    if (!std::filesystem::exists("/sys/bus/event_source/devices/uprobe/type"))
        return "no uprobe PMU is registered (/sys/bus/event_source/devices/uprobe)";
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0)
        return std::string("perf_event_open fails here (") + std::strerror(errno) +
               "; qemu-user answers ENOSYS)";
    close(static_cast<int>(fd));
    if (geteuid() != 0) return "uprobes need root or CAP_PERFMON; the tests run as a user";
    return "";
}

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
        EXPECT_NE(s["file"].get<std::string>().find("spin_helper.cpp"), std::string::npos) << s;
        EXPECT_GT(s["line"].get<int>(), 0);
    }
    EXPECT_TRUE(found) << doc["spin_calls"].dump(1);
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

TEST(CliRecordSpin, AttachedProcessIsProbedPerThread) {
    if (const auto why = uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    // The helper sleeps 1 s before its calls: attached by pid meanwhile, every call is seen.
    std::string helper = LOCKPROF_SPIN_HELPER, before = "1000", after = "100";
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
    std::string helper = (dir / name).string(), before = "1000", after = "100";
    char* argv[] = {helper.data(), before.data(), after.data(), nullptr};
    pid_t pid = -1;
    ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv, environ), 0);
    const auto r = run_lockprof({"record", "--no-counters", "--spin", "s_lock", "--match", name,
                                 "--duration", "2s", "--output", (dir / "r.json").string()});
    waitpid(pid, nullptr, 0);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
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
