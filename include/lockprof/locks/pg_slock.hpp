// pg13-slock, pg15-slock, pg18-slock (and pg-slock, the newest): PostgreSQL's spinlock as each
// release builds it, from its src/include/storage/s_lock.h and src/backend/storage/lmgr/s_lock.c
// (read, not copied; docs/pg-slock.md names the files, releases and what differs).
//
//   S_LOCK:   TAS(lock), inlined at the caller; only when it fails, the out-of-line s_lock().
//   TAS:      __sync_lock_test_and_set(lock, 1) on arm64 in every release: `ldxr; stxr; cbnz;
//             dmb ish` on ARMv8.0, `swpa` with LSE, `bl __aarch64_swp4_sync` with outline
//             atomics (not the acquire exchange of lockprof's tas). x86_64: `lock; xchgb` on a
//             one-byte slock_t, which the same builtin compiles to.
//   S_UNLOCK: __sync_lock_release on arm64 (`stlr`); x86_64: a compiler barrier and a plain store.
//   s_lock:   while TAS_SPIN fails, perform_spin_delay(). TAS_SPIN first reads the word with a
//             plain load and tries TAS only when it reads free: on x86_64 in every release, on
//             arm64 in PostgreSQL 18 (read: 18.4), 17.12 and 15.20 on; earlier arm64 releases
//             (read: 13.23) define no TAS_SPIN, so it is TAS itself.
//   perform_spin_delay: SPIN_DELAY() (x86_64 `rep; nop`, i.e. pause, in every release; arm64
//             `isb` from PostgreSQL 15, nothing before), then after spins_per_delay polls a
//             pg_usleep of cur_delay microseconds: 1 ms at first, then cur_delay += cur_delay * U
//             + 0.5 with U uniform in [0, 1) (random() / MAX_RANDOM_VALUE before 15,
//             pg_prng_double from 15), back to 1 ms past 1 s. pg_usleep is one nanosleep that a
//             signal cuts short and nothing resumes.
//   finish_spin_delay: the backend's spins_per_delay +100 (up to 1000) if it never slept, -1
//             (down to 10) if it did.
//   spins_per_delay: per backend, set from the cluster's shared estimate when the backend starts
//             and folded back as (shared * 15 + local) / 16 when it exits (set_spins_per_delay,
//             update_spins_per_delay). Here a thread's context is the backend and the lock holds
//             the shared estimate: a context reads it at its first slow-path acquire and folds
//             its own value back when destroyed, so each trial's threads start from 100, as the
//             backends of a fresh cluster do.
//
// PostgreSQL aborts with "stuck spinlock" after 1000 sleeps; lockprof's watchdog plays that role.
// Not modelled: pgstat_report_wait_start/end around the sleep (14+; two stores beside a sleep of
// a millisecond or more). Each variant accepts one delay policy, its release's SPIN_DELAY, so a
// run labelled pg13-slock runs PostgreSQL 13's code and no other.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <ctime>
#include <type_traits>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

// What differs between the releases modelled: only the arm64 part of s_lock.h. On x86_64 every
// one builds the same code (TAS_SPIN tests first, SPIN_DELAY is pause).
struct Pg13Release {
    static constexpr std::string_view kName = "pg13-slock";
    static constexpr std::string_view kDescription =
        "PostgreSQL 13 s_lock (read: 13.23): arm64 TAS_SPIN = TAS and no SPIN_DELAY";
    static constexpr bool kArm64TasSpinTestsFirst = false;
    static constexpr bool kArm64SpinDelayIsb = false;
};
struct Pg15Release {
    static constexpr std::string_view kName = "pg15-slock";
    static constexpr std::string_view kDescription =
        "PostgreSQL 15.0-15.19, 17.0-17.11 s_lock: arm64 SPIN_DELAY = isb, TAS_SPIN = TAS";
    static constexpr bool kArm64TasSpinTestsFirst = false;
    static constexpr bool kArm64SpinDelayIsb = true;
};
struct Pg18Release {
    static constexpr std::string_view kName = "pg18-slock";
    static constexpr std::string_view kDescription =
        "PostgreSQL 18.4, 17.12, 15.20 s_lock: arm64 TAS_SPIN loads before TAS, SPIN_DELAY = isb";
    static constexpr bool kArm64TasSpinTestsFirst = true;
    static constexpr bool kArm64SpinDelayIsb = true;
};
// `pg-slock`, kept for existing profiles and result files: the newest release modelled.
struct PgNewestRelease : Pg18Release {
    static constexpr std::string_view kName = "pg-slock";
    static constexpr std::string_view kDescription =
        "PostgreSQL s_lock of the newest release modelled: the same code as pg18-slock";
};

template <typename Release, Delay D>
struct alignas(arch::kCacheLine) PgSlock {
    static constexpr std::string_view kName = Release::kName;
    static constexpr std::string_view kDescription = Release::kDescription;
    static constexpr std::string_view kRmwNoun = "atomic exchanges";

    static constexpr bool kX86 = arch::kArchName == "x86_64";
    // SPIN_DELAY as the release defines it is the only delay policy the variant accepts.
    static constexpr Delay kSpinDelay =
        kX86 ? Delay::pause : (Release::kArm64SpinDelayIsb ? Delay::isb : Delay::none);
    static constexpr DelayMask kDelays = delay_bit(kSpinDelay);
    static constexpr bool kTasSpinTestsFirst = kX86 || Release::kArm64TasSpinTestsFirst;
    // slock_t: unsigned char on x86_64, int on arm64.
    using Slock = std::conditional_t<kX86, unsigned char, int>;

    static constexpr int kMinSpinsPerDelay = 10;
    static constexpr int kMaxSpinsPerDelay = 1000;
    static constexpr int kDefaultSpinsPerDelay = 100;
    static constexpr long kMinDelayUsec = 1000;
    static constexpr long kMaxDelayUsec = 1000000;

    struct Context {
        Context() = default;
        Context(const Context&) = delete;
        Context& operator=(const Context&) = delete;
        // A backend's exit: fold this thread's estimate into the lock's (update_spins_per_delay).
        ~Context() {
            if (lock != nullptr) lock->update_spins_per_delay(spins_per_delay);
        }
        AttemptStats stats;
        PgSlock* lock = nullptr;  // whose estimate spins_per_delay started from
        int spins_per_delay = kDefaultSpinsPerDelay;
        std::uint64_t rng = 0;
    };

    PgSlock() = default;
    PgSlock(const PgSlock&) = delete;
    PgSlock& operator=(const PgSlock&) = delete;

    // lock()'s inlined TAS is not counted where it runs: s_lock() takes the context's address,
    // so the context lives in memory, and a count there would add a load and a store to every
    // acquire that the real S_LOCK does not make. The measured loop adds one per acquire
    // (rmw_attempts() in lock.hpp); s_lock() counts its own.
    static constexpr RmwCounting kRmwCounting = RmwCounting::first_uncounted;

    bool try_lock(Context& c) {  // one TAS: S_LOCK's fast path, no waiting
        ++c.stats.rmw_attempts;
        return tas();
    }
    // S_LOCK is a macro: its TAS is always inlined where the lock is taken.
    [[gnu::always_inline]] void lock(Context& c) {
        if (!tas()) [[unlikely]]
            s_lock(c);
    }
    void unlock(Context&) { __sync_lock_release(&word_); }

    // ProcGlobal->spins_per_delay, the estimate a new context starts from.
    int shared_spins_per_delay() const {
        return shared_spins_per_delay_.load(std::memory_order_relaxed);
    }

  private:
    [[gnu::always_inline]] bool tas() { return __sync_lock_test_and_set(&word_, 1) == 0; }
    // TAS_SPIN; counts the TAS it issues in `attempts`.
    bool tas_spin(std::uint64_t& attempts) {
        if constexpr (kTasSpinTestsFirst) {
            // PostgreSQL's `*(lock) ? 1 : TAS(lock)`: a plain load (ldr / mov), no ordering.
            if (__atomic_load_n(&word_, __ATOMIC_RELAXED) != 0) return false;
        }
        ++attempts;
        return tas();
    }

    // s_lock(), init_spin_delay(), perform_spin_delay() and finish_spin_delay(), out of line as
    // in PostgreSQL, so the inlined fast path is one TAS and a call.
    [[gnu::noinline]] void s_lock(Context& c) {
        if (c.lock != this) {  // a backend's start: set_spins_per_delay(shared)
            c.lock = this;
            c.spins_per_delay = shared_spins_per_delay_.load(std::memory_order_relaxed);
        }
        // The counts are locals, added to the context once acquired: the context is the
        // caller's memory, and PostgreSQL's spin loop keeps its SpinDelayStatus to itself too.
        const int spins_per_delay = c.spins_per_delay;
        int spins = 0;
        long cur_delay = 0;
        std::uint64_t polls = 0, attempts = 0;
        while (!tas_spin(attempts)) {
            ++polls;
            arch::spin_delay<kSpinDelay>();
            if (++spins >= spins_per_delay) {
                if (cur_delay == 0) cur_delay = kMinDelayUsec;
                pg_usleep(cur_delay);
                ++c.stats.sleeps;
                cur_delay +=
                    static_cast<long>(static_cast<double>(cur_delay) * random_unit(c) + 0.5);
                if (cur_delay > kMaxDelayUsec) cur_delay = kMinDelayUsec;
                spins = 0;
            }
        }
        c.stats.spin_iterations += polls;
        c.stats.rmw_attempts += attempts;
        if (cur_delay == 0) {
            if (c.spins_per_delay < kMaxSpinsPerDelay)
                c.spins_per_delay = std::min(c.spins_per_delay + 100, kMaxSpinsPerDelay);
        } else if (c.spins_per_delay > kMinSpinsPerDelay) {
            c.spins_per_delay = std::max(c.spins_per_delay - 1, kMinSpinsPerDelay);
        }
    }
    // PostgreSQL truncates rather than rounds, so one backend's small change still moves it.
    void update_spins_per_delay(int local) {
        int shared = shared_spins_per_delay_.load(std::memory_order_relaxed);
        while (!shared_spins_per_delay_.compare_exchange_weak(shared, (shared * 15 + local) / 16,
                                                              std::memory_order_relaxed)) {
        }
    }
    static double random_unit(Context& c) {
        if (c.rng == 0) c.rng = reinterpret_cast<std::uintptr_t>(&c) | 1;  // unseeded (tests)
        c.rng ^= c.rng << 13;
        c.rng ^= c.rng >> 7;
        c.rng ^= c.rng << 17;
        return static_cast<double>(c.rng >> 11) * 0x1.0p-53;
    }
    static void pg_usleep(long usec) {
        const timespec delay{usec / 1000000, (usec % 1000000) * 1000};
        nanosleep(&delay, nullptr);
    }

    // ProcGlobal->spins_per_delay: read at a context's first slow path and folded back when it
    // ends, twice per thread per trial, so it may share the lock's line. It comes first: the
    // lock word is the last member, so the data the loop keeps beside a lock (LockSlot) sits
    // right after it, as a PostgreSQL struct's fields sit beside its slock_t.
    std::atomic<int> shared_spins_per_delay_{kDefaultSpinsPerDelay};
    Slock word_ = 0;
};

template <Delay D>
using Pg13SlockLock = PgSlock<Pg13Release, D>;
template <Delay D>
using Pg15SlockLock = PgSlock<Pg15Release, D>;
template <Delay D>
using Pg18SlockLock = PgSlock<Pg18Release, D>;
template <Delay D>
using PgSlockLock = PgSlock<PgNewestRelease, D>;

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
