// Every lock in the catalog, under contention: the critical section must exclude all others.
//
// The payload is plain (non-atomic) data updated in two steps with an invariant checked in
// between, so an overlapping critical section is caught inside it, not only in the final count.
// The payload is reached through a pointer the compiler cannot see through across threads, and
// the lock operations are std::atomic acquire/release, so the compiler may not keep the payload
// in registers across lock()/unlock() (GCC's IPA reference analysis hoisted a plain global
// counter, touched from noinline functions without atomics, out of the loop at -O2, and the
// counts came out wrong).
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/locks/catalog.hpp"
#include "lock_types.hpp"

namespace {

using namespace lockprof::locks;
using lockprof::arch::Delay;

struct Payload {
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    std::uint64_t violations = 0;
};

template <typename L>
class MutualExclusion : public ::testing::Test {};
TYPED_TEST_SUITE(MutualExclusion, lockprof::test::AllLockTypes);

TYPED_TEST(MutualExclusion, CriticalSectionsNeverOverlap) {
    using LockT = TypeParam;
    if constexpr (!excludes<LockT>()) {
        GTEST_SKIP() << LockT::kName << " is the no-lock baseline and does not exclude";
    } else {
        // More threads than the 2 cores here, so holders are preempted inside the critical
        // section. FIFO locks (ticket, MCS, CLH) hand over to preempted waiters and can crawl
        // when oversubscribed, so each thread also stops at a deadline; exclusion is checked on
        // whatever ran, and enough must have run for the check to mean something.
        constexpr unsigned kThreads = 3;
        constexpr unsigned kIterations = 20000;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        auto lock = std::make_unique<LockT>();
        auto payload = std::make_unique<Payload>();
        std::atomic<unsigned> ready{0};
        std::atomic<std::uint64_t> completed{0};
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < kThreads; ++t)
            threads.emplace_back([&, p = payload.get()] {
                typename LockT::Context context;
                ready.fetch_add(1);
                while (ready.load() < kThreads) std::this_thread::yield();
                unsigned i = 0;
                for (; i < kIterations; ++i) {
                    if (i % 256 == 0 && std::chrono::steady_clock::now() > deadline) break;
                    lock->lock(context);
                    const std::uint64_t before = p->a;
                    if (p->b != before) ++p->violations;
                    p->a = before + 1;
                    std::atomic_signal_fence(std::memory_order_seq_cst);
                    p->b = p->a;
                    lock->unlock(context);
                }
                completed.fetch_add(i);
            });
        for (auto& t : threads) t.join();
        EXPECT_EQ(payload->violations, 0u) << LockT::kName;
        EXPECT_EQ(payload->a, completed.load()) << LockT::kName;
        EXPECT_EQ(payload->b, payload->a);
        EXPECT_GE(completed.load(), 100u) << "too little ran to test exclusion";
    }
}

TYPED_TEST(MutualExclusion, TryLockFailsWhileHeldAndSucceedsAfter) {
    using LockT = TypeParam;
    if constexpr (!excludes<LockT>()) {
        GTEST_SKIP() << LockT::kName << " does not exclude";
    } else {
        auto lock = std::make_unique<LockT>();
        typename LockT::Context holder;
        lock->lock(holder);
        bool acquired_while_held = true;
        std::thread other([&] {
            typename LockT::Context context;
            acquired_while_held = lock->try_lock(context);
        });
        other.join();
        EXPECT_FALSE(acquired_while_held) << LockT::kName;
        lock->unlock(holder);
        std::thread after([&] {
            typename LockT::Context context;
            EXPECT_TRUE(lock->try_lock(context)) << LockT::kName;
            lock->unlock(context);
        });
        after.join();
    }
}

TYPED_TEST(MutualExclusion, CountsAttemptsWhereItSpins) {
    using LockT = TypeParam;
    auto lock = std::make_unique<LockT>();
    typename LockT::Context context;
    lock->lock(context);
    lock->unlock(context);
    // An uncontended acquire of an atomic-based lock issues one RMW (MCS's release adds a
    // compare-exchange on the tail) and no spins; library and no-lock baselines report zero.
    EXPECT_LE(rmw_attempts<LockT>(context.stats, 1), 2u) << LockT::kName;
    EXPECT_EQ(context.stats.spin_iterations, 0u) << LockT::kName;
}

}  // namespace
