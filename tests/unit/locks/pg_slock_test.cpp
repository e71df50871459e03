// The PostgreSQL variants behave as their release's s_lock.h and s_lock.c say (docs/pg-slock.md):
// the SPIN_DELAY each accepts, whether TAS_SPIN reads before its TAS, the sleeps once
// spins_per_delay polls have failed, and the shared spins_per_delay estimate that a context
// reads when it starts and folds back, as (shared * 15 + local) / 16, when it ends.
//
// Run natively (x86_64: every release alike) and under qemu-aarch64, where the releases differ.
#include <chrono>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "lockprof/locks/catalog.hpp"

namespace {

using namespace lockprof::locks;
using lockprof::arch::Delay;
using lockprof::arch::kArchName;

constexpr bool kX86 = kArchName == "x86_64";

TEST(PgSlock, EachReleaseAcceptsOnlyItsSpinDelay) {
    const DelayMask pause = delay_bit(Delay::pause), isb = delay_bit(Delay::isb),
                    none = delay_bit(Delay::none);
    EXPECT_EQ(Pg13SlockLock<Delay::none>::kDelays, kX86 ? pause : none);  // arm64: no SPIN_DELAY
    EXPECT_EQ(Pg15SlockLock<Delay::none>::kDelays, kX86 ? pause : isb);   // isb from 15
    EXPECT_EQ(Pg18SlockLock<Delay::none>::kDelays, kX86 ? pause : isb);
    EXPECT_EQ(PgSlockLock<Delay::none>::kDelays, Pg18SlockLock<Delay::none>::kDelays);
    EXPECT_EQ(Pg13SlockLock<Delay::none>::kTasSpinTestsFirst, kX86);  // arm64: 18.4, 17.12, 15.20
    EXPECT_EQ(Pg15SlockLock<Delay::none>::kTasSpinTestsFirst, kX86);
    EXPECT_TRUE(Pg18SlockLock<Delay::none>::kTasSpinTestsFirst);
    EXPECT_TRUE(PgSlockLock<Delay::none>::kTasSpinTestsFirst);
}

// One waiter behind a holder that keeps the lock `hold` long; returns the waiter's counts.
template <typename LockT>
AttemptStats wait_behind_holder(LockT& lock, std::chrono::milliseconds hold) {
    typename LockT::Context holder;
    lock.lock(holder);
    AttemptStats waited;
    std::atomic<bool> started{false};
    std::thread waiter([&] {
        typename LockT::Context context;
        started.store(true);
        lock.lock(context);
        lock.unlock(context);
        waited = context.stats;
        // lock()'s inlined TAS is the caller's to count (kFirstTryUncounted).
        waited.rmw_attempts = rmw_attempts<LockT>(context.stats, 1);
    });
    while (!started.load()) std::this_thread::yield();
    std::this_thread::sleep_for(hold);
    lock.unlock(holder);
    waiter.join();
    return waited;
}

template <typename LockT>
class PgSlockRelease : public ::testing::Test {};
using PgReleases = ::testing::Types<Pg13SlockLock<Delay::none>, Pg15SlockLock<Delay::none>,
                                    Pg18SlockLock<Delay::none>, PgSlockLock<Delay::none>>;
TYPED_TEST_SUITE(PgSlockRelease, PgReleases);

// S_LOCK's inline TAS fails against the holder, then s_lock() polls. With the pre-test a poll is a
// load and only the poll that reads the word free issues a TAS (which wins: nobody else wants the
// lock): two TAS in all. Without it every poll is a TAS: the failed ones, the winning one and the
// fast path's.
TYPED_TEST(PgSlockRelease, TasSpinTestsFirstOnlyWhereTheReleaseDoes) {
    using LockT = TypeParam;
    auto lock = std::make_unique<LockT>();
    const AttemptStats s = wait_behind_holder(*lock, std::chrono::milliseconds(20));
    ASSERT_GE(s.spin_iterations, 10u) << "the waiter never spun";
    if constexpr (LockT::kTasSpinTestsFirst)
        EXPECT_EQ(s.rmw_attempts, 2u) << LockT::kName;
    else
        EXPECT_EQ(s.rmw_attempts, s.spin_iterations + 2) << LockT::kName;
    // 20 ms is far more than spins_per_delay (100) polls: the waiter slept, 1 ms at first.
    EXPECT_GE(s.sleeps, 1u) << LockT::kName;
    EXPECT_LE(s.sleeps, 20u) << LockT::kName;
}

// set_spins_per_delay / update_spins_per_delay: a context starts from the lock's estimate at its
// first slow-path acquire and folds its own back when it is destroyed, truncating as PostgreSQL
// does. A waiter that had to sleep lowers its estimate by one.
TYPED_TEST(PgSlockRelease, SpinsPerDelayIsSharedLikeTheClustersEstimate) {
    using LockT = TypeParam;
    auto lock = std::make_unique<LockT>();
    EXPECT_EQ(lock->shared_spins_per_delay(), 100);
    {
        typename LockT::Context fast;  // never enters s_lock(): nothing to fold back
        lock->lock(fast);
        lock->unlock(fast);
    }
    EXPECT_EQ(lock->shared_spins_per_delay(), 100);
    wait_behind_holder(*lock, std::chrono::milliseconds(20));
    EXPECT_EQ(lock->shared_spins_per_delay(), (100 * 15 + 99) / 16);  // 99
    wait_behind_holder(*lock, std::chrono::milliseconds(20));
    EXPECT_EQ(lock->shared_spins_per_delay(), (99 * 15 + 98) / 16);  // started from 99: 98
}

TYPED_TEST(PgSlockRelease, TryLockIsOneTas) {
    using LockT = TypeParam;
    auto lock = std::make_unique<LockT>();
    typename LockT::Context a, b;
    EXPECT_TRUE(lock->try_lock(a));
    EXPECT_FALSE(lock->try_lock(b));
    EXPECT_EQ(b.stats.rmw_attempts, 1u);
    EXPECT_EQ(b.stats.spin_iterations, 0u);
    lock->unlock(a);
    EXPECT_TRUE(lock->try_lock(b));
    lock->unlock(b);
}

}  // namespace
