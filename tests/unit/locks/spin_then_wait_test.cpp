// event-mutex (InnoDB's TTASEventMutex) and pthread-trylock: what the typed exclusion tests
// cannot see. A waiter behind a long holder spins its 30 polls, yields and sleeps on the event,
// and the release wakes it (stats.sleeps, as pg-slock counts its pg_usleeps); its random delays
// come from the context's rng, which the loop seeds per thread. pthread-trylock counts every
// try as one attempt.
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/locks/catalog.hpp"
#include "lockprof/workload/loop.hpp"

namespace {

using namespace lockprof::locks;
using lockprof::arch::Delay;
using namespace std::chrono_literals;

template <typename LockT>
typename LockT::Context wait_behind_holder(std::chrono::milliseconds hold) {
    auto lock = std::make_unique<LockT>();
    typename LockT::Context holder;
    lock->lock(holder);
    typename LockT::Context waited;
    std::atomic<bool> started{false};
    std::thread waiter([&] {
        typename LockT::Context context;
        started.store(true);
        lock->lock(context);
        lock->unlock(context);
        waited = context;
    });
    while (!started.load()) std::this_thread::yield();
    std::this_thread::sleep_for(hold);
    lock->unlock(holder);
    waiter.join();
    return waited;
}

TEST(EventMutex, AWaiterBehindALongHolderSleepsOnTheEventAndIsWoken) {
    using Lock = EventMutexLock<Delay::none>;
    const Lock::Context waited = wait_behind_holder<Lock>(200ms);
    EXPECT_GE(waited.stats.sleeps, 1u) << "it should have waited on the event";
    EXPECT_GE(waited.yields, 1u);
    EXPECT_EQ(waited.yields, waited.stats.spin_iterations / Lock::kSpinLoops)
        << "one yield (and one wait) per round of 30 polls";
    // enter()'s try_lock, then per round a try_lock after is_free or the 4 of wait().
    EXPECT_GE(waited.stats.rmw_attempts, 1 + Lock::kWaitRetries * waited.yields);
}

TEST(EventMutex, UncontendedItNeverSleepsOrSignals) {
    using Lock = EventMutexLock<Delay::none>;
    auto lock = std::make_unique<Lock>();
    Lock::Context c;
    for (int i = 0; i < 1000; ++i) {
        lock->lock(c);
        lock->unlock(c);
    }
    EXPECT_EQ(c.stats.rmw_attempts, 1000u);
    EXPECT_EQ(c.stats.sleeps, 0u);
    EXPECT_EQ(c.yields, 0u);
}

// The loop seeds every lock context's rng (seed_context); event-mutex draws its ut_delay from it.
TEST(EventMutex, ItsRandomDelaysAreSeededThroughTheContext) {
    using Lock = EventMutexLock<Delay::none>;
    Lock::Context c;
    lockprof::workload::seed_context(c, 0x1234567);
    EXPECT_EQ(c.rng, 0x1234567u);
}

// Many threads on two cores: waiters sleep and wake all the time; nobody sleeps forever (the
// test would hang) and exclusion holds.
TEST(EventMutex, ExcludesWithWaitersSleepingAndWaking) {
    using Lock = EventMutexLock<Delay::none>;
    auto lock = std::make_unique<Lock>();
    struct {
        std::uint64_t a = 0, b = 0, violations = 0;
    } payload;
    std::atomic<std::uint64_t> sleeps{0}, done{0};
    std::atomic<unsigned> ready{0};
    constexpr unsigned kThreads = 6;
    constexpr unsigned kIterations = 300;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            Lock::Context context;
            ready.fetch_add(1);
            while (ready.load() < kThreads) std::this_thread::yield();
            for (unsigned i = 0; i < kIterations; ++i) {
                lock->lock(context);
                const std::uint64_t before = payload.a;
                if (payload.b != before) ++payload.violations;
                payload.a = before + 1;
                lockprof::arch::burn(100000);  // far longer than 30 polls
                payload.b = payload.a;
                lock->unlock(context);
            }
            sleeps.fetch_add(context.stats.sleeps);
            done.fetch_add(kIterations);
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(payload.violations, 0u);
    EXPECT_EQ(payload.a, done.load());
    EXPECT_GT(sleeps.load(), 0u) << "waiters behind long critical sections sleep";
    std::printf("[ EVENT    ] %u threads: %llu acquires, %llu sleeps on the event\n", kThreads,
                static_cast<unsigned long long>(payload.a),
                static_cast<unsigned long long>(sleeps.load()));
}

TEST(PthreadTrylock, EveryTryIsCountedAndFailedOnesAreSpins) {
    using Lock = PthreadTrylockLock<Delay::none>;
    const Lock::Context waited = wait_behind_holder<Lock>(20ms);
    EXPECT_GT(waited.stats.spin_iterations, 0u);
    EXPECT_EQ(waited.stats.rmw_attempts, waited.stats.spin_iterations + 1);
    EXPECT_TRUE(flavour_independent<Lock>());
}

}  // namespace
