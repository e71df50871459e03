// spin-rw: a TBB-style spin_rw_mutex (oneTBB's spin_rw_mutex, written from the algorithm as its
// documentation and Intel's "Threading Building Blocks" (Reinders 2007, ch. 7) describe it, not
// from its code). One word: bit 0 a writer holds it, bit 1 a writer is waiting, bits 2-31 the
// readers, counted in units of 4. A waiting writer's pending bit turns new readers away, so
// writers are not starved as they are by rw-cas.
//
// lock:          read the word; with no holder (writer bit and readers clear) compare-and-swap it
//                to the writer bit alone (which also clears the pending bit); else, if the
//                pending bit is not set, fetch-or it; a delay step between tries.
// lock_shared:   with neither the writer nor the pending bit set, fetch-and-add 4; if the old
//                value had the writer bit (a writer got in between the read and the add), take
//                the 4 back (fetch-and-subtract) and try again; a delay step between tries.
// try_lock:      one read and at most one compare-and-swap.
// try_lock_shared: one read and at most one fetch-and-add (and its undo).
// unlock:        a release fetch-and of the reader bits (clears writer and pending; a reader's
//                transient 4 may be in the word).
// unlock_shared: a release fetch-and-subtract of 4.
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) SpinRwLock {
    static constexpr std::string_view kName = "spin-rw";
    static constexpr std::string_view kDescription =
        "TBB-style spin_rw_mutex: writer bit, writer-pending bit, readers in units of 4; a "
        "waiting writer turns new readers away (oneTBB spin_rw_mutex algorithm)";
    static constexpr std::string_view kRmwNoun =
        "compare-and-swaps, fetch-and-adds and fetch-and-ors";
    static constexpr DelayMask kDelays = kStepDelays;

    static constexpr std::uint32_t kWriter = 1;
    static constexpr std::uint32_t kWriterPending = 2;
    static constexpr std::uint32_t kOneReader = 4;
    static constexpr std::uint32_t kReaders = ~(kWriter | kWriterPending);
    static constexpr std::uint32_t kBusy = kWriter | kReaders;

    struct Context {
        AttemptStats stats;
    };

    bool try_lock(Context& c) {
        std::uint32_t seen = word_.load(std::memory_order_relaxed);
        if ((seen & kBusy) != 0) return false;
        ++c.stats.rmw_attempts;
        return word_.compare_exchange_strong(seen, kWriter, std::memory_order_acquire,
                                             std::memory_order_relaxed);
    }
    void lock(Context& c) {
        for (;;) {
            std::uint32_t seen = word_.load(std::memory_order_relaxed);
            if ((seen & kBusy) == 0) {
                ++c.stats.rmw_attempts;
                if (word_.compare_exchange_strong(seen, kWriter, std::memory_order_acquire,
                                                  std::memory_order_relaxed))
                    return;
            } else if ((seen & kWriterPending) == 0) {
                ++c.stats.rmw_attempts;
                word_.fetch_or(kWriterPending, std::memory_order_relaxed);
            }
            ++c.stats.spin_iterations;
            arch::spin_delay<D>();
        }
    }
    void unlock(Context&) { word_.fetch_and(kReaders, std::memory_order_release); }

    bool try_lock_shared(Context& c) {
        if ((word_.load(std::memory_order_relaxed) & (kWriter | kWriterPending)) != 0) return false;
        ++c.stats.rmw_attempts;
        if ((word_.fetch_add(kOneReader, std::memory_order_acquire) & kWriter) == 0) return true;
        ++c.stats.rmw_attempts;
        word_.fetch_sub(kOneReader, std::memory_order_relaxed);
        return false;
    }
    void lock_shared(Context& c) {
        while (!try_lock_shared(c)) {
            ++c.stats.spin_iterations;
            arch::spin_delay<D>();
        }
    }
    void unlock_shared(Context&) { word_.fetch_sub(kOneReader, std::memory_order_release); }

  private:
    std::atomic<std::uint32_t> word_{0};
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
