// Resource limits and I/O faults through the real binary (docs/reliability.md, "Fault
// battery"): too few file descriptors for 128 threads x events (counting and sampling), too
// little locked memory for the sampling ring buffers, and EIO on an output. Each must end in a
// clear line naming the limit and what to do, never a crash, a hang or "internal error", and
// every output must be whole or absent, with no temporary left beside it.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli_runner.hpp"

using lockprof::test::CliResult;
using lockprof::test::lockprof_bin_has_asan;
using lockprof::test::read_all;
using lockprof::test::shell_quote;
using lockprof::test::TempDir;

namespace {

namespace fs = std::filesystem;

// Runs `sh -c 'SETUP; exec lockprof ARGS...'`, prefixed by `wrapper` (a `setpriv ...` that
// drops root, or ""), with stdin from /dev/null; stdout and stderr captured.
CliResult run_limited(const std::string& wrapper, const std::string& setup,
                      const std::vector<std::string>& args) {
    TempDir capture;
    std::string inner = setup + "; exec " + shell_quote(LOCKPROF_BIN);
    for (const auto& a : args) inner += " " + shell_quote(a);
    std::string command = wrapper + (wrapper.empty() ? "" : " ") + "sh -c " + shell_quote(inner);
    command += " </dev/null >" + shell_quote((capture / "out").string()) + " 2>" +
               shell_quote((capture / "err").string());
    const int status = std::system(command.c_str());
    CliResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_all(capture / "out");
    r.err = read_all(capture / "err");
    return r;
}

std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
    std::vector<std::string> found;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        if (line.find(needle) != std::string::npos) found.push_back(line);
        start = end + 1;
    }
    return found;
}

// No crash, no uncaught exception, no internal error.
void expect_no_breakage(const CliResult& r) {
    EXPECT_LT(r.exit_code, 128) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
}

// Every file in `dir` is whole (a JSON parses back with its cells) and none is a temporary.
void expect_whole_outputs(const fs::path& dir) {
    for (const auto& entry : fs::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        EXPECT_EQ(name.find(".tmp."), std::string::npos) << "temporary left: " << name;
        if (entry.path().extension() == ".json") {
            const auto json = nlohmann::json::parse(read_all(entry.path()), nullptr, false);
            ASSERT_FALSE(json.is_discarded()) << name << " does not parse";
            EXPECT_TRUE(json.contains("cells")) << name;
        }
    }
}

// 128 threads need 128 to 512 descriptors here, far past `ulimit -n 64`. (1024 did the same
// in 6-8 s each, 25-28 s in CI beside other tests: 1024 tas threads on two CPUs mostly wait
// for preempted holders after the window closes.)
std::vector<std::string> many_threads(std::vector<std::string> more) {
    std::vector<std::string> args = {"--lock=tas", "--threads=128", "--duration=20ms", "--trials=1",
                                     "--warmup=0"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// Skips when perf_event_open is refused here for another reason than the limit under test
// (perf_event_paranoid 3, seccomp): then there is nothing for the limit to cut.
bool perf_refused_otherwise(const CliResult& r, const std::string& expected) {
    const std::string all = r.out + r.err;
    return all.find(expected) == std::string::npos &&
           (all.find("not counted") != std::string::npos ||
            all.find("timer sampler") != std::string::npos);
}

TEST(ResourceLimits, TooFewDescriptorsForThreadsTimesEventsDegradesWithOneLine) {
    if (lockprof_bin_has_asan())
        GTEST_SKIP() << "under the sanitizers a process out of descriptors gets false reports: "
                        "UBSan's vptr check tests memory with a pipe(), which then fails";
    TempDir dir;
    const auto r = run_limited(
        "", "ulimit -n 64",
        many_threads({"--event=task_clock,context_switches,cpu_migrations,page_faults", "--output",
                      (dir / "run.json").string(), "--csv", (dir / "run.csv").string()}));
    if (perf_refused_otherwise(r, "EMFILE"))
        GTEST_SKIP() << "perf_event_open is refused here for another reason: " << r.err;
    expect_no_breakage(r);
    // Degraded, not failed: the run completes, the counters that could not open are marked.
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto warnings = lines_with(r.err, "EMFILE");
    ASSERT_EQ(warnings.size(), 1u) << r.err;
    EXPECT_NE(warnings[0].find("`ulimit -n`, now 64"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("fewer events or threads"), std::string::npos) << warnings[0];
    // The events in the order they were asked for, whichever thread failed first.
    EXPECT_NE(warnings[0].find("task_clock, context_switches, cpu_migrations, page_faults"),
              std::string::npos)
        << warnings[0];
    EXPECT_TRUE(fs::exists(dir / "run.json"));
    EXPECT_TRUE(fs::exists(dir / "run.csv"));
    expect_whole_outputs(dir.path);
}

TEST(ResourceLimits, TooFewDescriptorsForSamplersDegradesWithOneNote) {
    if (lockprof_bin_has_asan())
        GTEST_SKIP() << "under the sanitizers a process out of descriptors gets false reports: "
                        "UBSan's vptr check tests memory with a pipe(), which then fails";
    TempDir dir;
    const auto r = run_limited(
        "", "ulimit -n 64",
        many_threads({"--event=task_clock", "--sample", "--output", (dir / "run.json").string(),
                      "--samples-out", (dir / "samples.json").string(), "--flamegraph",
                      (dir / "flame.svg").string()}));
    if (perf_refused_otherwise(r, "EMFILE"))
        GTEST_SKIP() << "perf_event_open is refused here for another reason: " << r.out;
    expect_no_breakage(r);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto notes = lines_with(r.out, "sampling: a worker thread could not be sampled");
    ASSERT_EQ(notes.size(), 1u) << r.out;
    EXPECT_NE(notes[0].find("EMFILE"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("`ulimit -n`, now 64"), std::string::npos) << notes[0];
    EXPECT_EQ(lines_with(r.out, "had no sampler").size(), 1u) << r.out;
    for (const char* name : {"run.json", "samples.json", "flame.svg"})
        EXPECT_TRUE(fs::exists(dir / name)) << name;
    expect_whole_outputs(dir.path);
}

long read_number(const char* path) {
    std::ifstream in(path);
    long value = -1;
    in >> value;
    return value;
}

TEST(ResourceLimits, TooLittleLockedMemoryHalvesBuffersThenSaysWhatToDo) {
    // Root has CAP_IPC_LOCK, which the kernel's locked-memory check lets through: drop to
    // nobody when root, as an unprivileged user would run.
    std::string wrapper;
    if (::geteuid() == 0) {
        if (std::system("command -v setpriv >/dev/null 2>&1") != 0)
            GTEST_SKIP() << "running as root, whose CAP_IPC_LOCK bypasses RLIMIT_MEMLOCK, and "
                            "setpriv is not installed to drop to nobody (util-linux)";
        wrapper = "setpriv --reuid=65534 --regid=65534 --clear-groups";
        if (std::system((wrapper + " test -x " + shell_quote(LOCKPROF_BIN)).c_str()) != 0)
            GTEST_SKIP() << "nobody (uid 65534) cannot execute " << LOCKPROF_BIN
                         << " (a folder on its path is not searchable by others)";
    }
    // The kernel allows each user perf_event_mlock_kb per online CPU beyond RLIMIT_MEMLOCK;
    // with `ulimit -l 0` that allowance is all there is. Enough threads to spend it even in
    // the smallest buffers (8 KiB: one data page and the header page).
    const long mlock_kb = read_number("/proc/sys/kernel/perf_event_mlock_kb");
    const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (mlock_kb < 0) GTEST_SKIP() << "cannot read /proc/sys/kernel/perf_event_mlock_kb";
    const long smallest_kb = 2 * ::sysconf(_SC_PAGESIZE) / 1024;
    const long threads = mlock_kb * cpus / smallest_kb + 16;
    if (threads > 1024)
        GTEST_SKIP() << "perf_event_mlock_kb " << mlock_kb << " x " << cpus << " CPUs would take "
                     << threads << " sampled threads to spend; more than this test starts";
    TempDir dir;
    fs::permissions(dir.path, fs::perms::all);
    const auto r = run_limited(
        wrapper, "ulimit -l 0",
        {"--lock=tas", "--threads=" + std::to_string(threads), "--duration=20ms", "--trials=1",
         "--warmup=0", "--no-counters", "--sample", "--output", (dir / "run.json").string()});
    if (r.out.find("perf sampler") == std::string::npos)
        GTEST_SKIP() << "the perf sampler is not used here (no perf_event_open for "
                        "unprivileged users?): "
                     << r.out.substr(0, 400);
    expect_no_breakage(r);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    // First the buffers halve, with a note saying so...
    const auto halved = lines_with(r.out, "locked-memory limit reached");
    ASSERT_EQ(halved.size(), 1u) << r.out;
    EXPECT_NE(halved[0].find("instead of 64 KiB"), std::string::npos) << halved[0];
    EXPECT_NE(halved[0].find("ulimit -l"), std::string::npos) << halved[0];
    // ...then, when not even the smallest buffer maps, one line with the cause and the fix.
    const auto failed = lines_with(r.out, "sampling: a worker thread could not be sampled");
    ASSERT_EQ(failed.size(), 1u) << r.out;
    EXPECT_NE(failed[0].find("locked-memory limit is spent"), std::string::npos) << failed[0];
    EXPECT_NE(failed[0].find("raise `ulimit -l`"), std::string::npos) << failed[0];
    EXPECT_EQ(lines_with(r.out, "mmap of a sampling ring buffer failed").size(), 0u) << r.out;
    EXPECT_EQ(lines_with(r.out, "had no sampler").size(), 1u) << r.out;
    EXPECT_TRUE(fs::exists(dir / "run.json"));
    expect_whole_outputs(dir.path);
}

// EIO through the streaming path: a terminal whose other side has hung up answers every write
// (and a new open) with EIO. The test's own node for the pty, in its temporary folder.
TEST(OutputFaults, EioOnAStreamedOutputIsOneLineAndExitOne) {
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0)
        GTEST_SKIP() << "no pseudo-terminal here (" << std::strerror(errno) << ")";
    const int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
    ASSERT_GE(slave, 0) << std::strerror(errno);
    struct stat st {};
    ASSERT_EQ(::fstat(slave, &st), 0);
    TempDir dir;
    const auto node = dir / "tty";
    if (::mknod(node.c_str(), S_IFCHR | 0666, st.st_rdev) != 0) {
        const int err = errno;
        ::close(slave);
        ::close(master);
        GTEST_SKIP() << "mknod is not permitted here (" << std::strerror(err) << ")";
    }
    ::close(master);  // hang up: the slave now fails with EIO
    const auto r =
        lockprof::test::run_lockprof({"--lock=tas", "--threads=1", "--acquires=1000", "--trials=1",
                                      "--warmup=0", "--quiet", "--output", node.string()});
    ::close(slave);
    expect_no_breakage(r);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(lockprof::test::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("Input/output error"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(node.string()), std::string::npos) << r.err;
}

// EIO on a regular file's filesystem, through the temporary-and-rename path: a filesystem on a
// device-mapper device whose table is swapped for the `error` target after mounting.
TEST(OutputFaults, EioOnAFilesystemIsOneLineAndLeavesNoTemporary) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root to set up a device-mapper device, a loop device and a mount";
    if (read_all("/proc/misc").find("device-mapper") == std::string::npos)
        GTEST_SKIP() << "device-mapper is not in this kernel (/proc/misc lists no "
                        "device-mapper; dm_mod not loaded), so no filesystem whose writes fail "
                        "with EIO can be made; EIO on a regular output is unverified here";
    if (std::system("command -v dmsetup >/dev/null && command -v losetup >/dev/null && "
                    "command -v mkfs.ext2 >/dev/null") != 0)
        GTEST_SKIP() << "dmsetup, losetup or mkfs.ext2 is not installed";
    TempDir dir;
    const std::string q = shell_quote(dir.path.string());
    const std::string name = "lockprof-eio-" + std::to_string(::getpid());
    // 4 MiB image, linear over its loop device, ext2 on that, mounted; then every sector errors.
    const std::string setup =
        "set -e; cd " + q +
        "; truncate -s 4M img; loop=$(losetup -f --show img); echo $loop > loop;"
        " dmsetup create " +
        name +
        " --table \"0 8192 linear $loop 0\";"
        " mkfs.ext2 -q /dev/mapper/" +
        name + "; mkdir mnt; mount /dev/mapper/" + name +
        " mnt;"
        " dmsetup suspend " +
        name + "; dmsetup load " + name +
        " --table '0 8192 error';"
        " dmsetup resume " +
        name;
    const std::string teardown = "cd " + q + "; umount -l mnt 2>/dev/null; dmsetup remove -f " +
                                 name + " 2>/dev/null; losetup -d $(cat loop) 2>/dev/null";
    if (std::system(("sh -c " + shell_quote(setup) + " >/dev/null 2>&1").c_str()) != 0) {
        std::system(("sh -c " + shell_quote(teardown)).c_str());
        GTEST_SKIP() << "could not make an erroring device-mapper filesystem here (dmsetup, "
                        "losetup or mount refused)";
    }
    const auto out = dir / "mnt" / "run.json";
    const auto r =
        lockprof::test::run_lockprof({"--lock=tas", "--threads=1", "--acquires=1000", "--trials=1",
                                      "--warmup=0", "--quiet", "--output", out.string()});
    std::error_code ec;
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir / "mnt", ec))
        left.push_back(e.path().filename().string());
    std::system(("sh -c " + shell_quote(teardown)).c_str());
    expect_no_breakage(r);
    EXPECT_NE(r.exit_code, 0) << r.err;
    EXPECT_EQ(lockprof::test::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("Input/output error"), std::string::npos) << r.err;
    for (const auto& n : left) EXPECT_EQ(n.find(".tmp."), std::string::npos) << n;
}

}  // namespace
