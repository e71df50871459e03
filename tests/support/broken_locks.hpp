// Test-only locks that break mutual exclusion on purpose, and a RunnableLock made of one, for the
// tests that prove the harness catches them (trial_test.cpp, sweep_test.cpp). None is in the
// catalog.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

#include "lockprof/workload/runnable_locks.hpp"
#include "lockprof/workload/loop.hpp"

namespace lockprof::workload::test_locks {

// A "lock" that claims to exclude but does not.
template <arch::Delay D>
struct alignas(arch::kCacheLine) NotExcluding {
    static constexpr std::string_view kName = "not-excluding";
    static constexpr std::string_view kDescription = "test: excludes nothing";
    static constexpr locks::DelayMask kDelays = locks::kNoDelay;
    struct Context {
        locks::AttemptStats stats;
    };
    bool try_lock(Context&) { return true; }
    void lock(Context&) { std::this_thread::yield(); }  // invite interleaving
    void unlock(Context&) {}
};

// A broken lock that admits two holders at once (a semaphore of two), and counts the entries
// it let in while another holder was inside: what the harness's exclusion check must see.
// Test-only: it is not in the catalog.
template <arch::Delay D>
struct alignas(arch::kCacheLine) TwoHolders {
    static constexpr std::string_view kName = "two-holders";
    static constexpr std::string_view kDescription = "test: admits two holders";
    static constexpr locks::DelayMask kDelays = locks::kNoDelay;
    struct Context {
        locks::AttemptStats stats;
    };
    bool try_lock(Context&) {
        unsigned inside = holders_.load(std::memory_order_relaxed);
        while (inside < 2)
            if (holders_.compare_exchange_weak(inside, inside + 1, std::memory_order_acquire)) {
                if (inside == 1) overlapping_entries.fetch_add(1, std::memory_order_relaxed);
                return true;
            }
        return false;
    }
    void lock(Context& c) {
        while (!try_lock(c)) {
        }
    }
    void unlock(Context&) { holders_.fetch_sub(1, std::memory_order_release); }

    static inline std::atomic<std::uint64_t> overlapping_entries{0};

  private:
    std::atomic<unsigned> holders_{0};
};

// A broken reader-writer lock: writers exclude each other, but its shared mode takes nothing,
// so readers run beside a writer. The shared-mode exclusion check (loop.hpp's read_section and
// write_section) must see it. Test-only: it is not in the catalog.
template <arch::Delay D>
struct alignas(arch::kCacheLine) ReadersIgnoreWriters {
    static constexpr std::string_view kName = "readers-ignore-writers";
    static constexpr std::string_view kDescription = "test: shared mode excludes nothing";
    static constexpr locks::DelayMask kDelays = locks::kNoDelay;
    struct Context {
        locks::AttemptStats stats;
    };
    bool try_lock(Context&) { return !held_.exchange(true, std::memory_order_acquire); }
    void lock(Context& c) {
        while (!try_lock(c)) {
        }
    }
    void unlock(Context&) { held_.store(false, std::memory_order_release); }
    bool try_lock_shared(Context&) { return true; }
    void lock_shared(Context&) {}
    void unlock_shared(Context&) {}

  private:
    std::atomic<bool> held_{false};
};

template <template <arch::Delay> class L>
inline RunnableLock test_lock() {
    RunnableLock lock;
    lock.shared = locks::has_shared<L<arch::Delay::none>>();
    lock.name = lock.algorithm = std::string(L<arch::Delay::none>::kName);
    lock.delays = locks::kNoDelay;
    lock.kernels[0][0] = make_kernel<L<arch::Delay::none>, false>();
    lock.kernels[0][1] = make_kernel<L<arch::Delay::none>, true>();
    return lock;
}

}  // namespace lockprof::workload::test_locks
