// tas: test-and-set by atomic exchange, retried until it returns "free".
//
// PostgreSQL's arm64 TAS before 2020 (__sync_lock_test_and_set). On ARMv8.0 the exchange is an
// LL/SC loop `ldxr; stxr; cbnz` that stores even while the lock is held, so every waiting
// thread keeps pulling the lock's cache line in exclusive state. With LSE it is one `swpa`.
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) TasLock {
    static constexpr std::string_view kName = "tas";
    static constexpr std::string_view kDescription =
        "exchange until it returns free (PostgreSQL arm64 TAS before 2020)";
    static constexpr std::string_view kRmwNoun = "atomic exchanges";
    static constexpr DelayMask kDelays = kStepDelays;

    struct Context {
        AttemptStats stats;
    };

    bool try_lock(Context& c) {
        ++c.stats.rmw_attempts;
        return word_.exchange(1, std::memory_order_acquire) == 0;
    }
    void lock(Context& c) {
        retry_acquire<D>([&] { return try_lock(c); }, c.stats);
    }
    void unlock(Context&) { word_.store(0, std::memory_order_release); }

  private:
    std::atomic<std::uint32_t> word_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
