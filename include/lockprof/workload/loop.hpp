// The measured loop, instantiated per lock type. Include this only from a flavour translation
// unit (src/workload/kernels.cpp) or from tests.
#pragma once

#include <cstdint>

#include "lockprof/locks/catalog.hpp"
#include "lockprof/workload/kernel.hpp"

namespace lockprof::workload::inline LOCKPROF_FLAVOUR_NS {

// Seeds the per-thread random state of locks that randomise (backoff, pg-slock sleeps), so
// --seed makes their choices repeatable; other contexts are left alone.
template <typename Context>
void seed_context(Context& context, std::uint64_t seed) {
    if constexpr (requires { context.rng; }) context.rng = seed;
    if constexpr (requires { context.backoff.rng; }) context.backoff.rng = seed;
}

// lockhammer's loop: acquire, critical work on shared lines, release, parallel work. The lock
// calls are direct (LockT is a concrete type), so nothing indirect runs per iteration.
template <typename LockT, bool kLatency>
void measured_loop(void* lock_storage, const LoopArgs& args) {
    LockT& lock = *static_cast<LockT*>(lock_storage);
    typename LockT::Context context;
    seed_context(context, args.seed);
    ThreadResult& result = *args.result;
    const std::atomic<bool>& stop = *args.stop;
    std::uint64_t acquires = 0;

    while (acquires < args.acquire_limit && !stop.load(std::memory_order_relaxed)) {
        std::uint64_t before = 0, acquired = 0;
        if constexpr (kLatency) before = arch::ticks();
        lock.lock(context);
        if constexpr (kLatency) acquired = arch::ticks();

        // Relaxed load + store rather than fetch_add: inside a working lock this is exactly a
        // plain increment (and moves the line like one); under a broken lock it loses updates,
        // which the harness detects by comparing the first line with the acquire count.
        for (unsigned i = 0; i < args.line_count; ++i) {
            auto& v = args.lines[i].value;
            v.store(v.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        }
        arch::burn(args.critical_iterations);
        lock.unlock(context);
        // Recorded after the release: the histogram update (bucket, count, total, max) would
        // otherwise lengthen the critical section, and latency runs would measure a different
        // workload than throughput runs. tests/unit/workload/loop_disasm_test.cpp checks it.
        if constexpr (kLatency) {
            arch::compute_after_here(acquired);
            result.latency.record(acquired - before);
        }

        ++acquires;
        args.progress->acquires.store(acquires, std::memory_order_relaxed);
        arch::burn(args.parallel_iterations);
    }
    result.acquires = acquires;
    result.rmw_attempts = context.stats.rmw_attempts;
    result.spin_iterations = context.stats.spin_iterations;
}

// The lock's acquire path out of line, for `lockprof list-locks --disasm`. In measured_loop the
// inlined lock() is scheduled together with the loop's own code, so there is no clean span to
// show; this copy is compiled in the same flavour unit with the same flags, so it holds the
// instructions the flavour really uses. It is never called: `used` keeps every instantiation
// kernels.cpp names, and list-locks finds it through the measured_loop instantiation's symbol
// (same lock type, same flavour namespace).
template <typename LockT>
[[gnu::noinline, gnu::used]] void acquire_probe(LockT& lock, typename LockT::Context& context) {
    lock.lock(context);
}

template <typename LockT>
void* create_lock() {
    return new LockT();
}
template <typename LockT>
void destroy_lock(void* lock) {
    delete static_cast<LockT*>(lock);
}

template <typename LockT, bool kLatency>
constexpr LoopKernel make_kernel() {
    return LoopKernel{&create_lock<LockT>, &destroy_lock<LockT>, &measured_loop<LockT, kLatency>};
}

}  // namespace lockprof::workload::inline LOCKPROF_FLAVOUR_NS
