// event-mutex: MySQL/InnoDB's spin-then-wait mutex, TTASEventMutex, the default InnoDB mutex
// (ib_mutex_t through ut0mutex.h's SyncArrayMutex), as MySQL 8.0 builds it in
// storage/innobase/include/ib0mutex.h with ut0mutex.ic (wait), sync0arr.cc (the wait array),
// os0event.cc (the event) and ut0ut.cc (ut_delay). Read, not copied.
//
//   enter:  try_lock, a compare-and-swap of the owner word from "nobody" to the caller; only when
//           it fails, spin_and_try_lock (out of line here).
//   spin_and_try_lock: is_free() polls the owner word up to max_spins times (innodb_sync_spin_
//           loops, default 30), each poll that finds it held followed by ut_delay(d) with d
//           uniform in [0, innodb_spin_wait_delay = 6]; when a poll finds it free, try_lock (a
//           failure goes back to polling). After max_spins polls: raise max_spins by another 30,
//           std::this_thread::yield(), and wait(): reserve a wait-array cell (resetting the
//           event: it remembers the event's signal count), set m_waiters, try_lock 4 more times,
//           and if all fail wait on the event until its signal count moves. Then poll again.
//   exit:   store "nobody" in the owner word; if m_waiters is set, signal(): clear m_waiters and
//           set the event (os_event_set: signal count + 1, pthread_cond_broadcast, waking every
//           waiter).
//   ut_delay(d): d x innodb_spin_wait_pause_multiplier (default 50) UT_RELAX_CPU()s; that is the
//           delay step here (pause on x86, the --delay policy).
//
// Every atomic is sequentially consistent, as InnoDB's (std::atomic defaults): exit's store and
// its load of m_waiters, and a waiter's store of m_waiters and its try_locks, are a Dekker pair;
// with weaker orders a waiter could sleep through the only release that saw no waiters.
//
// Modelled differently: the owner word holds the address of the holder's Context where InnoDB
// stores its std::thread::id (both 64-bit compare-and-swaps); the event is a futex on a 32-bit
// signal count rather than a pthread mutex and condition variable (the same reset-count
// semantics: a wait returns at once if the count moved since the cell was reserved, and a set
// wakes every waiter); the wait array's cell bookkeeping and its mutex, and the error monitor's
// once-a-second wake-up of waiters, are not modelled. Each wait on the event that slept and was
// woken counts in stats.sleeps (a wait that found the count already moved returns without
// sleeping and is not counted); Context::yields counts the yields before each wait.
#pragma once

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) EventMutexLock {
    static constexpr std::string_view kName = "event-mutex";
    static constexpr std::string_view kDescription =
        "MySQL 8.0 InnoDB TTASEventMutex (ib0mutex.h, ut0mutex.ic): 30 polls with random "
        "ut_delay, yield, then wait on an OS event";
    static constexpr std::string_view kRmwNoun = "compare-and-swaps of the owner word";
    static constexpr DelayMask kDelays = kStepDelays;

    static constexpr std::uint32_t kSpinLoops = 30;        // innodb_sync_spin_loops
    static constexpr std::uint32_t kSpinWaitDelay = 6;     // innodb_spin_wait_delay
    static constexpr std::uint32_t kPauseMultiplier = 50;  // innodb_spin_wait_pause_multiplier
    static constexpr std::uint32_t kWaitRetries = 4;       // try_lock()s after setting m_waiters

    struct Context {
        AttemptStats stats;
        std::uint64_t rng = 0;     // seeded per thread by the loop (seed_context)
        std::uint64_t yields = 0;  // std::this_thread::yield() before each wait
    };

    EventMutexLock() = default;
    EventMutexLock(const EventMutexLock&) = delete;
    EventMutexLock& operator=(const EventMutexLock&) = delete;

    bool try_lock(Context& c) {
        std::uint64_t expected = 0;
        ++c.stats.rmw_attempts;
        return owner_.compare_exchange_strong(expected, id(c));
    }
    // enter(): inlined at the caller as InnoDB's is; the spinning and waiting out of line.
    [[gnu::always_inline]] void lock(Context& c) {
        if (!try_lock(c)) [[unlikely]]
            spin_and_try_lock(c);
    }
    void unlock(Context& c) {
        owner_.store(0);
        if (waiters_.load() != 0) [[unlikely]]
            signal(c);
    }

  private:
    static std::uint64_t id(Context& c) { return reinterpret_cast<std::uintptr_t>(&c); }

    [[gnu::noinline]] void spin_and_try_lock(Context& c) {
        std::uint32_t n_spins = 0;
        std::uint32_t max_spins = kSpinLoops;
        for (;;) {
            if (is_free(max_spins, n_spins, c)) {
                if (try_lock(c)) return;
                continue;
            }
            max_spins = n_spins + kSpinLoops;
            ++c.yields;
            sched_yield();
            if (wait(c)) return;
        }
    }
    // Polls until the owner word reads free, at least once and until n_spins reaches max_spins.
    bool is_free(std::uint32_t max_spins, std::uint32_t& n_spins, Context& c) const {
        do {
            if (owner_.load() == 0) return true;
            ++c.stats.spin_iterations;
            ut_delay(random_delay(c));
            ++n_spins;
        } while (n_spins < max_spins);
        return false;
    }
    // TTASEventMutex::wait(): reserve (reset the event), announce, retry, then sleep.
    bool wait(Context& c) {
        const std::uint32_t signal_count = event_.load();
        waiters_.store(1);
        for (std::uint32_t i = 0; i < kWaitRetries; ++i)
            if (try_lock(c)) return true;  // m_waiters stays set: others may be waiting
        const long rc = syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&event_),
                                FUTEX_WAIT_PRIVATE, signal_count, nullptr, nullptr, 0);
        if (rc == 0) ++c.stats.sleeps;
        return false;
    }
    void signal(Context& c) {
        waiters_.store(0);
        ++c.stats.rmw_attempts;
        event_.fetch_add(1);
        syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&event_), FUTEX_WAKE_PRIVATE, INT_MAX,
                nullptr, nullptr, 0);
    }

    static void ut_delay(std::uint32_t delay) {
        for (std::uint32_t i = 0; i < delay * kPauseMultiplier; ++i) arch::spin_delay<D>();
    }
    // ut_rnd_interval(0, innodb_spin_wait_delay): uniform in [0, 6].
    static std::uint32_t random_delay(Context& c) {
        if (c.rng == 0) c.rng = reinterpret_cast<std::uintptr_t>(&c) | 1;  // unseeded (tests)
        c.rng ^= c.rng << 13;
        c.rng ^= c.rng >> 7;
        c.rng ^= c.rng << 17;
        return static_cast<std::uint32_t>((c.rng >> 32) % (kSpinWaitDelay + 1));
    }

    // The owner word comes last, so the data the loop keeps beside the lock (LockSlot) sits
    // right after it on the same line, as a structure's fields sit after its mutex.
    std::atomic<std::uint32_t> event_{0};    // the event's signal count (futex word)
    std::atomic<std::uint32_t> waiters_{0};  // m_waiters
    std::atomic<std::uint64_t> owner_{0};    // m_owner: 0 is std::thread::id{}, "nobody"
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
