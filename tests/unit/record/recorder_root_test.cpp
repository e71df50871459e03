// record() reads /proc and /sys under RecordSpec::root: targets found (or not) in a fake /proc.
// Nothing is counted or sampled, so attaching opens nothing and the fake ids are never used
// with the kernel.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "lockprof/common/error.hpp"
#include "lockprof/record/recorder.hpp"

namespace lockprof::record {
namespace {

struct FakeRoot {
    std::filesystem::path root;
    FakeRoot() {
        std::string pattern = (std::filesystem::temp_directory_path() / "lockprof-rec-XXXXXX");
        root = mkdtemp(pattern.data());
        std::filesystem::create_directories(root / "proc");
    }
    ~FakeRoot() {
        std::error_code ec;
        std::filesystem::remove_all(root, ec);
    }
    void write(const std::string& path, const std::string& content) {
        std::filesystem::create_directories((root / path).parent_path());
        std::ofstream(root / path) << content;
    }
};

RecordSpec spec_under(const FakeRoot& fake, Mode mode) {
    RecordSpec spec;
    spec.mode = mode;
    spec.root = fake.root.string();
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
    FakeRoot fake;
    RecordSpec spec = spec_under(fake, Mode::pid);
    spec.pids = {getpid()};  // this test runs, but not in the fake /proc
    EXPECT_EQ(usage_error_of(spec), fmt::format("--pid: no process {} is running; check the id "
                                                "with `ps -p {}`",
                                                getpid(), getpid()));
}

TEST(RecorderRoot, MatchScansTheRootsProc) {
    FakeRoot fake;
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

}  // namespace
}  // namespace lockprof::record
