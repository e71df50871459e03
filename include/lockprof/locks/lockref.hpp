// lockref and refcount: the non-lock synchronisation ARM's lockhammer also measures
// (ARM-software/synchronization-benchmarks, benchmarks/lockhammer/tests/cas_lockref.h and
// incdec_refcount.h), written from the algorithms, not copied. Neither excludes: in lockprof's
// loop one "acquire" is a get (take a reference) and one "release" a put (drop it), and the
// critical work between them runs unprotected, as the `empty` baseline's does.
//
// lockref: the Linux kernel's lockref (lib/lockref.c, include/linux/lockref.h): a spinlock and a
// reference count in one 64-bit word (bits 0-31 the lock, 0 when free; bits 32-63 the count), so
// a get or put is one compare-and-swap of the whole word while the lock half is free
// (CMPXCHG_LOOP), and only falls back to the spinlock when the lock is held or the
// compare-and-swap keeps failing (the kernel gives up after 100 tries).
//   get/put:  up to 100 times: read the word; if the lock half is free, compare-and-swap it to
//             count +/- 1. After that, or while the lock is held, the fallback: wait until the
//             lock half is free, compare-and-swap it to held, then one release store writes the
//             new count with the lock free (the kernel's spin_lock; count++; spin_unlock).
//   try_lock: the fast path's compare-and-swap, once.
// refcount: an atomic increment on get and an atomic decrement on put (fetch-and-add of +1 and
// -1, as lockhammer's incdec_refcount): one read-modify-write each, whatever the contention.
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) LockrefLock {
    static constexpr std::string_view kName = "lockref";
    static constexpr std::string_view kDescription =
        "not a lock: acquire = get, release = put of a Linux lockref (lib/lockref.c: CAS on a "
        "64-bit spinlock+count word while the lock half is free; lockhammer cas_lockref)";
    static constexpr std::string_view kRmwNoun = "compare-and-swaps of the lock+count word";
    static constexpr DelayMask kDelays = kStepDelays;
    static constexpr bool kExcludes = false;

    static constexpr std::uint64_t kLockMask = 0xFFFF'FFFFu;
    static constexpr std::uint64_t kOne = std::uint64_t{1} << 32;
    static constexpr unsigned kCasTries = 100;  // the kernel's CMPXCHG_LOOP bound

    struct Context {
        AttemptStats stats;
        std::uint64_t fallbacks = 0;  // gets and puts that took the spinlock
    };

    bool try_lock(Context& c) { return fast(kOne, c); }
    void lock(Context& c) { change(kOne, c); }        // get: count + 1
    void unlock(Context& c) { change(0 - kOne, c); }  // put: count - 1 (wraps in the top half)

  private:
    bool fast(std::uint64_t delta, Context& c) {
        std::uint64_t seen = word_.load(std::memory_order_relaxed);
        if ((seen & kLockMask) != 0) return false;
        ++c.stats.rmw_attempts;
        return word_.compare_exchange_strong(seen, seen + delta, std::memory_order_acq_rel,
                                             std::memory_order_relaxed);
    }
    void change(std::uint64_t delta, Context& c) {
        for (unsigned i = 0; i < kCasTries; ++i) {
            if (fast(delta, c)) return;
            ++c.stats.spin_iterations;
        }
        ++c.fallbacks;
        for (;;) {
            std::uint64_t seen = word_.load(std::memory_order_relaxed);
            if ((seen & kLockMask) == 0) {
                ++c.stats.rmw_attempts;
                if (word_.compare_exchange_strong(seen, seen | 1, std::memory_order_acquire,
                                                  std::memory_order_relaxed)) {
                    word_.store(seen + delta, std::memory_order_release);
                    return;
                }
            }
            ++c.stats.spin_iterations;
            arch::spin_delay<D>();
        }
    }

    std::atomic<std::uint64_t> word_{0};
};

template <Delay D>
struct alignas(arch::kCacheLine) RefcountLock {
    static constexpr std::string_view kName = "refcount";
    static constexpr std::string_view kDescription =
        "not a lock: acquire = atomic increment, release = atomic decrement of one counter "
        "(lockhammer incdec_refcount)";
    static constexpr std::string_view kRmwNoun = "atomic increments and decrements";
    static constexpr DelayMask kDelays = kNoDelay;
    static constexpr bool kExcludes = false;

    struct Context {
        AttemptStats stats;
    };

    bool try_lock(Context& c) {
        lock(c);
        return true;
    }
    void lock(Context& c) {
        ++c.stats.rmw_attempts;
        count_.fetch_add(1, std::memory_order_acquire);
    }
    void unlock(Context&) { count_.fetch_sub(1, std::memory_order_release); }

  private:
    std::atomic<std::uint64_t> count_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
