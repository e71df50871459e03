// The SIGINT/SIGTERM policy of run and record: the first signal asks to stop, the second is
// noted and changes nothing, the third aborts, saying what is lost; exit 128 + the signal.
#include "cli/interrupts.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "lockprof/common/output_file.hpp"
#include "lockprof/common/output_registry.hpp"

namespace lockprof::cli {
namespace {

// An output half-written, as write_output() leaves it while it writes: registered as being
// written through a temporary beside it that holds part of the file.
void half_written(const std::filesystem::path& target) {
    const auto temporary = target.parent_path() / ("." + target.filename().string() + ".tmp.1");
    outputs::writing(target, temporary);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) {
        [[maybe_unused]] const auto n = ::write(fd, "{", 1);
        ::close(fd);
    }
}

TEST(Interrupts, FirstSignalAsksToStopAndSetsTheExitCode) {
    const interrupts::MeasurementScope scope;
    EXPECT_FALSE(interrupts::stop_requested().load());
    EXPECT_EQ(interrupts::exit_code(), 0);
    raise(SIGINT);
    EXPECT_TRUE(interrupts::stop_requested().load());
    EXPECT_EQ(interrupts::stop_signal().load(), SIGINT);
    EXPECT_EQ(interrupts::exit_code(), 130);
}

TEST(Interrupts, SigtermExits143) {
    const interrupts::MeasurementScope scope;
    raise(SIGTERM);
    EXPECT_EQ(interrupts::exit_code(), 143);
}

TEST(Interrupts, ANewScopeForgetsEarlierSignals) {
    {
        const interrupts::MeasurementScope scope;
        raise(SIGINT);
    }
    const interrupts::MeasurementScope scope;
    EXPECT_FALSE(interrupts::stop_requested().load());
    EXPECT_EQ(interrupts::signals_received(), 0);
}

TEST(Interrupts, SecondSignalIsNotedAndDoesNotKill) {
    const interrupts::MeasurementScope scope;
    raise(SIGINT);
    interrupts::writing_outputs();
    testing::internal::CaptureStderr();
    raise(SIGINT);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(interrupts::signals_received(), 2);
    EXPECT_EQ(interrupts::stop_signal().load(), SIGINT);  // the first one's
    EXPECT_NE(err.find("still writing the outputs"), std::string::npos) << err;
    EXPECT_NE(err.find("a third signal aborts"), std::string::npos) << err;
}

// The third signal, in a child process (the abort ends it): exit 128 + the first signal, the
// outputs not yet in place named on stderr, and the temporary being written removed.
TEST(Interrupts, ThirdSignalAbortsSayingWhatIsLost) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "lockprof-abort-XXXXXX").string();
    const std::filesystem::path folder = mkdtemp(pattern.data());
    const auto json = folder / "r.json", csv = folder / "r.csv";
    EXPECT_EXIT(
        {
            const interrupts::MeasurementScope scope;
            check_output(csv.string(), "csv");
            raise(SIGTERM);
            raise(SIGINT);
            interrupts::writing_outputs();
            half_written(json);
            raise(SIGINT);
            std::_Exit(0);  // not reached
        },
        testing::ExitedWithCode(143),
        "SIGINT a third time: aborting; lost: .*r.csv' \\(not started\\), .*r.json' \\(being "
        "written\\)");
    std::size_t left = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++left;
    EXPECT_EQ(left, 0u) << "the aborted output's temporary is still there";
    std::filesystem::remove_all(folder);
}

// Found by the fault battery: a SIGTERM as run returned, after its outputs were written, found
// the cleanup handler back and killed lockprof instead of letting it exit 143.
TEST(Interrupts, ASignalAfterTheScopeStillExitsWithThePolicysStatus) {
    EXPECT_EXIT(
        {
            interrupts::install_cleanup();
            { const interrupts::MeasurementScope scope; }
            raise(SIGTERM);
            std::_Exit(0);  // not reached
        },
        testing::ExitedWithCode(143), "");
    EXPECT_EXIT(
        {
            interrupts::install_cleanup();
            {
                const interrupts::MeasurementScope scope;
                raise(SIGINT);
            }
            raise(SIGTERM);
            std::_Exit(0);  // not reached
        },
        testing::ExitedWithCode(130), "");
}

// cli::main's policy for a whole command: a measuring one (run, record) takes a signal at any
// point after it is installed, options not yet parsed included, and exits 128 + that signal
// whatever the command returned; any other command dies of it.
TEST(Interrupts, CommandPolicyOfAMeasuringCommandHoldsFromItsStart) {
    EXPECT_EXIT(
        {
            const interrupts::CommandPolicy policy(true);
            raise(SIGINT);
            if (!interrupts::stop_requested().load()) std::_Exit(1);
            std::_Exit(policy.exit_code(0));
        },
        testing::ExitedWithCode(130), "");
    EXPECT_EXIT(
        {
            const interrupts::CommandPolicy policy(true);
            raise(SIGTERM);
            std::_Exit(policy.exit_code(3));  // a recorded command's status
        },
        testing::ExitedWithCode(143), "");
    EXPECT_EXIT(
        {
            const interrupts::CommandPolicy policy(true);
            std::_Exit(policy.exit_code(3));
        },
        testing::ExitedWithCode(3), "");
    EXPECT_EXIT(
        {
            const interrupts::CommandPolicy policy(false);
            raise(SIGINT);
            std::_Exit(0);  // not reached
        },
        testing::KilledBySignal(SIGINT), "");
}

TEST(Interrupts, CleanupHandlerRemovesTheTemporaryAndEndsAsTheSignalWould) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "lockprof-cleanup-XXXXXX").string();
    const std::filesystem::path folder = mkdtemp(pattern.data());
    EXPECT_EXIT(
        {
            interrupts::install_cleanup();
            half_written(folder / "out.svg");
            raise(SIGTERM);
            std::_Exit(0);  // not reached
        },
        testing::KilledBySignal(SIGTERM), "");
    std::size_t left = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++left;
    EXPECT_EQ(left, 0u);
    std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace lockprof::cli
