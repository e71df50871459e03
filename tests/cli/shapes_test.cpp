// Workload shapes of `run`: --sched fifo (refused with the reason where the kernel does not
// allow it; really run here as root), --cpu-order FILE (worker i on the file's i-th CPU),
// --lock-page huge (refused with the sysctl to run when the pool is empty; the page's physical
// address recorded as root) and --critical-ins/--parallel-ins (work counted in instructions),
// all recorded in the result file and the table's workload line.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "support/huge_page_pool.hpp"

using lockprof::test::count_lines;
using lockprof::test::run_lockprof;
using lockprof::test::TempDir;

namespace {

// A usage error: exit 2, one line on stderr that holds `message`, nothing on stdout.
void expect_usage_error(const lockprof::test::CliResult& r, const std::string& message) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

unsigned cpus() {
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

TEST(CliShapes, SchedFifoRunsAndIsRecorded) {
    if (cpus() < 2) GTEST_SKIP() << "needs 2 CPUs: 2 FIFO threads on one would be refused";
    TempDir dir;
    const auto json = (dir / "r.json").string();
    auto r = run_lockprof({"--lock=tas,ticket", "--threads=2", "--acquires=3000", "--trials=1",
                           "--pin=compact", "--sched", "fifo", "--output", json});
    if (r.exit_code == 2 && r.err.find("refused SCHED_FIFO") != std::string::npos) {
        EXPECT_EQ(count_lines(r.err), 1) << r.err;
        GTEST_SKIP() << "this process may not use SCHED_FIFO: " << r.err;
    }
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("pin compact, sched fifo"), std::string::npos) << r.out;
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(json));
    EXPECT_EQ(doc["config"]["sched"], "fifo");
    for (const auto& cell : doc["cells"])
        for (const auto& thread : cell["trials"][0]["threads"]) EXPECT_EQ(thread["acquires"], 3000);
}

TEST(CliShapes, SchedDefaultsToOtherInTheResult) {
    TempDir dir;
    const auto json = (dir / "r.json").string();
    auto r = run_lockprof(
        {"--lock=tas", "--threads=1", "--acquires=500", "--trials=1", "--quiet", "--output", json});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(lockprof::test::read_all(json))["config"]["sched"], "other");
}

TEST(CliShapes, SchedFifoRefusesMoreThreadsThanCpusWithoutForce) {
    const std::string threads = std::to_string(cpus() + 1);
    expect_usage_error(
        run_lockprof({"--lock=tas", "--threads", threads, "--sched=fifo"}),
        "--sched fifo: " + threads + " threads on " + std::to_string(cpus()) + " CPU(s)");
    // Pinned to one CPU, two threads are oversubscribed however many CPUs the machine has.
    expect_usage_error(run_lockprof({"--lock=tas", "--threads=2", "--pin=0", "--sched=fifo"}),
                       "2 threads on 1 CPU(s)");
}

TEST(CliShapes, BadSchedOptionsAreOneLineUsageErrors) {
    expect_usage_error(run_lockprof({"--sched=batch"}), "--sched: unknown policy 'batch'");
    expect_usage_error(run_lockprof({"--force"}), "--force: only with --sched fifo");
}

TEST(CliShapes, CpuOrderPinsWorkerIToTheFilesIthCpu) {
    if (cpus() < 2) GTEST_SKIP() << "needs 2 CPUs to show an order";
    TempDir dir;
    const auto order = (dir / "order.txt").string();
    std::ofstream(order) << "# reversed\n1\n0\n";
    const auto json = (dir / "r.json").string();
    auto r = run_lockprof({"--lock=tas", "--threads=1,2", "--acquires=1000", "--trials=1",
                           "--cpu-order", order, "--output", json});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("pin list 1,0 from " + order + " (--cpu-order)"), std::string::npos)
        << r.out;
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(json));
    EXPECT_EQ(doc["config"]["pin"]["mode"], "list");
    EXPECT_EQ(doc["config"]["pin"]["cpu_order_file"], order);
    EXPECT_EQ(doc["config"]["pin"]["cpus"], nlohmann::json::array({1, 0}));
    for (const auto& cell : doc["cells"]) {
        const auto& threads = cell["trials"][0]["threads"];
        for (std::size_t i = 0; i < threads.size(); ++i)
            EXPECT_EQ(threads[i]["cpu"], i == 0 ? 1 : 0) << "thread " << i;
    }
}

TEST(CliShapes, BadCpuOrderFilesAreOneLineUsageErrorsNamingFileAndLine) {
    TempDir dir;
    const auto write = [&](const std::string& name, const std::string& text) {
        const auto path = (dir / name).string();
        std::ofstream(path) << text;
        return path;
    };
    const auto missing = (dir / "missing.txt").string();
    expect_usage_error(run_lockprof({"--threads=1", "--cpu-order", missing}),
                       "--cpu-order: cannot read " + missing);
    const auto junk = write("junk.txt", "0\nzero\n");
    expect_usage_error(run_lockprof({"--threads=1", "--cpu-order", junk}),
                       junk + " line 2: 'zero' is not a CPU number");
    const auto offline = write("offline.txt", "0 99999\n");
    expect_usage_error(run_lockprof({"--threads=1", "--cpu-order", offline}),
                       offline + " line 1: CPU 99999 is not online");
    const auto twice = write("twice.txt", "0\n0\n");
    expect_usage_error(run_lockprof({"--threads=1", "--cpu-order", twice}),
                       twice + " line 2: CPU 0 is listed twice (first on line 1)");
    const auto short_file = write("short.txt", "0\n");
    expect_usage_error(run_lockprof({"--threads=1,2", "--cpu-order", short_file}),
                       "lists 1 CPU(s), fewer than the 2 threads");
    expect_usage_error(run_lockprof({"--threads=1", "--pin=0", "--cpu-order", short_file}),
                       "--cpu-order: not with --pin");
}

TEST(CliShapes, VsLockhammerRefusesAFolderWithoutLockhammer) {
    TempDir dir;
    const std::string build = std::filesystem::path(LOCKPROF_BIN).parent_path().string();
    const std::string command =
        "bash " +
        lockprof::test::shell_quote(std::string(LOCKPROF_SOURCE_DIR) + "/bench/vs-lockhammer.sh") +
        " " + lockprof::test::shell_quote(dir.path.string()) + " " +
        lockprof::test::shell_quote(build) + " 2>" +
        lockprof::test::shell_quote((dir / "err").string());
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    const std::string err = lockprof::test::read_all(dir / "err");
    EXPECT_NE(err.find("holds none of lockhammer's binaries"), std::string::npos) << err;
    EXPECT_EQ(count_lines(err), 1) << err;
}

// The default placement is stated, in the table and the result file.
TEST(CliShapes, LockPageDefaultsToNormalAndSaysSo) {
    TempDir dir;
    const auto json = (dir / "r.json").string();
    auto r = run_lockprof(
        {"--lock=tas", "--threads=1", "--acquires=500", "--trials=1", "--output", json});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The brief table names the lock page only where a run changed it; --verbose always.
    EXPECT_EQ(r.out.find("lock page"), std::string::npos) << r.out;
    r = run_lockprof({"report", json, "--verbose"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("lock page normal (heap)"), std::string::npos) << r.out;
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(json));
    EXPECT_EQ(doc["config"]["lock_page"], "normal");
    EXPECT_FALSE(doc["cells"][0]["trials"][0].contains("lock_page"));
    expect_usage_error(run_lockprof({"--lock-page=2M"}), "--lock-page: unknown placement '2M'");
}

// An empty pool: refused before any trial, one line with the sysctl; never the heap instead.
// A pool of two pages: the run takes one, and records its size and (as root) physical address
// in every trial; `compare` with a heap run warns that the placements differ.
TEST(CliShapes, LockPageHugeIsRefusedWithoutAPoolAndRecordedWithOne) {
    TempDir dir;
    const auto huge = (dir / "huge.json").string(), heap = (dir / "heap.json").string();
    {
        const lockprof::test::HugePagePoolForTest pool(0);
        if (!pool.usable()) GTEST_SKIP() << pool.why_not();
        expect_usage_error(run_lockprof({"--lock=tas", "--threads=1", "--acquires=100",
                                         "--lock-page", "huge", "--output", huge}),
                           "vm.nr_hugepages is 0");
        EXPECT_FALSE(std::filesystem::exists(huge));
        const auto r = run_lockprof({"--lock-page", "huge", "--acquires=10", "--threads=1"});
        EXPECT_NE(r.err.find("`sysctl -w vm.nr_hugepages=16`"), std::string::npos) << r.err;
    }
    {
        const lockprof::test::HugePagePoolForTest pool(2);
        if (!pool.usable()) GTEST_SKIP() << pool.why_not();
        auto r = run_lockprof({"--lock=tas,ticket", "--threads=2", "--acquires=2000", "--trials=2",
                               "--lock-page", "huge", "--output", huge});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto doc = nlohmann::json::parse(lockprof::test::read_all(huge));
        EXPECT_EQ(doc["config"]["lock_page"], "huge");
        for (const auto& cell : doc["cells"])
            for (const auto& trial : cell["trials"]) {
                ASSERT_TRUE(trial.contains("lock_page")) << trial.dump();
                EXPECT_EQ(trial["lock_page"]["page_size"], 2u << 20);
                ASSERT_TRUE(trial["lock_page"]["physical_address"].is_number_unsigned())
                    << "root reads pagemap's frame numbers: " << trial["lock_page"].dump();
                EXPECT_GT(trial["lock_page"]["physical_address"].get<std::uint64_t>(), 0u);
            }
        EXPECT_NE(r.out.find("lock page huge (2 MiB hugetlb page"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("physical address not recorded"), std::string::npos) << r.out;

        // Not root: the kernel hides the page frame; the result says so, and holds null, not 0.
        std::filesystem::permissions(dir.path, std::filesystem::perms::all);
        const std::string unprivileged = (dir / "nobody.json").string();
        const std::filesystem::path out = dir / "nobody.out";
        const std::string command =
            "setpriv --reuid=65534 --regid=65534 --clear-groups " +
            lockprof::test::shell_quote(LOCKPROF_BIN) +
            " --lock=tas --threads=1 --acquires=500 --trials=1 --lock-page=huge --output " +
            lockprof::test::shell_quote(unprivileged) + " >" +
            lockprof::test::shell_quote(out.string()) + " 2>&1 </dev/null";
        ASSERT_EQ(std::system("command -v setpriv >/dev/null"), 0)
            << "setpriv (util-linux, in every Debian) runs lockprof unprivileged";
        ASSERT_EQ(std::system(command.c_str()), 0) << lockprof::test::read_all(out);
        const std::string table = lockprof::test::read_all(out);
        EXPECT_NE(table.find("lock page huge (2 MiB hugetlb page, physical address not recorded)"),
                  std::string::npos)
            << table;
        EXPECT_NE(table.find("CAP_SYS_ADMIN; run lockprof as root to record it"), std::string::npos)
            << table;
        const auto hidden = nlohmann::json::parse(lockprof::test::read_all(unprivileged));
        EXPECT_TRUE(hidden["cells"][0]["trials"][0]["lock_page"]["physical_address"].is_null())
            << hidden["cells"][0]["trials"][0].dump();
    }
    ASSERT_EQ(run_lockprof({"--lock=tas,ticket", "--threads=2", "--acquires=2000", "--trials=2",
                            "--quiet", "--output", heap})
                  .exit_code,
              0);
    const auto r = run_lockprof({"compare", heap, huge});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE((r.out + r.err).find("workload.lock_page differs (base: 'normal', new: 'huge')"),
              std::string::npos)
        << r.out << r.err;
}

// Work in instructions: N/2 trips of the two-instruction loop in every worker, no calibration,
// recorded in the config and stated on the workload line with what it took here.
TEST(CliShapes, WorkInInstructionsIsRunAndRecorded) {
    TempDir dir;
    const auto json = (dir / "r.json").string();
    auto r = run_lockprof({"--lock=tas", "--threads=2", "--acquires=1000", "--trials=1",
                           "--critical-ins=1000", "--parallel-ins=200", "--output", json});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("critical 1000 instructions (measured "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("parallel 200 instructions (measured "), std::string::npos) << r.out;
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(json));
    EXPECT_EQ(doc["config"]["critical_instructions"], 1000);
    EXPECT_EQ(doc["config"]["parallel_instructions"], 200);
    EXPECT_EQ(doc["config"]["critical_ns"], 0);
    for (const auto& thread : doc["cells"][0]["trials"][0]["threads"]) {
        EXPECT_EQ(thread["critical_iterations"], 500);
        EXPECT_EQ(thread["parallel_iterations"], 100);
        EXPECT_GT(thread["critical_work_ns"].get<double>(), 0);
    }
    // The default stays nanoseconds, recorded as no instruction count.
    ASSERT_EQ(run_lockprof({"--lock=tas", "--threads=1", "--acquires=100", "--trials=1", "--quiet",
                            "--output", json})
                  .exit_code,
              0);
    EXPECT_TRUE(
        nlohmann::json::parse(lockprof::test::read_all(json))["config"]["critical_instructions"]
            .is_null());
}

TEST(CliShapes, WorkInInstructionsIsValidated) {
    expect_usage_error(run_lockprof({"--critical-ins=100", "--critical-ns=50"}),
                       "--critical-ins: not with --critical-ns");
    expect_usage_error(run_lockprof({"--parallel-ins=10", "--parallel-ns=0"}),
                       "--parallel-ins: not with --parallel-ns");
    expect_usage_error(run_lockprof({"--critical-ins=1001"}),
                       "--critical-ins: 1001 is not a multiple of 2, the instructions of one "
                       "trip of the work loop (a decrement and a branch); give 1000 or 1002");
    expect_usage_error(run_lockprof({"--parallel-ins=lots"}), "--parallel-ins");
}

// A profile's --critical-ns gives way to the command line's --critical-ins, as every profile
// value gives way to the command line.
TEST(CliShapes, CommandLineInstructionsWinOverAProfilesNanoseconds) {
    TempDir dir;
    const auto profile = (dir / "p.ini").string();
    std::ofstream(profile) << "lock = tas\nthreads = 1\nacquires = 200\ntrials = 1\n"
                              "critical-ns = 300\n";
    const auto json = (dir / "r.json").string();
    auto r = run_lockprof({"--profile", profile, "--critical-ins=40", "--quiet", "--output", json});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(lockprof::test::read_all(json));
    EXPECT_EQ(doc["config"]["critical_instructions"], 40);
    EXPECT_EQ(doc["config"]["critical_ns"], 0);
    std::ofstream(profile, std::ios::app) << "critical-ins = 40\n";
    expect_usage_error(run_lockprof({"--profile", profile}),
                       "--critical-ins: not with --critical-ns");
}
