// tas: test-and-set by atomic exchange (acquire), retried until it returns "free".
//
// The TAS-only spin of the 2020 thread: on ARMv8.0 the exchange is an LL/SC loop
// `ldaxr; stxr; cbnz` that stores even while the lock is held, so every waiting thread keeps
// pulling the lock's cache line in exclusive state. With LSE it is one `swpa`. PostgreSQL's own
// arm64 TAS (every release) is __sync_lock_test_and_set, `ldxr; stxr; cbnz; dmb ish`: that and
// its TAS_SPIN, delays and sleeps are pg13-slock and its siblings (pg_slock.hpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) TasLock {
    static constexpr std::string_view kName = "tas";
    static constexpr std::string_view kDescription =
        "exchange (acquire) until it returns free: a TAS-only spin (PostgreSQL's: pg*-slock)";
    static constexpr std::string_view kRmwNoun = "atomic exchanges";
    static constexpr DelayMask kDelays = kStepDelays;

    struct Context {
        AttemptStats stats;
    };

    // lock() counts only its spins: every one is another exchange (lock.hpp).
    static constexpr RmwCounting kRmwCounting = RmwCounting::one_per_poll;

    bool try_lock(Context& c) {
        ++c.stats.rmw_attempts;
        return exchange();
    }
    void lock(Context& c) { retry_acquire<D, &TasLock::exchange>(*this, c); }
    void unlock(Context&) { word_.store(0, std::memory_order_release); }

  private:
    bool exchange() { return word_.exchange(1, std::memory_order_acquire) == 0; }

    std::atomic<std::uint32_t> word_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
