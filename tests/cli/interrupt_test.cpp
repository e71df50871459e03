// SIGINT and SIGTERM against the real binary (docs/reliability.md, Interrupts): the first stops
// the sweep or the recording and everything finished is written; a second does not kill the
// write-out; exit 130 / 143; a recording says it was interrupted and by what; a recorded command
// that ignores SIGTERM is killed after a grace period. Every wait is on a condition, not a time.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "cli/process.hpp"

namespace lockprof::test {
namespace {

using nlohmann::json;

int threads_of(pid_t pid) {
    const std::string n = proc_status_field(pid, "Threads");
    return n.empty() ? 0 : std::stoi(n);
}

// A sweep long enough never to end by itself in a test, with its JSON and CSV in `dir`.
Child start_long_sweep(const TempDir& dir) {
    return Child::start(
        {LOCKPROF_BIN, "--lock=tas", "--threads=1", "--duration=20ms", "--trials=100000", "--quiet",
         "--output", (dir / "r.json").string(), "--csv", (dir / "r.csv").string()},
        dir / "out", dir / "err");
}

// The sweep is measuring: a trial's worker thread exists.
bool measuring(Child& child) {
    return wait_for(child, [&] { return threads_of(child.pid) > 1; });
}

TEST(CliInterrupt, DoubleSigintDoesNotKillTheWriteOut) {
    TempDir dir;
    Child lockprof = start_long_sweep(dir);
    ASSERT_GT(lockprof.pid, 0);
    ASSERT_TRUE(measuring(lockprof)) << read_all(dir / "err");
    // The first is taken before the second is sent, so the two cannot merge into one (as
    // `timeout -s INT` and a double Ctrl-C deliver them).
    ASSERT_TRUE(signal_and_wait_taken(lockprof, SIGINT)) << lockprof.describe();
    kill(lockprof.pid, SIGINT);
    ASSERT_TRUE(lockprof.wait()) << "hung after two SIGINTs";
    const std::string err = read_all(dir / "err");
    ASSERT_TRUE(lockprof.exited()) << lockprof.describe() << "\n" << err;
    EXPECT_EQ(lockprof.exit_code(), 130) << err;
    const json doc = json::parse(read_all(dir / "r.json"));
    EXPECT_TRUE(doc.at("interrupted").get<bool>());
    EXPECT_EQ(doc.at("interrupted_by"), "SIGINT");
    const std::string csv = read_all(dir / "r.csv");
    EXPECT_EQ(csv.rfind("lock,", 0), 0u) << csv;
    EXPECT_NE(err.find("interrupted by SIGINT"), std::string::npos) << err;
}

TEST(CliInterrupt, SigtermWritesWhatFinishedAndExits143) {
    TempDir dir;
    Child lockprof = start_long_sweep(dir);
    ASSERT_GT(lockprof.pid, 0);
    ASSERT_TRUE(measuring(lockprof)) << read_all(dir / "err");
    kill(lockprof.pid, SIGTERM);
    ASSERT_TRUE(lockprof.wait());
    const std::string err = read_all(dir / "err");
    ASSERT_TRUE(lockprof.exited()) << lockprof.describe() << "\n" << err;
    EXPECT_EQ(lockprof.exit_code(), 143) << err;
    const json doc = json::parse(read_all(dir / "r.json"));
    EXPECT_TRUE(doc.at("interrupted").get<bool>());
    EXPECT_EQ(doc.at("interrupted_by"), "SIGTERM");
}

// Once lockprof shows SIGINT caught, a run takes it as a run does, also while its options are
// still being read: here it waits for its profile, a FIFO the test writes only after the signal
// was taken. Every output is then written, with no trial in it (the fault battery once sent a
// signal into that window: lockprof died of it, outputs and all).
TEST(CliInterrupt, ASignalWhileTheOptionsAreReadStillWritesEveryOutput) {
    TempDir dir;
    const auto profile = dir / "profile.ini";
    ASSERT_EQ(::mkfifo(profile.c_str(), 0600), 0);
    Child lockprof =
        Child::start({LOCKPROF_BIN, "--profile", profile.string(), "--quiet", "--output",
                      (dir / "r.json").string(), "--csv", (dir / "r.csv").string()},
                     dir / "out", dir / "err");
    ASSERT_GT(lockprof.pid, 0);
    ASSERT_TRUE(wait_for(lockprof, [&] { return signal_caught(lockprof.pid, SIGINT); }));
    ASSERT_TRUE(signal_and_wait_taken(lockprof, SIGINT)) << lockprof.describe();
    std::ofstream(profile) << "lock = tas\nthreads = 1\nduration = 20ms\ntrials = 2\n";
    ASSERT_TRUE(lockprof.wait());
    const std::string err = read_all(dir / "err");
    ASSERT_TRUE(lockprof.exited()) << lockprof.describe() << "\n" << err;
    EXPECT_EQ(lockprof.exit_code(), 130) << err;
    const json doc = json::parse(read_all(dir / "r.json"));
    EXPECT_TRUE(doc.at("interrupted").get<bool>());
    EXPECT_EQ(doc.at("interrupted_by"), "SIGINT");
    for (const auto& cell : doc.at("cells")) EXPECT_TRUE(cell.at("trials").empty()) << cell.dump();
    EXPECT_EQ(read_all(dir / "r.csv").rfind("lock,", 0), 0u);
    EXPECT_NE(err.find("interrupted by SIGINT; wrote the 0 finished trial(s)"), std::string::npos)
        << err;
}

// The recorded command has exec'd: a child of lockprof is named `comm`.
bool command_running(Child& lockprof, const std::string& comm) {
    return wait_for(lockprof, [&] {
        for (pid_t child : children_of(lockprof.pid))
            if (comm_of(child) == comm) return true;
        return false;
    });
}

// Ctrl-C at a terminal signals the whole foreground group: the command dies of it at once,
// often before lockprof's poll sees the signal. The recording must still say it was interrupted.
TEST(CliInterrupt, RecordedCommandEndedByCtrlCIsMarkedInterrupted) {
    TempDir dir;
    Child lockprof = Child::start({LOCKPROF_BIN, "record", "--event", "task_clock", "--output",
                                   (dir / "r.json").string(), "--", "/bin/sleep", "600"},
                                  dir / "out", dir / "err");
    ASSERT_GT(lockprof.pid, 0);
    ASSERT_TRUE(command_running(lockprof, "sleep")) << read_all(dir / "err");
    kill(-lockprof.pid, SIGINT);  // the group, as a terminal does
    ASSERT_TRUE(lockprof.wait());
    const std::string err = read_all(dir / "err");
    ASSERT_TRUE(lockprof.exited()) << lockprof.describe() << "\n" << err;
    EXPECT_EQ(lockprof.exit_code(), 130) << err;
    const json doc = json::parse(read_all(dir / "r.json"));
    EXPECT_TRUE(doc.at("interrupted").get<bool>()) << doc.dump(1);
    EXPECT_EQ(doc.at("interrupted_by"), "SIGINT");
    EXPECT_EQ(doc.at("exit_status"), 128 + SIGINT);  // the command's own status is kept
}

// A command that ignores SIGTERM: lockprof passes SIGTERM on, then kills it after the grace
// period, says so, and still writes everything.
TEST(CliInterrupt, RecordedCommandIgnoringSigtermIsKilledAndSaysSo) {
    TempDir dir;
    const std::string ready = (dir / "ready").string();
    Child lockprof = Child::start(
        {LOCKPROF_BIN, "record", "--event", "task_clock", "--output", (dir / "r.json").string(),
         "--", "/bin/sh", "-c", "trap '' TERM; : > \"$0\"; while :; do sleep 0.05; done", ready},
        dir / "out", dir / "err");
    ASSERT_GT(lockprof.pid, 0);
    ASSERT_TRUE(wait_for(lockprof, [&] { return std::filesystem::exists(ready); }))
        << read_all(dir / "err");
    kill(lockprof.pid, SIGTERM);  // lockprof alone
    ASSERT_TRUE(lockprof.wait()) << "record did not end with a command ignoring SIGTERM";
    const std::string err = read_all(dir / "err");
    ASSERT_TRUE(lockprof.exited()) << lockprof.describe() << "\n" << err;
    EXPECT_EQ(lockprof.exit_code(), 143) << err;
    EXPECT_NE(err.find("passed SIGTERM on to '/bin/sh'"), std::string::npos) << err;
    EXPECT_NE(err.find("sent it SIGKILL"), std::string::npos) << err;
    const json doc = json::parse(read_all(dir / "r.json"));
    EXPECT_TRUE(doc.at("interrupted").get<bool>());
    EXPECT_EQ(doc.at("interrupted_by"), "SIGTERM");
    EXPECT_EQ(doc.at("exit_status"), 128 + SIGKILL);
    EXPECT_NE(doc.at("notes").dump().find("sent it SIGKILL"), std::string::npos);
}

}  // namespace
}  // namespace lockprof::test
