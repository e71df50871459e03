// cas: compare-and-swap 0 -> 1, retried until it succeeds: the arm64 patch proposed in the 2020
// pgsql-hackers thread. PostgreSQL did not adopt it (18.4 still uses TAS, see pg_slock.hpp).
//
// On ARMv8.0 LL/SC the strong compare-exchange is `ldaxr; cmp; b.ne out; stxr`: when the lock
// is held it leaves without storing, so waiters share the line instead of fighting for it.
// With LSE it is one `casa`, which (unlike the LL/SC form) may still take the line exclusive.
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) CasLock {
    static constexpr std::string_view kName = "cas";
    static constexpr std::string_view kDescription =
        "compare-exchange 0->1 until it succeeds (the arm64 patch of the 2020 thread, unmerged)";
    static constexpr std::string_view kRmwNoun = "compare-and-swaps";
    static constexpr DelayMask kDelays = kStepDelays;

    struct Context {
        AttemptStats stats;
    };

    // lock() counts only its spins: every one is another compare-exchange (lock.hpp).
    static constexpr RmwCounting kRmwCounting = RmwCounting::one_per_poll;

    bool try_lock(Context& c) {
        ++c.stats.rmw_attempts;
        return compare_exchange();
    }
    void lock(Context& c) { retry_acquire<D, &CasLock::compare_exchange>(*this, c); }
    void unlock(Context&) { word_.store(0, std::memory_order_release); }

  private:
    bool compare_exchange() {
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
