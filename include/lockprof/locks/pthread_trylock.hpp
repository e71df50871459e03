// pthread-trylock: spin on glibc's pthread_mutex_trylock until it succeeds, a delay step between
// tries; release with pthread_mutex_unlock. A spinlock built from the C library's mutex, as
// lockhammer measures one: no thread ever sleeps in the mutex (nobody calls pthread_mutex_lock),
// so the unlock never has anyone to wake, and each try is one compare-and-swap inside glibc
// (lll_trylock on a default-type mutex) behind a call.
//
// Its code calls into glibc, whose one build every ISA flavour runs: flavour-independent, listed
// and run once under the bare name. The delay step between tries is lockprof's own code, the
// same instruction in every flavour.
#pragma once

#include <pthread.h>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay D>
struct alignas(arch::kCacheLine) PthreadTrylockLock {
    static constexpr std::string_view kName = "pthread-trylock";
    static constexpr std::string_view kDescription =
        "spin on glibc pthread_mutex_trylock (default mutex type), a delay step between tries";
    static constexpr std::string_view kRmwNoun =
        "pthread_mutex_trylock calls (one compare-and-swap inside glibc each)";
    static constexpr DelayMask kDelays = kStepDelays;
    static constexpr bool kFlavourIndependent = true;  // glibc's code in every flavour

    struct Context {
        AttemptStats stats;
    };

    PthreadTrylockLock() { pthread_mutex_init(&mutex_, nullptr); }
    ~PthreadTrylockLock() { pthread_mutex_destroy(&mutex_); }
    PthreadTrylockLock(const PthreadTrylockLock&) = delete;
    PthreadTrylockLock& operator=(const PthreadTrylockLock&) = delete;

    bool try_lock(Context& c) {
        ++c.stats.rmw_attempts;
        return pthread_mutex_trylock(&mutex_) == 0;
    }
    void lock(Context& c) {
        while (!try_lock(c)) {
            ++c.stats.spin_iterations;
            arch::spin_delay<D>();
        }
    }
    void unlock(Context&) { pthread_mutex_unlock(&mutex_); }

  private:
    pthread_mutex_t mutex_;
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
