// tas-backoff, ttas-backoff: after a failed exchange, wait a random number of delay steps below
// a limit that doubles on every failure up to kMaxSteps (Anderson's exponential backoff). The
// randomness keeps waiters that failed together from retrying together.
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

namespace detail {
struct BackoffState {
    static constexpr std::uint32_t kMinSteps = 4;
    static constexpr std::uint32_t kMaxSteps = 1024;
    std::uint64_t rng = 0;

    template <Delay D>
    void wait(std::uint32_t& limit, AttemptStats& stats) {
        if (rng == 0) rng = reinterpret_cast<std::uintptr_t>(this) | 1;  // unseeded use (tests)
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        const std::uint32_t steps = 1 + static_cast<std::uint32_t>(rng % limit);
        for (std::uint32_t i = 0; i < steps; ++i) arch::spin_delay<D>();
        stats.spin_iterations += steps;
        if (limit < kMaxSteps) limit *= 2;
    }
};
}  // namespace detail

template <Delay D>
struct alignas(arch::kCacheLine) TasBackoffLock {
    static constexpr std::string_view kName = "tas-backoff";
    static constexpr std::string_view kDescription =
        "exchange; on failure wait a random 1..limit delay steps, limit doubling to 1024";
    static constexpr std::string_view kRmwNoun = "atomic exchanges";
    static constexpr DelayMask kDelays = kStepDelays;

    struct Context {
        AttemptStats stats;
        detail::BackoffState backoff;
    };

    bool try_lock(Context& c) {
        ++c.stats.rmw_attempts;
        return word_.exchange(1, std::memory_order_acquire) == 0;
    }
    void lock(Context& c) {
        std::uint32_t limit = detail::BackoffState::kMinSteps;
        while (!try_lock(c)) c.backoff.template wait<D>(limit, c.stats);
    }
    void unlock(Context&) { word_.store(0, std::memory_order_release); }

  private:
    std::atomic<std::uint32_t> word_{0};
};

template <Delay D>
struct alignas(arch::kCacheLine) TtasBackoffLock {
    static constexpr std::string_view kName = "ttas-backoff";
    static constexpr std::string_view kDescription =
        "load until free, exchange; on failure back off exponentially as tas-backoff";
    static constexpr std::string_view kRmwNoun = "atomic exchanges";
    static constexpr DelayMask kDelays = kStepDelays;

    struct Context {
        AttemptStats stats;
        detail::BackoffState backoff;
    };

    bool try_lock(Context& c) {
        if (word_.load(std::memory_order_relaxed) != 0) return false;
        ++c.stats.rmw_attempts;
        return word_.exchange(1, std::memory_order_acquire) == 0;
    }
    void lock(Context& c) {
        std::uint32_t limit = detail::BackoffState::kMinSteps;
        for (;;) {
            while (word_.load(std::memory_order_relaxed) != 0) {
                ++c.stats.spin_iterations;
                arch::spin_delay<D>();
            }
            ++c.stats.rmw_attempts;
            if (word_.exchange(1, std::memory_order_acquire) == 0) return;
            c.backoff.template wait<D>(limit, c.stats);
        }
    }
    void unlock(Context&) { word_.store(0, std::memory_order_release); }

  private:
    std::atomic<std::uint32_t> word_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
