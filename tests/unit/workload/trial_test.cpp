// The trial runner with real threads: counts, exclusion check, watchdog, interrupt.
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"
#include "lockprof/workload/catalog.hpp"
#include "lockprof/workload/loop.hpp"
#include "lockprof/workload/plan.hpp"
#include "lockprof/workload/trial.hpp"

using namespace lockprof;
using namespace lockprof::workload;

namespace {

TrialSpec small_spec(unsigned threads, std::uint64_t acquires) {
    TrialSpec spec;
    spec.threads = threads;
    spec.acquires_per_thread = acquires;
    spec.delay = arch::Delay::none;
    spec.watchdog_ns = 20'000'000'000;
    return spec;
}

// A lock whose unlock() forgets to release: the second acquire never completes.
template <arch::Delay D>
struct alignas(arch::kCacheLine) NeverReleased {
    static constexpr std::string_view kName = "never-released";
    static constexpr std::string_view kDescription = "test: unlock does nothing";
    static constexpr locks::DelayMask kDelays = locks::kNoDelay;
    struct Context {
        locks::AttemptStats stats;
    };
    bool try_lock(Context&) { return !held_.exchange(true); }
    void lock(Context& c) {
        while (!try_lock(c)) std::this_thread::yield();
    }
    void unlock(Context&) {}
    std::atomic<bool> held_{false};
};

// A "lock" that claims to exclude but does not.
template <arch::Delay D>
struct alignas(arch::kCacheLine) NotExcluding {
    static constexpr std::string_view kName = "not-excluding";
    static constexpr std::string_view kDescription = "test: excludes nothing";
    static constexpr locks::DelayMask kDelays = locks::kNoDelay;
    struct Context {
        locks::AttemptStats stats;
    };
    bool try_lock(Context&) { return true; }
    void lock(Context&) { std::this_thread::yield(); }  // invite interleaving
    void unlock(Context&) {}
};

template <template <arch::Delay> class L>
RunnableLock test_lock() {
    RunnableLock lock;
    lock.name = lock.algorithm = std::string(L<arch::Delay::none>::kName);
    lock.delays = locks::kNoDelay;
    lock.kernels[0][0] = make_kernel<L<arch::Delay::none>, false>();
    lock.kernels[0][1] = make_kernel<L<arch::Delay::none>, true>();
    return lock;
}

}  // namespace

TEST(Trial, EveryLockCompletesItsAcquiresAndExcludes) {
    RunControl control;
    for (const auto& lock : lock_catalog()) {
        if (lock.needs_lse && !arch::cpu_has_lse()) continue;
        TrialSpec spec = small_spec(2, 1000);
        spec.delay = lock.default_delay();
        TrialOutcome outcome = run_trial(lock, spec, control);
        ASSERT_EQ(outcome.result.threads.size(), 2u) << lock.name;
        for (const auto& t : outcome.result.threads) EXPECT_EQ(t.acquires, 1000u) << lock.name;
        EXPECT_EQ(outcome.lost_updates, 0u) << lock.name;
        EXPECT_GT(outcome.result.wall_ns, 0u) << lock.name;
        EXPECT_FALSE(outcome.interrupted);
    }
}

TEST(Trial, EveryLockExcludesWhenOversubscribed) {
    RunControl control;
    for (const auto& lock : lock_catalog()) {
        if (lock.needs_lse && !arch::cpu_has_lse()) continue;
        TrialSpec spec = small_spec(5, 0);  // more threads than cores: preempted holders
        spec.acquires_per_thread.reset();
        spec.duration_ns = 150'000'000;
        spec.delay = lock.default_delay();
        TrialOutcome outcome = run_trial(lock, spec, control);
        std::uint64_t total = 0;
        for (const auto& t : outcome.result.threads) total += t.acquires;
        EXPECT_GT(total, 0u) << lock.name;
        EXPECT_EQ(outcome.lost_updates, 0u) << lock.name;
    }
}

TEST(Trial, DurationModeStopsAndCountsEveryThread) {
    RunControl control;
    TrialSpec spec = small_spec(4, 0);
    spec.acquires_per_thread.reset();
    spec.duration_ns = 100'000'000;
    const auto start = std::chrono::steady_clock::now();
    TrialOutcome outcome = run_trial(*find_lock("ttas"), spec, control);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_LT(elapsed, std::chrono::seconds(10));  // a hang guard, not a timing assertion
    ASSERT_EQ(outcome.result.threads.size(), 4u);
    for (const auto& t : outcome.result.threads) EXPECT_GT(t.end_ns, t.start_ns);
    EXPECT_GT(outcome.result.wall_ns, 50'000'000u);
}

TEST(Trial, LatencyHistogramRecordsEveryAcquire) {
    RunControl control;
    TrialSpec spec = small_spec(2, 1000);
    spec.latency = true;
    TrialOutcome outcome = run_trial(*find_lock("tas"), spec, control);
    for (const auto& t : outcome.result.threads) EXPECT_EQ(t.latency.total(), 1000u);
}

TEST(Trial, DetectsALockThatDoesNotExclude) {
    RunControl control;
    const RunnableLock lock = test_lock<NotExcluding>();
    // Two threads interleaving relaxed load/store increments with yields in between lose
    // updates unless they never overlap; run until they do (bounded).
    std::uint64_t lost = 0;
    for (int attempt = 0; attempt < 20 && lost == 0; ++attempt)
        lost = run_trial(lock, small_spec(2, 200000), control).lost_updates;
    EXPECT_GT(lost, 0u);
}

TEST(Trial, WatchdogEndsARunThatMakesNoProgress) {
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "the stall path abandons the spinning threads by design (the process exits "
                    "right after); TSan reports their later accesses. Runs in the other builds";
#endif
    RunControl control;
    TrialSpec spec = small_spec(2, 1000);
    spec.watchdog_ns = 300'000'000;
    const RunnableLock lock = test_lock<NeverReleased>();
    try {
        run_trial(lock, spec, control);
        FAIL() << "a lock that is never released must stall";
    } catch (const StallError& e) {
        EXPECT_NE(std::string(e.what()).find("no progress"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("never-released"), std::string::npos);
    }
}

TEST(Trial, InterruptStopsTheTrial) {
    std::atomic<bool> interrupted{false};
    RunControl control;
    control.interrupted = &interrupted;
    TrialSpec spec = small_spec(2, 0);
    spec.acquires_per_thread.reset();
    spec.duration_ns = 60'000'000'000;
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        interrupted.store(true);
    });
    TrialOutcome outcome = run_trial(*find_lock("cas"), spec, control);
    stopper.join();
    EXPECT_TRUE(outcome.interrupted);
}
