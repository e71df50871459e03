// The shared mode of the reader-writer locks (locks::SharedLock: rw-cas, spin-rw), over every
// lock of the catalog: the others skip. Readers must really share (two inside at once), and
// writers must still exclude readers and each other.
#include <atomic>
#include <barrier>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/locks/catalog.hpp"
#include "lock_types.hpp"

namespace {

using namespace lockprof::locks;

template <typename L>
class SharedMode : public ::testing::Test {};
TYPED_TEST_SUITE(SharedMode, lockprof::test::AllLockTypes);

// With only readers, a second reader gets in while the first is inside. The first holds its
// shared acquire across a barrier phase, so the second's try_lock_shared runs while it is
// certainly inside: no timing. Every round must admit it (nobody else touches the word).
TYPED_TEST(SharedMode, TwoReadersAreInsideAtOnce) {
    using LockT = TypeParam;
    if constexpr (!has_shared<LockT>()) {
        GTEST_SKIP() << LockT::kName << " has no shared mode";
    } else {
        constexpr unsigned kRounds = 200;
        auto lock = std::make_unique<LockT>();
        std::barrier sync(2);
        std::atomic<unsigned> inside{0}, most_inside{0}, second_admitted{0};
        auto enter = [&] {
            const unsigned now = inside.fetch_add(1) + 1;
            unsigned seen = most_inside.load();
            while (now > seen && !most_inside.compare_exchange_weak(seen, now)) {
            }
        };
        std::thread first([&] {
            typename LockT::Context context;
            for (unsigned i = 0; i < kRounds; ++i) {
                lock->lock_shared(context);
                enter();
                sync.arrive_and_wait();  // 1: the first reader is inside
                sync.arrive_and_wait();  // 2: the second has tried (and left)
                inside.fetch_sub(1);
                lock->unlock_shared(context);
                sync.arrive_and_wait();  // 3: the lock is free again
            }
        });
        std::thread second([&] {
            typename LockT::Context context;
            for (unsigned i = 0; i < kRounds; ++i) {
                sync.arrive_and_wait();
                if (lock->try_lock_shared(context)) {
                    enter();
                    second_admitted.fetch_add(1);
                    inside.fetch_sub(1);
                    lock->unlock_shared(context);
                }
                sync.arrive_and_wait();
                sync.arrive_and_wait();
            }
        });
        first.join();
        second.join();
        EXPECT_EQ(most_inside.load(), 2u) << LockT::kName << ": readers never shared the lock";
        EXPECT_EQ(second_admitted.load(), kRounds) << LockT::kName;
    }
}

// A writer keeps readers and writers out; a reader keeps writers out; all is free after.
TYPED_TEST(SharedMode, WriterAndReaderExcludeEachOther) {
    using LockT = TypeParam;
    if constexpr (!has_shared<LockT>()) {
        GTEST_SKIP() << LockT::kName << " has no shared mode";
    } else {
        auto lock = std::make_unique<LockT>();
        typename LockT::Context a, b;
        lock->lock(a);
        EXPECT_FALSE(lock->try_lock_shared(b)) << LockT::kName << ": a reader got past a writer";
        EXPECT_FALSE(lock->try_lock(b)) << LockT::kName;
        lock->unlock(a);
        lock->lock_shared(a);
        EXPECT_FALSE(lock->try_lock(b)) << LockT::kName << ": a writer got past a reader";
        EXPECT_TRUE(lock->try_lock_shared(b)) << LockT::kName;
        lock->unlock_shared(b);
        lock->unlock_shared(a);
        EXPECT_TRUE(lock->try_lock(b)) << LockT::kName << ": not free after the readers left";
        lock->unlock(b);
        EXPECT_TRUE(lock->try_lock_shared(a)) << LockT::kName;
        lock->unlock_shared(a);
    }
}

// Readers and writers mixed under contention: a writer's two-step update of the payload is
// never seen half done by a reader, and no writer update is lost.
TYPED_TEST(SharedMode, ReadersNeverSeeAWriterInside) {
    using LockT = TypeParam;
    if constexpr (!has_shared<LockT>()) {
        GTEST_SKIP() << LockT::kName << " has no shared mode";
    } else {
        constexpr unsigned kThreads = 3;
        constexpr unsigned kIterations = 20000;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        auto lock = std::make_unique<LockT>();
        struct Payload {
            std::atomic<std::uint64_t> a{0}, b{0};
        };
        auto payload = std::make_unique<Payload>();
        std::atomic<std::uint64_t> violations{0}, writes{0}, reads{0};
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
                typename LockT::Context context;
                for (unsigned i = 0; i < kIterations; ++i) {
                    if (i % 256 == 0 && std::chrono::steady_clock::now() > deadline) break;
                    if ((i + t) % 4 != 0) {  // three reads in four
                        lock->lock_shared(context);
                        const auto before = payload->a.load(std::memory_order_relaxed);
                        std::atomic_signal_fence(std::memory_order_seq_cst);
                        if (payload->b.load(std::memory_order_relaxed) != before)
                            violations.fetch_add(1);
                        lock->unlock_shared(context);
                        reads.fetch_add(1);
                    } else {
                        lock->lock(context);
                        const auto before = payload->a.load(std::memory_order_relaxed);
                        payload->a.store(before + 1, std::memory_order_relaxed);
                        std::atomic_signal_fence(std::memory_order_seq_cst);
                        payload->b.store(before + 1, std::memory_order_relaxed);
                        lock->unlock(context);
                        writes.fetch_add(1);
                    }
                }
            });
        for (auto& th : threads) th.join();
        EXPECT_EQ(violations.load(), 0u) << LockT::kName;
        EXPECT_EQ(payload->a.load(), writes.load()) << LockT::kName;
        EXPECT_GE(reads.load(), 100u) << "too little ran to test exclusion";
        EXPECT_GE(writes.load(), 30u) << "too little ran to test exclusion";
    }
}

}  // namespace
