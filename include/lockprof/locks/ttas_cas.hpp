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
    void lock(Context& c) { wait_then_acquire<D, &TtasCasLock::compare_exchange>(*this, c, word_); }
    void unlock(Context&) { word_.store(0, std::memory_order_release); }

  private:
    bool compare_exchange(Context& c) {
        ++c.stats.rmw_attempts;
        std::uint32_t expected = 0;
        // Success read from `expected` (still 0 only if the swap happened: a held lock is
        // never 0) rather than from the flags: GCC 12's sete of the flag result left too few
        // registers on x86 and spilled the spin count (loop_disasm_test.cpp).
        word_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                      std::memory_order_relaxed);
        return expected == 0;
    }

    std::atomic<std::uint32_t> word_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
