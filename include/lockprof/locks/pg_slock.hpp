// pg-slock: PostgreSQL's spinlock (s_lock.h / s_lock.c), written from its published description.
//
//   S_LOCK:  one TAS (no pre-test) on the fast path; on failure enter s_lock().
//   s_lock:  while TAS_SPIN (test, then TAS) fails: SPIN_DELAY(), and after spins_per_delay
//            polls sleep cur_delay microseconds: 1 ms at first, then grown by a random factor in
//            [1, 2) each time, wrapping to 1 ms past 1 s.
//   finish:  adapt spins_per_delay for the next acquire: +100 (up to 1000) if no sleep was
//            needed, -1 (down to 10) if one was. PostgreSQL keeps this per backend; here it is
//            per thread. PostgreSQL aborts as "stuck spinlock" after 1000 sleeps; lockprof's
//            watchdog plays that role instead.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <ctime>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) PgSlockLock {
    static constexpr std::string_view kName = "pg-slock";
    static constexpr std::string_view kDescription =
        "PostgreSQL s_lock: TAS fast path, TAS_SPIN with adaptive spins_per_delay, random sleeps";
    static constexpr std::string_view kRmwNoun = "atomic exchanges";
    static constexpr DelayMask kDelays = kStepDelays;

    static constexpr int kMinSpinsPerDelay = 10;
    static constexpr int kMaxSpinsPerDelay = 1000;
    static constexpr int kDefaultSpinsPerDelay = 100;
    static constexpr long kMinDelayUsec = 1000;
    static constexpr long kMaxDelayUsec = 1000000;

    struct Context {
        AttemptStats stats;
        int spins_per_delay = kDefaultSpinsPerDelay;
        std::uint64_t rng = 0;
        std::uint64_t sleeps = 0;
    };

    bool try_lock(Context& c) { return tas(c); }

    void lock(Context& c) {
        if (tas(c)) return;
        int spins = 0;
        long cur_delay_usec = 0;
        while (!tas_spin(c)) {
            ++c.stats.spin_iterations;
            arch::spin_delay<D>();
            if (++spins >= c.spins_per_delay) {
                if (cur_delay_usec == 0) cur_delay_usec = kMinDelayUsec;
                sleep_usec(cur_delay_usec);
                ++c.sleeps;
                cur_delay_usec += static_cast<long>(cur_delay_usec * random_unit(c) + 0.5);
                if (cur_delay_usec > kMaxDelayUsec) cur_delay_usec = kMinDelayUsec;
                spins = 0;
            }
        }
        if (cur_delay_usec == 0) {
            if (c.spins_per_delay < kMaxSpinsPerDelay)
                c.spins_per_delay = std::min(c.spins_per_delay + 100, kMaxSpinsPerDelay);
        } else if (c.spins_per_delay > kMinSpinsPerDelay) {
            c.spins_per_delay = std::max(c.spins_per_delay - 1, kMinSpinsPerDelay);
        }
    }
    void unlock(Context&) { word_.store(0, std::memory_order_release); }

  private:
    bool tas(Context& c) {
        ++c.stats.rmw_attempts;
        return word_.exchange(1, std::memory_order_acquire) == 0;
    }
    bool tas_spin(Context& c) { return word_.load(std::memory_order_relaxed) == 0 && tas(c); }
    static double random_unit(Context& c) {
        if (c.rng == 0) c.rng = reinterpret_cast<std::uintptr_t>(&c) | 1;
        c.rng ^= c.rng << 13;
        c.rng ^= c.rng >> 7;
        c.rng ^= c.rng << 17;
        return static_cast<double>(c.rng >> 11) * 0x1.0p-53;
    }
    static void sleep_usec(long usec) {
        timespec ts{usec / 1000000, (usec % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }

    std::atomic<std::uint32_t> word_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
