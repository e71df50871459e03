// record() reads /proc and /sys under RecordSpec::root: targets found (or not) in a fake /proc.
// Nothing is counted or sampled, so attaching opens nothing and the fake ids are never used
// with the kernel.
#include <unistd.h>

#include <csignal>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "lockprof/common/error.hpp"
#include "lockprof/record/recorder.hpp"
#include "support/temp_dir.hpp"

namespace lockprof::record {
namespace {

RecordSpec spec_under(const test::TempDir& fake, Mode mode) {
    RecordSpec spec;
    spec.mode = mode;
    spec.root = fake.path.string();
    spec.duration_ns = 20'000'000;
    return spec;
}

std::string usage_error_of(const RecordSpec& spec) {
    std::atomic<int> stop{0};
    try {
        record(spec, {"lockprof", "record"}, stop);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

TEST(RecorderRoot, PidMissingFromTheRootsProcIsRefused) {
    test::TempDir fake;
    RecordSpec spec = spec_under(fake, Mode::pid);
    spec.pids = {getpid()};  // this test runs, but not in the fake /proc
    EXPECT_EQ(usage_error_of(spec), fmt::format("--pid: no process {} is running; check the id "
                                                "with `ps -p {}`",
                                                getpid(), getpid()));
}

TEST(RecorderRoot, MatchScansTheRootsProc) {
    test::TempDir fake;
    RecordSpec spec = spec_under(fake, Mode::match);
    spec.match = "lockprof-fake";
    EXPECT_NE(usage_error_of(spec).find("--match: no running process is named 'lockprof-fake'"),
              std::string::npos);

    // Ids above the kernel's pid_max (2^22): no real task can be confused with them.
    fake.write("proc/99999999/comm", "lockprof-fake\n");
    fake.write("proc/99999999/status", "Name:\tlockprof-fake\nState:\tS (sleeping)\nUid:\t0\n");
    fake.write("proc/99999999/task/99999999/comm", "lockprof-fake\n");
    fake.write("proc/99999999/task/99999990/comm", "worker\n");
    std::atomic<int> stop{0};
    const RecordResult result = record(spec, {"lockprof", "record"}, stop);
    ASSERT_EQ(result.processes.size(), 1u);
    const auto& p = result.processes[0];
    EXPECT_EQ(p.info.pid, 99999999);
    EXPECT_EQ(p.info.comm, "lockprof-fake");
    ASSERT_EQ(p.threads.size(), 2u);
    EXPECT_EQ(p.threads[0].tid, 99999990);
    EXPECT_EQ(p.threads[0].comm, "worker");
    EXPECT_EQ(p.threads[1].comm, "lockprof-fake");
    EXPECT_FALSE(p.threads[0].attached);  // nothing to count
}

// A matched process's mappings are taken from the one maps file record reads, the root's:
// reading them a second time from /proc raced with the process's exit ("cannot read
// /proc/N/maps" ended a `record --match postgres` when a pgbench connection closed), and here
// the real /proc has no such process at all.
TEST(RecorderRoot, MappingsComeFromTheMapsFileAlreadyRead) {
    test::TempDir fake;
    RecordSpec spec = spec_under(fake, Mode::match);
    spec.match = "lockprof-fake";
    fake.write("proc/99999999/comm", "lockprof-fake\n");
    fake.write("proc/99999999/status", "Name:\tlockprof-fake\nState:\tS (sleeping)\nUid:\t0\n");
    fake.write("proc/99999999/task/99999999/comm", "lockprof-fake\n");
    fake.write("proc/99999999/maps",
               "00400000-00401000 r-xp 00000000 00:00 0 /lockprof-fake/bin/server\n"
               "7f0000000000-7f0000001000 rw-p 00000000 00:00 0 [heap]\n");
    std::atomic<int> stop{0};
    const RecordResult result = record(spec, {"lockprof", "record"}, stop);
    ASSERT_EQ(result.processes.size(), 1u);
    const auto& modules = result.processes[0].modules;
    ASSERT_EQ(modules.size(), 1u);
    EXPECT_EQ(modules[0].path, "/lockprof-fake/bin/server");
    EXPECT_EQ(modules[0].start, 0x400000u);
}

// A signal while lockprof was starting (before record() launched anything): the command is
// never started, and the recording says it was interrupted and why nothing ran.
TEST(RecorderRoot, ACommandIsNotStartedAfterAStopSignal) {
    test::TempDir fake;
    const auto marker = fake.path / "started";
    RecordSpec spec = spec_under(fake, Mode::command);
    spec.command = {"/bin/sh", "-c", ": > \"$0\"", marker.string()};
    std::vector<std::string> steps;
    spec.on_stop_step = [&](const std::string& step) { steps.push_back(step); };
    std::atomic<int> stop{SIGINT};
    const RecordResult result = record(spec, {"lockprof", "record"}, stop);
    EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran";
    EXPECT_TRUE(result.interrupted);
    EXPECT_EQ(result.interrupted_by, "SIGINT");
    EXPECT_TRUE(result.processes.empty());
    EXPECT_FALSE(result.exit_status.has_value());
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0], "/bin/sh: not started, SIGINT came first");
}

}  // namespace
}  // namespace lockprof::record
