// Output paths of every kind through the real binary: device nodes, FIFOs and links of the
// test's own in a temporary folder (never /dev), stdout, write errors (docs/reliability.md).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cli/cli_runner.hpp"

using lockprof::test::count_lines;
using lockprof::test::read_all;
using lockprof::test::run_lockprof;
using lockprof::test::shell_quote;
using lockprof::test::TempDir;

namespace {

namespace fs = std::filesystem;

// A short run: one lock, one thread, a few acquires.
std::vector<std::string> quick_run(std::vector<std::string> more) {
    std::vector<std::string> args = {"--lock=tas", "--threads=1", "--acquires=1000",
                                     "--trials=1", "--warmup=0",  "--quiet"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

mode_t type_of(const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & S_IFMT;
}

bool make_device(const fs::path& path, unsigned major, unsigned minor) {
    return ::mknod(path.c_str(), S_IFCHR | 0666, makedev(major, minor)) == 0;
}

std::string folded_input(const TempDir& dir) {
    const auto path = (dir / "in.folded").string();
    std::ofstream(path) << "main;lock 3\nmain;work 1\n";
    return path;
}

// Runs `lockprof ARGS > STDOUT_PATH` through the shell; the exit code and stderr.
lockprof::test::CliResult run_with_stdout(const std::vector<std::string>& args,
                                          const fs::path& stdout_path, const TempDir& dir) {
    std::string command = shell_quote(LOCKPROF_BIN);
    for (const auto& a : args) command += " " + shell_quote(a);
    command += " </dev/null >" + shell_quote(stdout_path.string()) + " 2>" +
               shell_quote((dir / "stderr").string());
    const int status = std::system(command.c_str());
    lockprof::test::CliResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.err = read_all(dir / "stderr");
    return r;
}

}  // namespace

TEST(CliOutputs, FullDeviceIsANonZeroExitWithOneLineAndStaysADevice) {
    TempDir dir;
    if (!make_device(dir / "full", 1, 7))
        GTEST_SKIP() << "mknod is not permitted here (" << std::strerror(errno) << ")";
    const auto full = (dir / "full").string();
    for (const auto& args :
         {quick_run({"--output", full}), quick_run({"--csv", full}),
          std::vector<std::string>{"flamegraph", folded_input(dir), "-o", full}}) {
        const auto r = run_lockprof(args);
        EXPECT_NE(r.exit_code, 0) << args[0] << " " << r.err;
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
        EXPECT_NE(r.err.find(full), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(std::strerror(ENOSPC)), std::string::npos) << r.err;
        EXPECT_EQ(type_of(full), S_IFCHR) << "the device node was replaced";
    }
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 2)
        << "a temporary file was left behind";
}

TEST(CliOutputs, NullDeviceStaysADevice) {
    TempDir dir;
    if (!make_device(dir / "null", 1, 3))
        GTEST_SKIP() << "mknod is not permitted here (" << std::strerror(errno) << ")";
    const auto r = run_lockprof(quick_run({"--output", (dir / "null").string()}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(type_of(dir / "null"), S_IFCHR);
}

TEST(CliOutputs, SymlinkIsWrittenThroughToItsTarget) {
    TempDir dir;
    fs::create_directory(dir / "results");
    fs::create_symlink("results/real.json", dir / "link.json");  // dangling until written
    const auto r = run_lockprof(quick_run({"--output", (dir / "link.json").string()}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(type_of(dir / "link.json"), S_IFLNK);
    const auto doc = nlohmann::json::parse(read_all(dir / "results/real.json"));
    EXPECT_EQ(doc.at("schema"), "lockprof.result");
}

TEST(CliOutputs, DashWritesTheJsonToStdout) {
    const auto r = run_lockprof(quick_run({"--output", "-"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc.at("schema"), "lockprof.result");
}

TEST(CliOutputs, FifoGetsTheData) {
    TempDir dir;
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    std::string received;
    std::thread reader([&] { received = read_all(dir / "fifo"); });
    const auto r = run_lockprof({"flamegraph", folded_input(dir), "-o", (dir / "fifo").string()});
    reader.join();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(received.find("<svg"), std::string::npos) << received.substr(0, 200);
    EXPECT_EQ(type_of(dir / "fifo"), S_IFIFO);
}

TEST(CliOutputs, StdoutThatCannotBeWrittenIsAnError) {
    TempDir dir;
    if (!make_device(dir / "full", 1, 7))
        GTEST_SKIP() << "mknod is not permitted here (" << std::strerror(errno) << ")";
    // The table on stdout, and a file output given as '-'.
    for (const auto& args :
         {std::vector<std::string>{"list-locks"},
          std::vector<std::string>{"--lock=tas", "--threads=1", "--acquires=1000", "--trials=1"},
          std::vector<std::string>{"flamegraph", folded_input(dir), "-o", "-"}}) {
        const auto r = run_with_stdout(args, dir / "full", dir);
        EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
        EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
        // A file given as '-' is written straight to the descriptor: its errno is known.
        if (args.back() == "-") {
            EXPECT_NE(r.err.find(std::strerror(ENOSPC)), std::string::npos) << r.err;
        }
    }
}

TEST(CliOutputs, DirectoryAndBlockDeviceAreRefusedBeforeRunning) {
    TempDir dir;
    auto r = run_lockprof({"flamegraph", folded_input(dir), "-o", dir.path.string()});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
    if (::mknod((dir / "disk").c_str(), S_IFBLK | 0600, makedev(7, 0)) != 0)
        GTEST_SKIP() << "mknod is not permitted here (" << std::strerror(errno) << ")";
    r = run_lockprof(quick_run({"--csv", (dir / "disk").string()}));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--csv: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("block device"), std::string::npos) << r.err;
    EXPECT_EQ(type_of(dir / "disk"), S_IFBLK);
}
