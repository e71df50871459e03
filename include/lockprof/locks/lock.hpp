// The lock concept every algorithm in locks/ satisfies, and the per-thread context it uses.
//
// Locks are types, not virtual objects: the runner is instantiated per lock type, so the
// measured loop calls lock()/unlock() directly and the compiler inlines them.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <string_view>

#include "lockprof/arch/cpu.hpp"

// Lock code is compiled once per ISA flavour on aarch64 (llsc, lse, outline; see
// docs/ARCHITECTURE.md). Each flavour's translation unit defines LOCKPROF_FLAVOUR_NS, so its
// instantiations get their own mangled names and the linker cannot merge an LSE copy of a
// lock function into the LL/SC build (or the reverse). Builds with one flavour use `native`.
#ifndef LOCKPROF_FLAVOUR_NS
#define LOCKPROF_FLAVOUR_NS native
#endif

namespace lockprof::locks {

using arch::Delay;

// What the lock itself counts while acquiring, in plain per-thread integers (no atomics): the
// evidence that TAS stores on every try while TTAS and CAS wait with loads.
struct AttemptStats {
    std::uint64_t rmw_attempts = 0;     // atomic read-modify-writes issued (xchg, cas, fetch_add)
    std::uint64_t spin_iterations = 0;  // polls of the lock word while it was held
    std::uint64_t sleeps = 0;           // times the waiter gave up its CPU (pg-slock's pg_usleep)
};

// Bit set of delay policies a lock accepts.
using DelayMask = std::uint32_t;
constexpr DelayMask delay_bit(Delay d) {
    return DelayMask{1} << static_cast<unsigned>(d);
}
// Policies for a lock that only retries its atomic (no monitored word to wait on, so no WFE).
inline constexpr DelayMask kStepDelays = delay_bit(Delay::none) | delay_bit(Delay::pause) |
                                         delay_bit(Delay::yield) | delay_bit(Delay::isb);
// Policies for a lock that waits on a word with loads: every step delay, plus WFE.
inline constexpr DelayMask kWaitDelays = kStepDelays | delay_bit(Delay::wfe);
// A lock that does not spin (the kernel or no lock at all decides how to wait).
inline constexpr DelayMask kNoDelay = delay_bit(Delay::none);

// A lock algorithm: shared state in the object, per-thread state in Context (a queue node for
// MCS/CLH, the adaptive spin count for pg-slock, and the attempt statistics for all).
template <typename L>
concept Lock = requires(L& lock, typename L::Context& context) {
    requires std::default_initializable<typename L::Context>;
    { context.stats } -> std::convertible_to<AttemptStats&>;
    {lock.lock(context)};
    { lock.try_lock(context) } -> std::same_as<bool>;
    {lock.unlock(context)};
    { L::kName } -> std::convertible_to<std::string_view>;
    { L::kDescription } -> std::convertible_to<std::string_view>;
    { L::kDelays } -> std::convertible_to<DelayMask>;
};

// A reader-writer lock: a Lock that also has a shared mode, which any number of holders take
// at once while no holder has the lock exclusively (rw-cas, spin-rw). The measured loop takes
// `--read-fraction` of its acquires this way (workload/loop.hpp); locks without it take every
// acquire exclusive.
template <typename L>
concept SharedLock = Lock<L> && requires(L& lock, typename L::Context& context) {
    {lock.lock_shared(context)};
    { lock.try_lock_shared(context) } -> std::same_as<bool>;
    {lock.unlock_shared(context)};
};

template <typename L>
constexpr bool has_shared() {
    return SharedLock<L>;
}

// The two ways a simple spinlock waits, shared by the algorithms that differ only in the atomic
// they acquire with (exchange or compare-exchange). Always inlined, in every build (the
// sanitizers' -O1 too), so the acquire loop is the lock's own code in the measured loop, where
// the annotator looks for it. Both take the lock and its context, never a closure over the
// context: a lambda holding the context's address made GCC 12 keep the whole
// context, attempt counts included, in stack memory inside the acquire loop (four loads and
// stores per spin that the real lock never executes; tests/unit/workload/loop_disasm_test.cpp
// checks the loops stay in registers).
//
// retry_acquire: retry the atomic itself (`Attempt`, a member function of the lock that issues
// one read-modify-write and counts nothing) after a delay step (tas, cas). Every retry is
// another read-modify-write of the lock's cache line, so only the retries are counted, as spins:
// such a lock says RmwCounting::one_per_poll and rmw_attempts() adds one per call and per spin.
template <Delay D, auto Attempt, typename L>
[[gnu::always_inline]] inline void retry_acquire(L& lock, typename L::Context& context) {
    while (!(lock.*Attempt)()) {
        ++context.stats.spin_iterations;
        arch::spin_delay<D>();
    }
}

// wait_then_acquire: after a failed attempt (`Attempt`, a member function of the lock that
// issues one read-modify-write), poll the word with plain loads until it reads free (ttas,
// ttas-cas, rw-cas's writers). Waiters share the line while the lock is held; with WFE they
// sleep on it.
template <Delay D, auto Attempt, typename L>
[[gnu::always_inline]] inline void wait_then_acquire(L& lock, typename L::Context& context,
                                                     const std::atomic<std::uint32_t>& word) {
    while (!(lock.*Attempt)(context))
        arch::spin_until<D>(
            word, [](std::uint32_t v) { return v == 0; }, context.stats.spin_iterations);
}

// Slow-path counts. An out-of-line slow path (pg-slock's s_lock, qspinlock's, osq's) takes
// the context's address, so the context lives in memory: counting there puts a load and a
// store (x86: an add to memory) into every poll. Such paths count in two plain local integers
// and add them to the context's AttemptStats when they return. Not in a local struct holding
// both: GCC 12 keeps that in stack memory, to add the pair as one vector at the end.
// loop_disasm_test.cpp checks the loops.

// How a lock's lock() counts its read-modify-writes in AttemptStats::rmw_attempts (try_lock()
// always counts its own). What lock() leaves out, the measured loop adds once the trial is over
// (rmw_attempts() below), so that no count the real lock does not keep costs the loop a register
// or a memory access:
enum class RmwCounting {
    counted,          // every one (the default)
    first_uncounted,  // all but the inlined first try: pg-slock, whose context is in memory
    one_per_poll,     // none: one per call and one per spin (retry_acquire: tas, cas)
};

template <typename L>
constexpr RmwCounting rmw_counting() {
    if constexpr (requires { L::kRmwCounting; })
        return L::kRmwCounting;
    else
        return RmwCounting::counted;
}

// The read-modify-writes a context issued in `lock_calls` calls of lock() and any calls of
// try_lock().
template <typename L>
constexpr std::uint64_t rmw_attempts(const AttemptStats& stats, std::uint64_t lock_calls) {
    switch (rmw_counting<L>()) {
        case RmwCounting::counted:
            break;
        case RmwCounting::first_uncounted:
            return stats.rmw_attempts + lock_calls;
        case RmwCounting::one_per_poll:
            return stats.rmw_attempts + lock_calls + stats.spin_iterations;
    }
    return stats.rmw_attempts;
}

// Asserts the layout rules every lock keeps: the shared state starts a cache line and does not
// share it with anything else, so measured contention is the lock's own.
#define LOCKPROF_ASSERT_LOCK_LAYOUT(Type)                           \
    static_assert(alignof(Type) >= ::lockprof::arch::kCacheLine,    \
                  #Type " must be cache-line aligned");             \
    static_assert(sizeof(Type) % ::lockprof::arch::kCacheLine == 0, \
                  #Type " must fill whole cache lines")

}  // namespace lockprof::locks
