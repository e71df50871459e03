// The compile-time list of every lock algorithm. Adding a lock: write its header (see tas.hpp),
// include it here and append it to AllLocks. The runner, list-locks, the typed tests and the
// aarch64 flavours all iterate this list. Entries are templates of the delay policy alone: a
// lock with more parameters (QspinLockT's slots, OsqLockT's budget, PgSlock's release) enters
// through an alias template of the delay (QspinLock, Pg13SlockLock).
#pragma once

#include "lockprof/locks/backoff.hpp"
#include "lockprof/locks/cas.hpp"
#include "lockprof/locks/clh.hpp"
#include "lockprof/locks/empty.hpp"
#include "lockprof/locks/event_mutex.hpp"
#include "lockprof/locks/lockref.hpp"
#include "lockprof/locks/mcs.hpp"
#include "lockprof/locks/osq.hpp"
#include "lockprof/locks/pg_slock.hpp"
#include "lockprof/locks/pthread_locks.hpp"
#include "lockprof/locks/pthread_trylock.hpp"
#include "lockprof/locks/qspinlock.hpp"
#include "lockprof/locks/rw_cas.hpp"
#include "lockprof/locks/spin_rw.hpp"
#include "lockprof/locks/tas.hpp"
#include "lockprof/locks/ticket.hpp"
#include "lockprof/locks/ttas.hpp"
#include "lockprof/locks/ttas_cas.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

// A list of lock templates (each parameterised by its delay policy).
template <template <Delay> class... Locks>
struct LockList {};

using AllLocks =
    LockList<TasLock, TtasLock, CasLock, TtasCasLock, TasBackoffLock, TtasBackoffLock, TicketLock,
             McsLock, ClhLock, PgSlockLock, Pg13SlockLock, Pg15SlockLock, Pg18SlockLock,
             PthreadSpinLock, PthreadMutexLock, EmptyLock, QspinLock, OsqLock, PthreadTrylockLock,
             EventMutexLock, RwCasLock, SpinRwLock, LockrefLock, RefcountLock>;

// Whether a lock provides mutual exclusion (all but the `empty` baseline).
template <typename L>
constexpr bool excludes() {
    if constexpr (requires { L::kExcludes; })
        return L::kExcludes;
    else
        return true;
}

// Whether a lock's code is the same in every ISA flavour (the C library's locks, no lock):
// then it is listed and run once, under its bare name (workload/runnable_locks.cpp).
template <typename L>
constexpr bool flavour_independent() {
    if constexpr (requires { L::kFlavourIndependent; })
        return L::kFlavourIndependent;
    else
        return false;
}

// try_lock out of line, once per lock and ISA flavour, so tests/aarch64/flavour_disasm_test.cpp
// can check the instructions each flavour's try_lock really uses (the measured loop only calls
// lock()). Never called; `used` keeps the copy that check_lock() below instantiates.
template <typename L>
[[gnu::noinline, gnu::used]] bool try_lock_probe(L& lock, typename L::Context& context) {
    return lock.try_lock(context);
}

// Every instantiation must satisfy the concept and the layout rules, and name what one of its
// rmw_attempts is (kRmwNoun: "atomic exchanges"), which the explanation quotes.
template <template <Delay> class L>
constexpr bool check_lock() {
    static_assert(Lock<L<Delay::none>>);
    static_assert(
        requires {
            { L<Delay::none>::kRmwNoun } -> std::convertible_to<std::string_view>;
        },
        "a lock names its read-modify-write in kRmwNoun");
    LOCKPROF_ASSERT_LOCK_LAYOUT(L<Delay::none>);
    static_cast<void>(&try_lock_probe<L<Delay::none>>);
    return true;
}
template <template <Delay> class... Ls>
constexpr bool check_all(LockList<Ls...>) {
    return (check_lock<Ls>() && ...);
}
static_assert(check_all(AllLocks{}));

// What one of `algorithm`'s rmw_attempts is called in a sentence, from its header's kRmwNoun;
// empty when no lock of this build has that name (a result file written by another version).
template <template <Delay> class... Ls>
constexpr std::string_view rmw_noun_in(std::string_view algorithm, LockList<Ls...>) {
    std::string_view noun;
    static_cast<void>(
        ((algorithm == Ls<Delay::none>::kName ? (noun = Ls<Delay::none>::kRmwNoun, true) : false) ||
         ...));
    return noun;
}
constexpr std::string_view rmw_noun(std::string_view algorithm) {
    return rmw_noun_in(algorithm, AllLocks{});
}

// Whether a lock is a queue lock (kQueue: mcs, clh, qspinlock, osq): each queued waiter polls a
// node no other waiter polls (its own; CLH's, its predecessor's), not the lock word, and the
// explanation's queue rule reads its figures so.
template <typename L>
constexpr bool queue_lock() {
    if constexpr (requires { L::kQueue; })
        return L::kQueue;
    else
        return false;
}

// queue_lock() and has_shared() of the lock named `algorithm` (false for names no lock has:
// result files of other versions).
template <template <Delay> class... Ls>
constexpr bool is_queue_lock_in(std::string_view algorithm, LockList<Ls...>) {
    return ((algorithm == Ls<Delay::none>::kName && queue_lock<Ls<Delay::none>>()) || ...);
}
constexpr bool is_queue_lock(std::string_view algorithm) {
    return is_queue_lock_in(algorithm, AllLocks{});
}
template <template <Delay> class... Ls>
constexpr bool has_shared_mode_in(std::string_view algorithm, LockList<Ls...>) {
    return ((algorithm == Ls<Delay::none>::kName && has_shared<Ls<Delay::none>>()) || ...);
}
constexpr bool has_shared_mode(std::string_view algorithm) {
    return has_shared_mode_in(algorithm, AllLocks{});
}

// flavour_independent() of the lock named `algorithm` (false for names no lock has).
template <template <Delay> class... Ls>
constexpr bool is_flavour_independent_in(std::string_view algorithm, LockList<Ls...>) {
    return ((algorithm == Ls<Delay::none>::kName && flavour_independent<Ls<Delay::none>>()) || ...);
}
constexpr bool is_flavour_independent(std::string_view algorithm) {
    return is_flavour_independent_in(algorithm, AllLocks{});
}

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
