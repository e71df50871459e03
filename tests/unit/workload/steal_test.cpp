// /proc/stat's steal column read under a root folder (a fake /proc/stat in tests), the CPUs a
// trial's steal covers, and the difference of two readings.
#include "lockprof/workload/steal.hpp"

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace lockprof::workload {
namespace {

// A 2-CPU guest's /proc/stat, as Linux 6.x writes it (the all-CPU line first).
constexpr const char* kProcStat =
    "cpu  63070 0 7391 16330 491 0 188 1063 0 0\n"
    "cpu0 31099 0 3114 9522 42 0 11 501 0 0\n"
    "cpu1 31970 0 4277 6807 449 0 177 561 0 0\n"
    "intr 414879 0 0 0\n"
    "ctxt 661119\n"
    "btime 1764770000\n";

TEST(ProcStatSteal, ReadsEachCpusStealAndTotalUnderARoot) {
    lockprof::test::TempDir root;
    root.write("proc/stat", kProcStat);
    const CpuTimesSnapshot snapshot = read_cpu_times(root.path);
    EXPECT_EQ(snapshot.unknown_because, "");
    ASSERT_EQ(snapshot.cpus.size(), 2u);  // the all-CPU line is not a CPU
    EXPECT_EQ(snapshot.cpus.at(0).steal, 501u);
    EXPECT_EQ(snapshot.cpus.at(1).steal, 561u);
    // user .. steal; guest and guest_nice are already in user and nice
    EXPECT_EQ(snapshot.cpus.at(0).total, 31099u + 3114 + 9522 + 42 + 11 + 501);
    EXPECT_DOUBLE_EQ(*steal_share_since_boot(snapshot),
                     (501.0 + 561) / (31099 + 3114 + 9522 + 42 + 11 + 501 + 31970 + 4277 + 6807 +
                                      449 + 177 + 561));
}

// Without a steal column, or without the file, steal is unknown and says why: never 0.
TEST(ProcStatSteal, NoStealColumnOrNoFileIsUnknownNotZero) {
    const auto old = parse_proc_stat("cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n");  // Linux 2.6.10
    EXPECT_TRUE(old.cpus.empty());
    EXPECT_EQ(old.unknown_because,
              "/proc/stat has no steal column (a kernel before 2.6.11, or an emulated /proc)");
    EXPECT_FALSE(steal_share_since_boot(old).has_value());
    EXPECT_EQ(parse_proc_stat("cpu 1 2 3 4 5 6 7 8\nintr 5\n").unknown_because,
              "/proc/stat has no per-CPU lines");
    EXPECT_EQ(parse_proc_stat("cpu0 1 2 3 4 five 6 7 8\n").unknown_because,
              "/proc/stat has no steal column (a kernel before 2.6.11, or an emulated /proc)");
    lockprof::test::TempDir empty;
    EXPECT_EQ(read_cpu_times(empty.path).unknown_because,
              "there is no /proc/stat (is /proc mounted?)");
    empty.write("proc/stat", "");
    EXPECT_EQ(read_cpu_times(empty.path).unknown_because, "/proc/stat cannot be read");
}

TEST(ProcStatSteal, DifferenceOfTwoReadingsInNanoseconds) {
    const auto before = parse_proc_stat(
        "cpu0 0 0 0 0 0 0 0 100\ncpu1 0 0 0 0 0 0 0 200\n"
        "cpu2 0 0 0 0 0 0 0 300\n");
    const auto after = parse_proc_stat(
        "cpu0 0 0 0 0 0 0 0 103\ncpu1 0 0 0 0 0 0 0 199\n"
        "cpu3 0 0 0 0 0 0 0 300\ncpu2 0 0 0 0 0 0 0 301\n");
    const auto reading = steal_between(before, after, {0, 1, 2, 3}, 150'000'000, 10'000'000);
    ASSERT_TRUE(reading.steal.has_value()) << reading.unknown_because;
    // cpu1 went backwards and cpu3 came online in between: neither is covered.
    EXPECT_EQ(reading.steal->cpus, (std::vector<int>{0, 2}));
    EXPECT_EQ(reading.steal->steal_ns, 40'000'000u);
    EXPECT_EQ(reading.steal->window_ns, 150'000'000u);
    EXPECT_EQ(reading.steal->tick_ns, 10'000'000u);

    const auto none = steal_between(before, after, {1, 3}, 150'000'000, 10'000'000);
    EXPECT_FALSE(none.steal.has_value());
    EXPECT_EQ(none.unknown_because,
              "/proc/stat has no usable steal figure for the CPUs the threads ran on");
    const auto unknown = steal_between(parse_proc_stat(""), after, {0}, 150'000'000, 10'000'000);
    EXPECT_FALSE(unknown.steal.has_value());
    EXPECT_EQ(unknown.unknown_because, "/proc/stat has no per-CPU lines");
}

TEST(ProcStatSteal, PinnedThreadsCoverTheirCpusUnpinnedOnesEveryAllowedCpu) {
    std::vector<ThreadResult> threads(3);
    threads[0].cpu = 3, threads[1].cpu = 1, threads[2].cpu = 3;
    EXPECT_EQ(steal_cpus(threads, {0, 1, 2, 3}), (std::vector<int>{1, 3}));
    threads[1].cpu = -1;  // its pinning failed: it ran anywhere
    EXPECT_EQ(steal_cpus(threads, {0, 1, 2, 3}), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_GT(proc_stat_tick_ns(), 0u);
}

}  // namespace
}  // namespace lockprof::workload
