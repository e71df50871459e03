// osq: the Linux kernel's optimistic spin queue (kernel/locking/osq_lock.c), written from the
// algorithm, not copied. The kernel's mutexes and rw-semaphores use it so that only one of the
// tasks spinning on a busy owner polls the owner field; each spinner waits on its own node in an
// MCS-like queue whose 32-bit tail names the tail's CPU (+1, so 0 is empty). A spinner that must
// stop (need_resched(), or its predecessor's vCPU was preempted) unqueues itself and returns
// false, and the mutex caller goes to sleep instead.
//
// lock:    exchange our number into the tail; with no predecessor we hold it. Otherwise link
//          behind the predecessor's node (found through the number) and spin on our node's flag.
//          Unqueue when the spin budget runs out: (A) clear the predecessor's next pointer if it
//          still points at us (compare-and-swap), re-reading our prev pointer as predecessors
//          unqueue themselves, and stop if we were handed the lock meanwhile; (B) if we are the
//          tail, swing the tail back to the predecessor's number, else take our successor out
//          of our next pointer (exchange), waiting for it to link; (C) link successor and
//          predecessor to each other.
// unlock:  if we are still the tail, compare-and-swap the tail to empty; otherwise take our
//          successor (exchange of our next pointer, or the wait of step B) and set its flag.
// try_lock: the kernel has none; here a compare-and-swap of an empty tail to our number.
//
// What is modelled: in lockprof's loop nothing reschedules and nothing times out, and the
// queue is used as the lock itself (its holder is the thread in the critical section, not a
// spinner waiting for a mutex owner). So the give-up condition is a spin budget: a waiter that
// polls its flag kSpinBudget times without being handed the lock unqueues and queues again at
// the tail, where the kernel's caller would sleep on the mutex. The requeue costs a trip through
// the tail and loses the waiter its place; Context::unqueues counts them.
// With --delay wfe a poll is one wake-up from WFE (a write to the node's line, or the event
// stream), so the budget lasts longer in time than with the step delays.
//
// Nodes and numbers: as qspinlock.hpp, a context claims a slot of the lock (ThreadSlots) at its
// first acquire and its node is found through it; the tail holds slot + 1 in 32 bits. 65535
// slots are provided, so 65535 threads queue at once; beyond that, contexts without a slot take
// turns at one spare node of the lock (number 65536) and spin on acquiring it as try_lock does
// (lockprof's addition: the kernel has a node for every CPU).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "lockprof/locks/lock.hpp"
#include "lockprof/locks/thread_slots.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

inline constexpr std::uint32_t kOsqSlots = 65535;
// Polls of its own flag after which a waiter unqueues and requeues (need_resched's stand-in):
// some tens of microseconds to milliseconds of polling, a fraction of a scheduler tick.
inline constexpr std::uint64_t kOsqSpinBudget = std::uint64_t{1} << 16;

template <Delay D, std::uint32_t kSlotCount = kOsqSlots, std::uint64_t kSpinBudget = kOsqSpinBudget>
struct alignas(arch::kCacheLine) OsqLockT {
    static_assert(kSlotCount >= 1 && kSlotCount < ~std::uint32_t{0});
    static_assert(kSpinBudget >= 1);

    static constexpr std::string_view kName = "osq";
    static constexpr std::string_view kDescription =
        "Linux optimistic spin queue (kernel/locking/osq_lock.c algorithm): MCS-like, a waiter "
        "unqueues after 65536 polls (models need_resched) and requeues";
    static constexpr std::string_view kRmwNoun = "tail exchanges and compare-and-swaps";
    static constexpr bool kQueue = true;  // each waiter polls a queue node of its own
    static constexpr DelayMask kDelays = kWaitDelays;

    struct alignas(arch::kFalseSharingRange) Node {
        std::atomic<Node*> next{nullptr};
        std::atomic<Node*> prev{nullptr};
        std::atomic<std::uint32_t> locked{0};  // set to 1 by the predecessor's unlock
        std::uint32_t number = 0;              // slot + 1, fixed once the slot is claimed
    };
    using Slots = ThreadSlots<Node, kSlotCount>;
    struct Context {
        Context() = default;
        Context(const Context&) = delete;
        Context& operator=(const Context&) = delete;
        ~Context() {
            if (lock != nullptr && node.number != 0) lock->slots_.release(node.number - 1);
        }
        Node node;
        OsqLockT* lock = nullptr;  // whose slot node.number names
        AttemptStats stats;
        std::uint64_t unqueues = 0;           // spin budgets that ran out: unqueued, requeued
        std::uint64_t slotless_acquires = 0;  // every slot taken: spun on try_lock
    };

    OsqLockT() = default;
    OsqLockT(const OsqLockT&) = delete;
    OsqLockT& operator=(const OsqLockT&) = delete;

    bool try_lock(Context& c) {
        if (!own_slot(c)) [[unlikely]]
            return try_without_slot(c);
        return try_node(c.node, c);
    }
    void lock(Context& c) {
        if (!own_slot(c)) [[unlikely]] {
            lock_without_slot(c);
            return;
        }
        while (!osq_lock(c)) ++c.unqueues;
    }
    void unlock(Context& c) {
        if (c.node.number != 0) [[likely]] {
            unlock_node(c.node, c);
            return;
        }
        unlock_node(*spare_, c);  // taken without a slot, through the spare node
        spare_taken_.store(0, std::memory_order_release);
    }

  private:
    static constexpr Delay kStep = D == Delay::wfe ? Delay::none : D;
    // The number of the spare node, which no slot has.
    static constexpr std::uint32_t kSpareNumber = kSlotCount + 1;

    Node* node_of(std::uint32_t number) {
        return number == kSpareNumber ? spare_.get() : slots_.node(number - 1);
    }
    bool own_slot(Context& c) {
        if (c.lock != this) [[unlikely]] {
            if (c.lock != nullptr && c.node.number != 0) c.lock->slots_.release(c.node.number - 1);
            c.lock = this;
            const std::uint32_t slot = slots_.claim(&c.node);
            c.node.number = slot == Slots::kNoSlot ? 0 : slot + 1;
        }
        return c.node.number != 0;
    }
    // A compare-and-swap of an empty tail to the node's number.
    bool try_node(Node& node, Context& c) {
        if (tail_.load(std::memory_order_relaxed) != 0) return false;
        node.next.store(nullptr, std::memory_order_relaxed);
        std::uint32_t expected = 0;
        ++c.stats.rmw_attempts;
        // Release: next = nullptr is visible before anyone can find the node through the tail.
        return tail_.compare_exchange_strong(expected, node.number, std::memory_order_acq_rel,
                                             std::memory_order_relaxed);
    }
    // Every slot taken: spin on try_lock, out of line as the rare path it is.
    [[gnu::noinline]] void lock_without_slot(Context& c) {
        while (!try_without_slot(c)) {
            ++c.stats.spin_iterations;
            arch::spin_delay<kStep>();
        }
        ++c.slotless_acquires;
    }
    // Contexts without a slot take turns at the lock's one spare node (spare_taken_ says whose
    // turn it is) and acquire it as try_lock does; queued waiters link behind it as behind any.
    bool try_without_slot(Context& c) {
        std::uint32_t expected = 0;
        if (spare_taken_.load(std::memory_order_relaxed) != 0) return false;
        ++c.stats.rmw_attempts;
        if (!spare_taken_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                                  std::memory_order_relaxed))
            return false;
        if (try_node(*spare_, c)) return true;
        spare_taken_.store(0, std::memory_order_release);
        return false;
    }
    void unlock_node(Node& node, Context& c) {
        std::uint32_t expected = node.number;
        ++c.stats.rmw_attempts;
        if (tail_.compare_exchange_strong(expected, 0, std::memory_order_release,
                                          std::memory_order_relaxed))
            return;
        Node* next = nullptr;
        if (node.next.load(std::memory_order_relaxed) != nullptr) {
            ++c.stats.rmw_attempts;
            next = node.next.exchange(nullptr, std::memory_order_acq_rel);
        }
        if (next == nullptr) {
            std::uint64_t rmw = 0, spins = 0;
            next = wait_next(node, rmw, spins, 0);
            c.stats.rmw_attempts += rmw;
            c.stats.spin_iterations += spins;
        }
        if (next != nullptr) next->locked.store(1, std::memory_order_release);
    }

    // One osq_lock(): true once we hold the lock, false after unqueueing (budget spent). The
    // uncontended path (an empty queue: one exchange) stays apart from the waiting, whose
    // registers it would otherwise save and restore on every call (46 -> 59 instructions per
    // uncontended acquire, callgrind). The waiting counts in locals, not in the context whose
    // node it publishes (lock.hpp, "Slow-path counts").
    bool osq_lock(Context& c) {
        Node& node = c.node;
        node.locked.store(0, std::memory_order_relaxed);
        node.next.store(nullptr, std::memory_order_relaxed);
        ++c.stats.rmw_attempts;
        const std::uint32_t old = tail_.exchange(node.number, std::memory_order_acq_rel);
        if (old == 0) [[likely]]
            return true;
        return wait_in_queue(c, old);
    }
    [[gnu::noinline]] bool wait_in_queue(Context& c, std::uint32_t old) {
        std::uint64_t rmw = 0, spins = 0;
        const bool locked = wait_in_queue(c, old, rmw, spins);
        c.stats.rmw_attempts += rmw;
        c.stats.spin_iterations += spins;
        return locked;
    }
    // Behind `old`, the tail we found: true once handed the lock, false after unqueueing.
    [[gnu::always_inline]] bool wait_in_queue(Context& c, std::uint32_t old, std::uint64_t& rmw,
                                              std::uint64_t& spins) {
        Node& node = c.node;
        Node* prev = node_of(old);
        node.prev.store(prev, std::memory_order_relaxed);
        prev->next.store(&node, std::memory_order_release);

        if (arch::spin_until<D>(
                node.locked, [&spins](std::uint32_t v) { return v != 0 || spins >= kSpinBudget; },
                spins) != 0)
            return true;

        // (A) Unlink from prev, unless prev hands us the lock first.
        for (;;) {
            if (prev->next.load(std::memory_order_relaxed) == &node) {
                Node* expected = &node;
                ++rmw;
                if (prev->next.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel,
                                                       std::memory_order_relaxed))
                    break;
            }
            if (node.locked.load(std::memory_order_acquire) != 0) return true;
            ++spins;
            arch::spin_delay<kStep>();
            // A predecessor that unqueued itself has pointed our prev at its own predecessor.
            prev = node.prev.load(std::memory_order_acquire);
        }
        // (B) Nobody can reach us from before now; find who comes after, or stop being the tail.
        Node* next = wait_next(node, rmw, spins, prev->number);
        // (C) Join them.
        if (next != nullptr) {
            next->prev.store(prev, std::memory_order_release);
            prev->next.store(next, std::memory_order_release);
        }
        return false;
    }

    // osq_wait_next: if we are the tail, make `old` the tail and return nullptr; otherwise wait
    // for our successor to have linked itself and take it out of our next pointer.
    [[gnu::always_inline]] Node* wait_next(Node& node, std::uint64_t& rmw, std::uint64_t& spins,
                                           std::uint32_t old) {
        for (;;) {
            if (tail_.load(std::memory_order_relaxed) == node.number) {
                std::uint32_t expected = node.number;
                ++rmw;
                if (tail_.compare_exchange_strong(expected, old, std::memory_order_acq_rel,
                                                  std::memory_order_relaxed))
                    return nullptr;
            }
            if (node.next.load(std::memory_order_relaxed) != nullptr) {
                ++rmw;
                if (Node* next = node.next.exchange(nullptr, std::memory_order_acq_rel))
                    return next;
            }
            ++spins;
            arch::spin_delay<kStep>();
        }
    }

    std::atomic<std::uint32_t> tail_{0};
    std::atomic<std::uint32_t> spare_taken_{0};
    Slots slots_;
    std::unique_ptr<Node> spare_ = make_spare();

    static std::unique_ptr<Node> make_spare() {
        auto spare = std::make_unique<Node>();
        spare->number = kSpareNumber;
        return spare;
    }
};

template <Delay D>
using OsqLock = OsqLockT<D>;

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
