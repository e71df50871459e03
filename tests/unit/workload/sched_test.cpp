// --sched fifo: the warnings a machine in use gets, the oversubscription refusal and --force,
// and the calling thread's policy set and restored by FifoScope where the kernel allows it.
#include "lockprof/workload/sched.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include <fstream>

#include "lockprof/common/error.hpp"

using namespace lockprof::workload;

TEST(SchedFifo, AnIdleMachineGetsNoWarning) {
    EXPECT_TRUE(fifo_warnings({0.2, 8}, 4).empty());
}

TEST(SchedFifo, ALoadedMachineOrTooFewIdleCpusIsWarnedAbout) {
    const auto loaded = fifo_warnings({3.5, 8}, 2);
    ASSERT_EQ(loaded.size(), 1u);
    EXPECT_NE(loaded[0].find("load average 3.50 on 8 CPUs, about 4 idle for 2 threads"),
              std::string::npos)
        << loaded[0];
    EXPECT_NE(loaded[0].find("starve"), std::string::npos);
    // Below a load of 1, but 4 threads want more than the 3.3 idle CPUs.
    EXPECT_EQ(fifo_warnings({0.7, 4}, 4).size(), 1u);
    EXPECT_EQ(fifo_warnings({-1, 4}, 1).size(), 1u) << "unknown load is said, not assumed idle";
}

TEST(SchedFifo, MoreThreadsThanCpusNeedsForce) {
    EXPECT_NO_THROW(check_fifo_oversubscription(2, 2, false));
    try {
        check_fifo_oversubscription(3, 2, false);
        FAIL() << "3 FIFO spinners on 2 CPUs were not refused";
    } catch (const lockprof::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("3 threads on 2 CPU(s)"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos);
    }
    EXPECT_NO_THROW(check_fifo_oversubscription(3, 2, true));
}

TEST(SchedFifo, ReadsTheLoadAverage) {
    std::string pattern = (std::filesystem::temp_directory_path() / "lockprof-load-XXXXXX");
    const std::filesystem::path root = mkdtemp(pattern.data());
    std::filesystem::create_directories(root / "proc");
    std::ofstream(root / "proc/loadavg") << "1.25 0.50 0.10 1/200 12345\n";
    EXPECT_DOUBLE_EQ(read_machine_load(4, root).load_average, 1.25);
    std::filesystem::remove_all(root);
    EXPECT_LT(read_machine_load(4, root).load_average, 0);
}

TEST(SchedFifo, ScopeSetsAndRestoresTheCallingThreadsPolicy) {
    try {
        check_fifo_allowed();
    } catch (const lockprof::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("SCHED_FIFO"), std::string::npos);
        GTEST_SKIP() << "this process may not use SCHED_FIFO: " << e.what();
    }
    int policy = -1;
    sched_param param{};
    {
        const FifoScope scope(SchedPolicy::fifo, kFifoWatcherPriority);
        ASSERT_EQ(pthread_getschedparam(pthread_self(), &policy, &param), 0);
        EXPECT_EQ(policy, SCHED_FIFO);
        EXPECT_EQ(param.sched_priority, kFifoWatcherPriority);
    }
    ASSERT_EQ(pthread_getschedparam(pthread_self(), &policy, &param), 0);
    EXPECT_EQ(policy, SCHED_OTHER);
    {
        const FifoScope none(SchedPolicy::other, kFifoWatcherPriority);
        ASSERT_EQ(pthread_getschedparam(pthread_self(), &policy, &param), 0);
        EXPECT_EQ(policy, SCHED_OTHER);
    }
}
