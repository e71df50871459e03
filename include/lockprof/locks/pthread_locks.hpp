// pthread-spin and pthread-mutex: the C library's locks, as a baseline users already know.
// glibc's pthread_spin_lock is a test-and-test-and-set; pthread_mutex_lock spins briefly
// (adaptive only with PTHREAD_MUTEX_ADAPTIVE_NP) and then sleeps in futex().
//
// Both call into glibc, so every ISA flavour runs glibc's one build of them: they are
// flavour-independent (kFlavourIndependent), listed and run once under the bare name.
#pragma once

#include <pthread.h>

#include "lockprof/locks/lock.hpp"

namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS {

template <Delay>
struct alignas(arch::kCacheLine) PthreadSpinLock {
    static constexpr std::string_view kName = "pthread-spin";
    static constexpr std::string_view kDescription = "glibc pthread_spin_lock";
    static constexpr std::string_view kRmwNoun = "atomic operations inside glibc (not counted)";
    static constexpr DelayMask kDelays = kNoDelay;
    static constexpr bool kFlavourIndependent = true;  // glibc's code in every flavour

    struct Context {
        AttemptStats stats;
    };

    PthreadSpinLock() { pthread_spin_init(&lock_, PTHREAD_PROCESS_PRIVATE); }
    ~PthreadSpinLock() { pthread_spin_destroy(&lock_); }
    PthreadSpinLock(const PthreadSpinLock&) = delete;
    PthreadSpinLock& operator=(const PthreadSpinLock&) = delete;

    bool try_lock(Context&) { return pthread_spin_trylock(&lock_) == 0; }
    void lock(Context&) { pthread_spin_lock(&lock_); }
    void unlock(Context&) { pthread_spin_unlock(&lock_); }

  private:
    pthread_spinlock_t lock_;
};

template <Delay>
struct alignas(arch::kCacheLine) PthreadMutexLock {
    static constexpr std::string_view kName = "pthread-mutex";
    static constexpr std::string_view kDescription =
        "glibc pthread_mutex_lock (default type: sleeps in futex when contended)";
    static constexpr std::string_view kRmwNoun = "atomic operations inside glibc (not counted)";
    static constexpr DelayMask kDelays = kNoDelay;
    static constexpr bool kFlavourIndependent = true;  // glibc's code in every flavour

    struct Context {
        AttemptStats stats;
    };

    PthreadMutexLock() { pthread_mutex_init(&mutex_, nullptr); }
    ~PthreadMutexLock() { pthread_mutex_destroy(&mutex_); }
    PthreadMutexLock(const PthreadMutexLock&) = delete;
    PthreadMutexLock& operator=(const PthreadMutexLock&) = delete;

    bool try_lock(Context&) { return pthread_mutex_trylock(&mutex_) == 0; }
    void lock(Context&) { pthread_mutex_lock(&mutex_); }
    void unlock(Context&) { pthread_mutex_unlock(&mutex_); }

  private:
    pthread_mutex_t mutex_;
};

}  // namespace lockprof::locks::inline LOCKPROF_FLAVOUR_NS
