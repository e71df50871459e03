// ticket: take a number (fetch_add on next), wait until now_serving shows it. FIFO-fair: one
// RMW per acquire however contended, but every release invalidates every waiter's copy.
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) TicketLock {
    static constexpr std::string_view kName = "ticket";
    static constexpr std::string_view kDescription =
        "fetch-add a ticket, wait for now_serving to reach it (FIFO)";
    static constexpr std::string_view kRmwNoun = "fetch-and-adds";
    static constexpr DelayMask kDelays = kWaitDelays;

    struct Context {
        AttemptStats stats;
    };

    bool try_lock(Context& c) {
        std::uint32_t serving = now_serving_.load(std::memory_order_acquire);
        std::uint32_t expected = serving;
        ++c.stats.rmw_attempts;
        return next_.compare_exchange_strong(expected, serving + 1, std::memory_order_acquire,
                                             std::memory_order_relaxed);
    }
    void lock(Context& c) {
        ++c.stats.rmw_attempts;
        const std::uint32_t mine = next_.fetch_add(1, std::memory_order_relaxed);
        arch::spin_until<D>(
            now_serving_, [mine](std::uint32_t v) { return v == mine; }, c.stats.spin_iterations);
    }
    void unlock(Context&) {
        // Only the holder writes now_serving, so a load and a store make the increment.
        now_serving_.store(now_serving_.load(std::memory_order_relaxed) + 1,
                           std::memory_order_release);
    }

  private:
    std::atomic<std::uint32_t> next_{0};
    std::atomic<std::uint32_t> now_serving_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
