// rw-cas: the simple reader-preference reader-writer spinlock, one 32-bit word holding a writer
// bit and a reader count, every change a compare-and-swap. Written from the algorithm of
// Mellor-Crummey and Scott, "Scalable reader-writer synchronization for shared-memory
// multiprocessors" (PPoPP 1991), section 2 (a counter with a writer flag), laid out as the arm64
// Linux kernel's arch_rwlock_t was before queued rwlocks (arch/arm64/include/asm/spinlock.h,
// v4.x: bit 31 the writer, bits 0-30 the readers), not copied from either.
//
// lock:          wait with loads until the word is 0 (no writer, no reader), then compare-and-
//                swap 0 -> writer bit; retry on failure.
// lock_shared:   wait until the writer bit is clear, then compare-and-swap count -> count + 1;
//                retry on failure (another reader or a writer changed the word).
// try_lock(_shared): one load and at most one compare-and-swap.
// unlock:        a release store of 0 (no reader can have entered while the writer bit was set).
// unlock_shared: a release fetch-and-subtract of 1.
//
// Readers never wait for a writer that only wants the lock, so a stream of readers can starve
// writers: the reader-preference trade the explanation measures (writer latency against reader
// throughput).
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) RwCasLock {
    static constexpr std::string_view kName = "rw-cas";
    static constexpr std::string_view kDescription =
        "reader-writer spinlock, writer bit + reader count in one word, CAS only (Mellor-Crummey "
        "& Scott 1991 sec. 2; pre-qrwlock arm64 arch_rwlock_t)";
    static constexpr std::string_view kRmwNoun = "compare-and-swaps";
    static constexpr DelayMask kDelays = kWaitDelays;
    static constexpr std::uint32_t kWriter = std::uint32_t{1} << 31;

    struct Context {
        AttemptStats stats;
    };

    bool try_lock(Context& c) {
        return word_.load(std::memory_order_relaxed) == 0 && cas(0, kWriter, c);
    }
    void lock(Context& c) { wait_then_acquire<D, &RwCasLock::acquire_writer>(*this, c, word_); }
    void unlock(Context&) { word_.store(0, std::memory_order_release); }

    bool try_lock_shared(Context& c) {
        const std::uint32_t seen = word_.load(std::memory_order_relaxed);
        return (seen & kWriter) == 0 && cas(seen, seen + 1, c);
    }
    void lock_shared(Context& c) {
        std::uint32_t seen = word_.load(std::memory_order_relaxed);
        for (;;) {
            if ((seen & kWriter) != 0)
                seen = arch::spin_until<D>(
                    word_, [](std::uint32_t v) { return (v & kWriter) == 0; },
                    c.stats.spin_iterations);
            if (cas(seen, seen + 1, c)) return;
            seen = word_.load(std::memory_order_relaxed);
        }
    }
    void unlock_shared(Context&) { word_.fetch_sub(1, std::memory_order_release); }

  private:
    bool acquire_writer(Context& c) { return cas(0, kWriter, c); }
    bool cas(std::uint32_t expected, std::uint32_t desired, Context& c) {
        ++c.stats.rmw_attempts;
        return word_.compare_exchange_strong(expected, desired, std::memory_order_acquire,
                                             std::memory_order_relaxed);
    }

    std::atomic<std::uint32_t> word_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
