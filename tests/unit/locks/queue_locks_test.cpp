// The kernel's queue locks (qspinlock.hpp, osq.hpp): what the typed exclusion tests cannot see.
// qspinlock: the tail encoding, and that a second contender takes the pending path (no queue
// node) while a third and fourth queue, each step watched in the lock word; the fall-back when
// every thread slot is taken. osq: a waiter whose spin budget runs out unqueues and requeues, and
// exclusion holds while waiters unqueue from the middle of the queue all the time.
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/locks/catalog.hpp"

namespace {

using namespace lockprof::locks;
using lockprof::arch::Delay;
using lockprof::arch::delay_name;
using namespace std::chrono_literals;

// Waits (up to 20 s, qemu is slow) until `done()` holds; false if it never did.
template <typename Done>
bool eventually(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::yield();
    }
    return true;
}

// Threads that each lock, report, and unlock at once, under a test that watches the lock word.
template <typename LockT>
struct Waiter {
    typename LockT::Context context;
    std::atomic<bool> acquired{false};
    std::thread thread;

    void start(LockT& lock, std::atomic<std::uint64_t>* order = nullptr,
               std::uint64_t* position = nullptr) {
        thread = std::thread([this, &lock, order, position] {
            lock.lock(context);
            if (order != nullptr) *position = order->fetch_add(1);
            acquired.store(true);
            lock.unlock(context);
        });
    }
};

using Qspin = QspinLock<Delay::none>;

TEST(Qspinlock, TailEncodingRoundTrips) {
    for (std::uint32_t slot : {0u, 1u, 2u, 255u, 1000u, 8191u, kQspinlockMaxSlots - 1})
        for (std::uint32_t index = 0; index < 4; ++index) {
            const std::uint32_t tail = Qspin::encode_tail(slot, index);
            EXPECT_NE(tail, 0u) << "slot " << slot << " must not read as no tail";
            EXPECT_EQ(tail & ~Qspin::kTailMask, 0u) << "the tail overlaps locked or pending";
            const auto decoded = Qspin::decode_tail(tail | Qspin::kLockedVal | Qspin::kPendingVal);
            EXPECT_EQ(decoded.slot, slot);
            EXPECT_EQ(decoded.index, index);
        }
    // The layout of the kernel's qspinlock_types.h with fewer than 16K CPUs.
    EXPECT_EQ(Qspin::encode_tail(0, 0), 1u << 18);
    EXPECT_EQ(Qspin::encode_tail(kQspinlockMaxSlots - 1, 3), 0xffff0000u);
    EXPECT_EQ(Qspin::kPendingVal, 0x100u);
    EXPECT_EQ(kQspinlockMaxSlots, 16383u);
}

// A holder; the second contender sets pending and waits on the word; the third and fourth queue
// (the fourth behind the third). Each release hands on in that order, through each path.
TEST(Qspinlock, SecondContenderGoesPendingLaterOnesQueue) {
    auto lock = std::make_unique<Qspin>();
    Qspin::Context holder;
    lock->lock(holder);
    EXPECT_EQ(lock->word(), Qspin::kLockedVal);

    std::atomic<std::uint64_t> order{0};
    std::uint64_t position[3] = {};
    auto pending = std::make_unique<Waiter<Qspin>>();
    pending->start(*lock, &order, &position[0]);
    ASSERT_TRUE(eventually([&] {
        return lock->word() == (Qspin::kLockedVal | Qspin::kPendingVal);
    })) << std::hex
        << lock->word();

    auto first = std::make_unique<Waiter<Qspin>>();
    first->start(*lock, &order, &position[1]);
    ASSERT_TRUE(eventually([&] { return (lock->word() & Qspin::kTailMask) != 0; }));
    // The tails seen now are checked against the waiters' slots after the joins: a waiter's
    // Context is its own thread's until then (TSan relates the tail's half-word release to no
    // read of the whole word).
    const std::uint32_t first_tail = lock->word() & Qspin::kTailMask;
    EXPECT_EQ(Qspin::decode_tail(first_tail).index, 0u);
    EXPECT_EQ(lock->word() & Qspin::kLockedPendingMask, Qspin::kLockedVal | Qspin::kPendingVal);

    auto second = std::make_unique<Waiter<Qspin>>();
    second->start(*lock, &order, &position[2]);
    ASSERT_TRUE(eventually([&] { return (lock->word() & Qspin::kTailMask) != first_tail; }));
    const std::uint32_t second_tail = lock->word() & Qspin::kTailMask;

    EXPECT_FALSE(pending->acquired.load());
    lock->unlock(holder);
    for (auto* w : {pending.get(), first.get(), second.get()}) w->thread.join();
    EXPECT_EQ(lock->word(), 0u) << "the last holder emptied the queue";
    // Each tail named its queued thread's slot.
    EXPECT_EQ(Qspin::decode_tail(first_tail).slot, first->context.slot);
    EXPECT_EQ(Qspin::decode_tail(second_tail).slot, second->context.slot);
    EXPECT_NE(first->context.slot, second->context.slot);

    EXPECT_EQ(position[0], 0u);  // pending, then the queue in order
    EXPECT_EQ(position[1], 1u);
    EXPECT_EQ(position[2], 2u);
    EXPECT_EQ(pending->context.pending_acquires, 1u);
    EXPECT_EQ(pending->context.queued_acquires, 0u);
    EXPECT_EQ(pending->context.slot, Qspin::Slots::kNoSlot) << "the pending path takes no node";
    for (auto* w : {first.get(), second.get()}) {
        EXPECT_EQ(w->context.queued_acquires, 1u);
        EXPECT_EQ(w->context.pending_acquires, 0u);
        EXPECT_GT(w->context.stats.spin_iterations, 0u);
    }
}

// With one slot, a third waiter while another holds the slot has no node: it spins on try_lock
// (the kernel's answer when a CPU runs out of nodes) and still excludes.
TEST(Qspinlock, WithoutAFreeSlotAWaiterSpinsOnTryLock) {
    using OneSlot = QspinLockT<Delay::none, 1>;
    auto lock = std::make_unique<OneSlot>();
    OneSlot::Context holder;
    lock->lock(holder);
    auto pending = std::make_unique<Waiter<OneSlot>>();
    pending->start(*lock);
    ASSERT_TRUE(
        eventually([&] { return lock->word() == (OneSlot::kLockedVal | OneSlot::kPendingVal); }));
    auto queued = std::make_unique<Waiter<OneSlot>>();
    queued->start(*lock);
    ASSERT_TRUE(eventually([&] { return (lock->word() & OneSlot::kTailMask) != 0; }));
    std::atomic<bool> started{false};
    OneSlot::Context slotless;
    std::thread third([&] {
        started.store(true);
        lock->lock(slotless);
        lock->unlock(slotless);
    });
    ASSERT_TRUE(eventually([&] { return started.load(); }));
    std::this_thread::sleep_for(200ms);  // into its slow path: the word stays busy meanwhile
    lock->unlock(holder);
    third.join();
    pending->thread.join();
    queued->thread.join();
    EXPECT_EQ(queued->context.queued_acquires, 1u);
    EXPECT_EQ(slotless.slotless_acquires, 1u);
    EXPECT_EQ(slotless.slot, OneSlot::Slots::kNoSlot);
    EXPECT_EQ(lock->word(), 0u);
}

// Plain payload updated in two steps: an overlap shows as b != a inside the section.
struct QueuePayload {
    std::uint64_t a = 0, b = 0, violations = 0;
};

template <typename LockT, typename Each>
void contend(unsigned threads, std::chrono::milliseconds duration, QueuePayload& payload,
             Each each) {
    auto lock = std::make_unique<LockT>();
    std::atomic<bool> stop{false};
    std::atomic<unsigned> ready{0};
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([&, t] {
            typename LockT::Context context;
            ready.fetch_add(1);
            while (ready.load() < threads) std::this_thread::yield();
            while (!stop.load(std::memory_order_relaxed)) {
                lock->lock(context);
                const std::uint64_t before = payload.a;
                if (payload.b != before) ++payload.violations;
                payload.a = before + 1;
                for (int i = 0; i < 16; ++i) std::atomic_signal_fence(std::memory_order_seq_cst);
                payload.b = payload.a;
                lock->unlock(context);
            }
            each(t, context);
        });
    std::this_thread::sleep_for(duration);
    stop.store(true);
    for (auto& w : workers) w.join();
}

TEST(Qspinlock, OneSlotStillExcludesUnderContention) {
    using OneSlot = QspinLockT<Delay::none, 1>;
    QueuePayload payload;
    std::atomic<std::uint64_t> slotless{0};
    contend<OneSlot>(4, 300ms, payload, [&](unsigned, const OneSlot::Context& c) {
        slotless.fetch_add(c.slotless_acquires);
    });
    EXPECT_EQ(payload.violations, 0u);
    EXPECT_EQ(payload.a, payload.b);
    EXPECT_GT(payload.a, 100u);
    std::printf("[ QSPIN    ] one slot, 4 threads: %llu acquires, %llu without a slot\n",
                static_cast<unsigned long long>(payload.a),
                static_cast<unsigned long long>(slotless.load()));
}

// Every delay policy each accepts, wfe included on aarch64 (the typed tests use the default one):
// spin_until's WFE wait on the word and on a node's flag both wake when they must.
template <template <Delay> class L, Delay D>
void excludes_with_delay() {
    if constexpr ((L<D>::kDelays & delay_bit(D)) != 0 && lockprof::arch::delay_available(D)) {
        QueuePayload payload;
        // Rounds of 100 ms until more than 100 acquires, at most 2 s: three threads on two
        // cores under qemu-user, beside CI's compiles, made as few as 10 acquires in one round
        // (osq, delay none); a lost wake-up stops the run altogether.
        for (int round = 0; round < 20 && payload.a <= 100; ++round)
            contend<L<D>>(3, 100ms, payload, [](unsigned, const typename L<D>::Context&) {});
        EXPECT_EQ(payload.violations, 0u) << L<D>::kName << " " << delay_name(D);
        EXPECT_EQ(payload.a, payload.b) << L<D>::kName << " " << delay_name(D);
        EXPECT_GT(payload.a, 100u) << L<D>::kName << " " << delay_name(D);
    }
}
template <template <Delay> class L>
void excludes_with_every_delay() {
    excludes_with_delay<L, Delay::none>();
    excludes_with_delay<L, Delay::pause>();
    excludes_with_delay<L, Delay::yield>();
    excludes_with_delay<L, Delay::isb>();
    excludes_with_delay<L, Delay::wfe>();
}

TEST(QueueLocks, ExcludeWithEveryDelayTheyAccept) {
    excludes_with_every_delay<QspinLock>();
    excludes_with_every_delay<OsqLock>();
    excludes_with_every_delay<EventMutexLock>();
}

// A waiter behind a holder that keeps the lock well past the spin budget unqueues, requeues,
// and finally gets the lock once it is released.
TEST(Osq, WaiterPastItsSpinBudgetUnqueuesAndRequeues) {
    using SmallBudget = OsqLockT<Delay::none, kOsqSlots, 64>;
    auto lock = std::make_unique<SmallBudget>();
    SmallBudget::Context holder;
    lock->lock(holder);
    auto waiter = std::make_unique<Waiter<SmallBudget>>();
    waiter->start(*lock);
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(waiter->acquired.load());
    lock->unlock(holder);
    waiter->thread.join();
    EXPECT_TRUE(waiter->acquired.load());
    EXPECT_GT(waiter->context.unqueues, 0u) << "64 polls ran out while the holder held on";
    EXPECT_GE(waiter->context.stats.spin_iterations, 64u * waiter->context.unqueues);
    // The holder's uncontended path and the waiter's tail exchanges were counted.
    EXPECT_GE(waiter->context.stats.rmw_attempts, waiter->context.unqueues + 1);

    // The default budget is what kDescription says.
    EXPECT_EQ(kOsqSpinBudget, 65536u);
}

// A budget of 16 polls: waiters unqueue from the middle and the end of the queue constantly,
// racing handovers; nobody enters twice and everyone gets through.
TEST(Osq, ExcludesWhileWaitersUnqueueAllTheTime) {
    using Tiny = OsqLockT<Delay::none, kOsqSlots, 16>;
    QueuePayload payload;
    std::atomic<std::uint64_t> unqueues{0};
    contend<Tiny>(3, 300ms, payload,
                  [&](unsigned, const Tiny::Context& c) { unqueues.fetch_add(c.unqueues); });
    EXPECT_EQ(payload.violations, 0u);
    EXPECT_EQ(payload.a, payload.b);
    EXPECT_GT(payload.a, 100u);
    EXPECT_GT(unqueues.load(), 0u);
    std::printf("[ OSQ      ] budget 16, 3 threads: %llu acquires, %llu unqueues\n",
                static_cast<unsigned long long>(payload.a),
                static_cast<unsigned long long>(unqueues.load()));
}

// With one slot, the other contexts take turns at the spare node; queued waiters link behind it.
TEST(Osq, ContextsWithoutASlotShareTheSpareNode) {
    using OneSlot = OsqLockT<Delay::none, 1, 16>;
    QueuePayload payload;
    std::atomic<std::uint64_t> slotless{0};
    contend<OneSlot>(3, 300ms, payload, [&](unsigned, const OneSlot::Context& c) {
        slotless.fetch_add(c.slotless_acquires);
    });
    EXPECT_EQ(payload.violations, 0u);
    EXPECT_EQ(payload.a, payload.b);
    EXPECT_GT(slotless.load(), 0u);
}

}  // namespace
