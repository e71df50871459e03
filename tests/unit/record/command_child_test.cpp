// `record -- CMD`'s child (src/record/command_child.hpp), alone: it runs only once released,
// its exit status is the shell's, a command that cannot run is refused as a shell refuses it,
// and a command that ignores the signals is sent SIGTERM, then SIGKILL, a grace apart.
#include "record/command_child.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "lockprof/record/recorder.hpp"
#include "support/temp_dir.hpp"

namespace lockprof::record {
namespace {

// Its exit status, polled until it ends (at most 10 s).
std::optional<int> wait_for_exit(CommandChild& child) {
    for (int i = 0; i < 1000; ++i) {
        if (const auto status = child.poll()) return status;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
}

bool wait_for_file(const std::filesystem::path& path) {
    for (int i = 0; i < 1000 && !std::filesystem::exists(path); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return std::filesystem::exists(path);
}

TEST(RecordCommandChild, RunsOnlyOnceReleasedAndGivesItsExitStatus) {
    test::TempDir dir;
    const auto marker = dir / "ran";
    CommandChild child({"/bin/sh", "-c", ": > \"$0\"; exit 3", marker.string()});
    ASSERT_GT(child.pid(), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(std::filesystem::exists(marker)) << "it ran before it was released";
    EXPECT_FALSE(child.poll().has_value());
    child.release();
    EXPECT_EQ(wait_for_exit(child), 3);
    EXPECT_TRUE(std::filesystem::exists(marker));
}

TEST(RecordCommandChild, KilledBySignalIs128PlusTheSignal) {
    CommandChild child({"/bin/sh", "-c", "kill -TERM $$"});
    child.release();
    EXPECT_EQ(wait_for_exit(child), 128 + SIGTERM);
}

TEST(RecordCommandChild, ACommandNotFoundIsRefusedWithExit127) {
    CommandChild child({"lockprof-no-such-command-anywhere"});
    try {
        child.release();
        FAIL() << "no CommandError";
    } catch (const CommandError& e) {
        EXPECT_EQ(e.exit_code(), 127);
        EXPECT_NE(std::string(e.what()).find("command not found"), std::string::npos) << e.what();
    }
}

TEST(RecordCommandStop, ACommandThatIgnoresSigtermIsKilledAGraceLater) {
    test::TempDir dir;
    const auto ready = dir / "ready";
    CommandChild child({"/bin/sh", "-c", "trap '' TERM; : > \"$0\"; while :; do sleep 0.05; done",
                        ready.string()});
    child.release();
    ASSERT_TRUE(wait_for_file(ready)) << "the command did not start";
    std::vector<std::string> notes_said, steps;
    Notes notes(notes_said);
    CommandStop stop(
        "/bin/sh", std::chrono::milliseconds(0),
        [&](const std::string& step) { steps.push_back(step); }, notes);
    stop.step(child.pid(), SIGINT);  // the terminal sent it SIGINT too: nothing sent yet
    EXPECT_TRUE(steps.empty());
    stop.step(child.pid(), SIGINT);  // the grace (0) is over: SIGTERM, which it ignores
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(child.poll().has_value()) << "it should have ignored SIGTERM";
    stop.step(child.pid(), SIGINT);  // then SIGKILL
    stop.step(child.pid(), SIGINT);  // once
    EXPECT_EQ(wait_for_exit(child), 128 + SIGKILL);
    const std::string who = fmt::format("'/bin/sh' (pid {})", child.pid());
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0], "stopping the command: " + who +
                            " was still running 0.0 s after SIGINT; sent it SIGTERM");
    EXPECT_EQ(steps[1], "stopping the command: " + who +
                            " was still running 0.0 s after SIGTERM; sent it SIGKILL");
    EXPECT_EQ(notes_said, steps);
}

TEST(RecordCommandStop, SigtermIsPassedOnAtOnce) {
    CommandChild child({"/bin/sh", "-c", "while :; do sleep 0.05; done"});
    child.release();
    std::vector<std::string> notes_said;
    Notes notes(notes_said);
    CommandStop stop("sh", std::chrono::milliseconds(60'000), {}, notes);
    stop.step(child.pid(), SIGTERM);
    EXPECT_EQ(wait_for_exit(child), 128 + SIGTERM);
    ASSERT_EQ(notes_said.size(), 1u);
    EXPECT_EQ(notes_said[0],
              fmt::format("stopping the command: passed SIGTERM on to 'sh' (pid {})", child.pid()));
}

}  // namespace
}  // namespace lockprof::record
