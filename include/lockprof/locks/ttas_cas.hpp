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
    static constexpr DelayMask kDelays = kWaitDelays;

    struct Context {
        AttemptStats stats;
    };

    bool try_lock(Context& c) {
        if (word_.load(std::memory_order_relaxed) != 0) return false;
        ++c.stats.rmw_attempts;
        std::uint32_t expected = 0;
        return word_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                             std::memory_order_relaxed);
    }
    void lock(Context& c) {
        for (;;) {
            ++c.stats.rmw_attempts;
            std::uint32_t expected = 0;
            if (word_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                              std::memory_order_relaxed))
                return;
            arch::spin_until<D>(word_, [](std::uint32_t v) { return v == 0; },
                                c.stats.spin_iterations);
        }
    }
    void unlock(Context&) { word_.store(0, std::memory_order_release); }

private:
    std::atomic<std::uint32_t> word_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
