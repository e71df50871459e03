// qspinlock: the Linux kernel's queued spinlock (the arm64 and x86 kernels' spinlock_t), written
// from the algorithm as kernel/locking/qspinlock.c and include/asm-generic/qspinlock_types.h
// describe it, not from its code. One 32-bit word, laid out as the kernel lays it out for fewer
// than 16K CPUs (_Q_PENDING_BITS == 8, so the byte and half-word stores below are possible):
//
//   bits  0- 7  locked byte    1 while the lock is held
//   bits  8-15  pending byte   1 while one waiter, the second contender, waits at the word itself
//   bits 16-17  tail index     which of a CPU's nesting nodes is the tail (always 0 here)
//   bits 18-31  tail slot + 1  whose queue node is the MCS queue's tail (0: no queue)
//
// lock:    fast path, a compare-and-swap 0 -> locked (inlined, as queued_spin_lock is).
//          slow path (out of line, as queued_spin_lock_slowpath is):
//          - word == pending only (a pending waiter is taking over): wait a few polls for it.
//          - nobody queued and no pending waiter: fetch-or the pending bit; if that found
//            pending or a tail set after all, undo our pending bit (if it was ours) and queue;
//            else spin on the locked byte until it clears, then one half-word store turns
//            pending into locked. This is the two-thread path: no queue node is touched.
//          - queue: take this thread's node (its Context), try the lock once more, exchange
//            our tail into the word's upper half-word, link behind the old tail's node and spin
//            on our own node's flag (local spinning, as MCS). At the head of the queue, spin on
//            the word until locked and pending are both clear; if we are still the tail, a
//            compare-and-swap tail -> locked takes the lock and empties the queue, otherwise a
//            byte store sets locked and we pass the head role to the next node.
// try_lock: queued_spin_trylock: a load, and a compare-and-swap 0 -> locked if it read 0.
// unlock:  a release store of 0 to the locked byte (queued_spin_unlock).
//
// Waiting is arch::spin_until<D>(); with --delay wfe on aarch64 that is the WFE on the exclusive
// monitor the arm64 kernel's smp_cond_load_acquire() does. Nodes: the kernel's are per CPU, four
// per CPU for nesting contexts (task, softirq, hardirq, NMI), found from the tail by CPU number.
// lockprof's waiters are threads, which never nest, so each Context holds one node and the tail
// index is always 0. The tail encodes a thread slot instead of a CPU: a context claims a free slot
// of the lock (ThreadSlots, thread_slots.hpp) the first time it has to queue, keeps it for its
// life and gives it back when destroyed. 14 bits minus the empty value give 16383 slots, as the
// kernel's layout gives 16383 CPUs; a 16384th thread queueing on the same lock at once finds no
// slot and spins on try_lock instead, as the kernel does when a CPU has no node left
// (MAX_NODES), so every thread count the harness allows stays correct.
//
// Not modelled: paravirtualised spinning (pv_wait/pv_kick) and the x86 pending-wait tuning
// (_Q_PENDING_LOOPS = 512 on x86; the generic value, 1, is used, as arm64 does). Ordering: where
// the kernel relies on address dependencies (reading the predecessor's node after xchg_tail) or
// smp_wmb(), C++ has no such promise, so xchg_tail is acquire-release and the reads of a node's
// next pointer are acquire (swpalh rather than swph on LSE).
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>

#include "lockprof/locks/lock.hpp"
#include "lockprof/locks/thread_slots.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

// The most slots the tail's 14 bits can name (value 0 means no tail).
inline constexpr std::uint32_t kQspinlockMaxSlots = (std::uint32_t{1} << 14) - 1;

template <Delay D, std::uint32_t kSlotCount = kQspinlockMaxSlots>
struct alignas(arch::kCacheLine) QspinLockT {
    static_assert(kSlotCount >= 1 && kSlotCount <= kQspinlockMaxSlots);
    static_assert(std::endian::native == std::endian::little,
                  "the locked byte and the tail half-word are found by little-endian offsets");
    static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

    static constexpr std::string_view kName = "qspinlock";
    static constexpr std::string_view kDescription =
        "Linux queued spinlock (kernel/locking/qspinlock.c algorithm): locked byte, pending bit, "
        "MCS queue tail in one word";
    static constexpr std::string_view kRmwNoun = "compare-and-swaps, fetch-ors and tail exchanges";
    static constexpr bool kQueue = true;  // each waiter polls a queue node of its own
    static constexpr DelayMask kDelays = kWaitDelays;

    static constexpr std::uint32_t kLockedVal = 1;
    static constexpr std::uint32_t kLockedMask = 0xffu;
    static constexpr std::uint32_t kPendingVal = 1u << 8;
    static constexpr std::uint32_t kPendingMask = 0xffu << 8;
    static constexpr std::uint32_t kLockedPendingMask = kLockedMask | kPendingMask;
    static constexpr unsigned kTailIndexOffset = 16;
    static constexpr unsigned kTailSlotOffset = 18;
    static constexpr std::uint32_t kTailIndexMask = 0x3u << kTailIndexOffset;
    static constexpr std::uint32_t kTailMask = 0xffff0000u;
    // Polls a contender gives a pending waiter to turn pending into locked (generic value).
    static constexpr unsigned kPendingLoops = 1;

    struct Tail {
        std::uint32_t slot;
        std::uint32_t index;
    };
    // encode_tail / decode_tail: slot + 1 in bits 18-31 (so 0 is "no tail"), the node index in
    // bits 16-17.
    static constexpr std::uint32_t encode_tail(std::uint32_t slot, std::uint32_t index) {
        return ((slot + 1) << kTailSlotOffset) | (index << kTailIndexOffset);
    }
    static constexpr Tail decode_tail(std::uint32_t word) {
        return {(word >> kTailSlotOffset) - 1, (word & kTailIndexMask) >> kTailIndexOffset};
    }

    struct alignas(arch::kFalseSharingRange) Node {
        std::atomic<Node*> next{nullptr};
        std::atomic<std::uint32_t> locked{0};  // set to 1 by the predecessor: we are the head
    };
    using Slots = ThreadSlots<Node, kSlotCount>;
    struct Context {
        Context() = default;
        Context(const Context&) = delete;
        Context& operator=(const Context&) = delete;
        ~Context() {
            if (lock != nullptr && slot != Slots::kNoSlot) lock->slots_.release(slot);
        }
        Node node;
        QspinLockT* lock = nullptr;  // whose slot `slot` is
        std::uint32_t slot = Slots::kNoSlot;
        AttemptStats stats;
        // Which path each slow-path acquire took (the fast path is the rest).
        std::uint64_t pending_acquires = 0;   // second contender: pending bit, no queue node
        std::uint64_t queued_acquires = 0;    // through the MCS queue
        std::uint64_t slotless_acquires = 0;  // every slot taken: spun on try_lock
    };

    QspinLockT() = default;
    QspinLockT(const QspinLockT&) = delete;
    QspinLockT& operator=(const QspinLockT&) = delete;

    bool try_lock(Context& c) { return try_word(c.stats.rmw_attempts); }
    // lock()'s inlined compare-and-swap is not counted where it runs: slow_path() takes the
    // context's address, so the context lives in memory, and a count there would add a load
    // and a store to every acquire (pg_slock.hpp does the same). The measured loop adds one
    // per acquire (rmw_attempts() in lock.hpp).
    static constexpr RmwCounting kRmwCounting = RmwCounting::first_uncounted;

    [[gnu::always_inline]] void lock(Context& c) {
        std::uint32_t val = 0;
        if (word_.compare_exchange_strong(val, kLockedVal, std::memory_order_acquire,
                                          std::memory_order_relaxed)) [[likely]]
            return;
        slow_path(c, val);
    }
    void unlock(Context&) { __atomic_store_n(locked_byte(), std::uint8_t{0}, __ATOMIC_RELEASE); }

    // The whole word, for tests that watch a waiter reach the pending bit or the queue.
    std::uint32_t word() const { return word_.load(std::memory_order_acquire); }

  private:
    // The byte and half-words of word_, as the kernel's union names them. may_alias: they are
    // accessed through pointers to another type than the word's (GCC's __atomic builtins work
    // on any suitably aligned object).
    using Half = std::uint16_t __attribute__((may_alias));
    using Byte = std::uint8_t __attribute__((may_alias));
    Byte* locked_byte() { return reinterpret_cast<Byte*>(&word_); }
    Byte* pending_byte() { return reinterpret_cast<Byte*>(&word_) + 1; }
    Half* locked_pending() { return reinterpret_cast<Half*>(&word_); }
    Half* tail_half() { return reinterpret_cast<Half*>(&word_) + 1; }

    // queued_spin_trylock, counting its compare-and-swap in `rmw`.
    bool try_word(std::uint64_t& rmw) {
        std::uint32_t val = word_.load(std::memory_order_relaxed);
        if (val != 0) return false;
        ++rmw;
        return word_.compare_exchange_strong(val, kLockedVal, std::memory_order_acquire,
                                             std::memory_order_relaxed);
    }

    // The slow paths count in locals, not in the context they take by address (lock.hpp,
    // "Slow-path counts").
    [[gnu::noinline]] void slow_path(Context& c, std::uint32_t val) {
        std::uint64_t rmw = 0, spins = 0;
        const bool locked = pending_or_locked(c, val, rmw, spins);
        c.stats.rmw_attempts += rmw;
        c.stats.spin_iterations += spins;
        if (!locked) queue(c);
    }

    // The two-contender path: true once the pending bit has turned into the lock; false when
    // the caller must queue.
    [[gnu::always_inline]] bool pending_or_locked(Context& c, std::uint32_t val, std::uint64_t& rmw,
                                                  std::uint64_t& spins) {
        // A pending waiter is turning pending into locked: give it a moment rather than queue.
        if (val == kPendingVal) {
            unsigned left = kPendingLoops;
            val = arch::spin_until<D>(
                word_, [&left](std::uint32_t v) { return v != kPendingVal || left-- == 0; }, spins);
        }
        if ((val & ~kLockedMask) == 0) {
            ++rmw;
            val = word_.fetch_or(kPendingVal, std::memory_order_acquire);
            if ((val & ~kLockedMask) == 0) {
                // Ours is the pending bit: wait for the holder, then pending -> locked in one
                // half-word store (clear_pending_set_locked). Nobody else writes the low half
                // while pending is set.
                if ((val & kLockedMask) != 0)
                    arch::spin_until<D>(
                        word_, [](std::uint32_t v) { return (v & kLockedMask) == 0; }, spins);
                __atomic_store_n(locked_pending(), std::uint16_t{kLockedVal}, __ATOMIC_RELAXED);
                ++c.pending_acquires;
                return true;
            }
            // Someone was pending or queued after all: undo our pending bit if we set it.
            if ((val & kPendingMask) == 0)
                __atomic_store_n(pending_byte(), std::uint8_t{0}, __ATOMIC_RELAXED);
        }
        return false;
    }

    void queue(Context& c) {
        std::uint64_t rmw = 0, spins = 0;
        queue(c, rmw, spins);
        c.stats.rmw_attempts += rmw;
        c.stats.spin_iterations += spins;
    }

    [[gnu::always_inline]] void queue(Context& c, std::uint64_t& rmw, std::uint64_t& spins) {
        if (c.lock != this) [[unlikely]] {
            if (c.lock != nullptr && c.slot != Slots::kNoSlot) c.lock->slots_.release(c.slot);
            c.lock = this;
            c.slot = slots_.claim(&c.node);
        }
        if (c.slot == Slots::kNoSlot) [[unlikely]] {
            // No node to queue with (the kernel's idx >= MAX_NODES): spin on try_lock.
            while (!try_word(rmw)) {
                ++spins;
                arch::spin_delay<D == Delay::wfe ? Delay::none : D>();
            }
            ++c.slotless_acquires;
            return;
        }
        Node& node = c.node;
        node.locked.store(0, std::memory_order_relaxed);
        node.next.store(nullptr, std::memory_order_relaxed);
        ++c.queued_acquires;
        // The lock may have come free while we got here; the node is ready either way.
        if (try_word(rmw)) return;

        const std::uint32_t tail = encode_tail(c.slot, 0);
        ++rmw;
        // xchg_tail: the upper half-word only, so the locked and pending bytes are untouched.
        const std::uint32_t old =
            std::uint32_t{__atomic_exchange_n(tail_half(), static_cast<std::uint16_t>(tail >> 16),
                                              __ATOMIC_ACQ_REL)}
            << 16;
        Node* next = nullptr;
        if (old != 0) {
            Node* prev = slots_.node(decode_tail(old).slot);
            prev->next.store(&node, std::memory_order_release);
            arch::spin_until<D>(
                node.locked, [](std::uint32_t v) { return v != 0; }, spins);
            next = node.next.load(std::memory_order_acquire);
        }
        // Head of the queue: wait for the holder and any pending waiter to leave.
        std::uint32_t val = arch::spin_until<D>(
            word_, [](std::uint32_t v) { return (v & kLockedPendingMask) == 0; }, spins);
        if ((val & kTailMask) == tail) {
            // Still the tail: take the lock and empty the queue in one compare-and-swap.
            ++rmw;
            if (word_.compare_exchange_strong(val, kLockedVal, std::memory_order_relaxed,
                                              std::memory_order_relaxed))
                return;
        }
        // Someone queued behind us: set locked (nobody else may now), then hand the head role
        // on once the successor has linked itself in.
        __atomic_store_n(locked_byte(), std::uint8_t{kLockedVal}, __ATOMIC_RELAXED);
        while (next == nullptr) {
            next = node.next.load(std::memory_order_acquire);
            if (next == nullptr) {
                ++spins;
                arch::spin_delay<D == Delay::wfe ? Delay::none : D>();
            }
        }
        next->locked.store(1, std::memory_order_release);
    }

    std::atomic<std::uint32_t> word_{0};
    Slots slots_;
};

template <Delay D>
using QspinLock = QspinLockT<D>;

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
