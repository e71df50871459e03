// empty: no lock at all. Measures the harness itself (loop, work, bookkeeping) so every other
// lock's figures can be read against it. It does not exclude: never use it for correctness.
#pragma once

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay>
struct alignas(arch::kCacheLine) EmptyLock {
    static constexpr std::string_view kName = "empty";
    static constexpr std::string_view kDescription =
        "no lock: the harness baseline (does not exclude)";
    static constexpr std::string_view kRmwNoun = "atomic operations (none: no lock)";
    static constexpr DelayMask kDelays = kNoDelay;
    static constexpr bool kExcludes = false;
    static constexpr bool kFlavourIndependent = true;  // no atomics to compile differently

    struct Context {
        AttemptStats stats;
    };

    bool try_lock(Context&) { return true; }
    void lock(Context&) {}
    void unlock(Context&) {}

  private:
    char unused_ = 0;
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
