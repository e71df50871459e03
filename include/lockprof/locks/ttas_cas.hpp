// ttas-cas: load until the lock looks free, then compare-and-swap 0 -> 1.
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) TtasCasLock {
    static constexpr std::string_view kName = "ttas-cas";
    static constexpr std::string_view kDescription = "load until free, then compare-exchange 0->1";
    static constexpr std::string_view kRmwNoun = "compare-and-swaps";
    static constexpr DelayMask kDelays = kWaitDelays;

    struct Context {
        AttemptStats stats;
    };

    bool try_lock(Context& c) {
        return word_.load(std::memory_order_relaxed) == 0 && compare_exchange(c);
    }
    void lock(Context& c) {
        wait_then_acquire<D>(
            word_, [&] { return compare_exchange(c); }, c.stats);
    }
    void unlock(Context&) { word_.store(0, std::memory_order_release); }

  private:
    bool compare_exchange(Context& c) {
        ++c.stats.rmw_attempts;
        std::uint32_t expected = 0;
        return word_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                             std::memory_order_relaxed);
    }

    std::atomic<std::uint32_t> word_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
