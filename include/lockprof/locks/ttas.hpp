// ttas: test, then test-and-set. Waits with plain loads while the lock is held and only
// exchanges once it has seen it free: the shape of PostgreSQL's TAS_SPIN on x86_64 (every
// release) and on arm64 in PostgreSQL 18.4, 17.12 and 15.20 (pg18-slock models the real thing).
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) TtasLock {
    static constexpr std::string_view kName = "ttas";
    static constexpr std::string_view kDescription =
        "load until free, then exchange (TAS_SPIN's shape: PostgreSQL 18 on arm64, x86_64)";
    static constexpr std::string_view kRmwNoun = "atomic exchanges";
    static constexpr DelayMask kDelays = kWaitDelays;

    struct Context {
        AttemptStats stats;
    };

    bool try_lock(Context& c) { return word_.load(std::memory_order_relaxed) == 0 && exchange(c); }
    void lock(Context& c) { wait_then_acquire<D, &TtasLock::exchange>(*this, c, word_); }
    void unlock(Context&) { word_.store(0, std::memory_order_release); }

  private:
    bool exchange(Context& c) {
        ++c.stats.rmw_attempts;
        return word_.exchange(1, std::memory_order_acquire) == 0;
    }

    std::atomic<std::uint32_t> word_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
