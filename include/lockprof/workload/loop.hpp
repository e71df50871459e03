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

// The lock as the loop allocates it, with the harness's words right after it (kernel.hpp).
template <typename LockT>
struct LockSlot : LockT {
    NeighbourWords words;
};

// The critical section, between the lock's acquire and its release: increments of the shared
// lines and the busy work, with the exclusion check around them (kCheck; see measured_loop).
// Counts an overlap when another holder was seen inside. A function of its own, always
// inlined, so that DWARF names the phase of every instruction (sampling/phases.hpp: the
// flamegraph's "critical section"); the code is what it would be written inline.
template <bool kCheck>
[[gnu::always_inline]] inline void critical_section(std::atomic<std::uint64_t>& check,
                                                    SharedLine* lines, unsigned line_count,
                                                    std::uint64_t critical_iterations,
                                                    std::uint64_t& overlaps) {
    std::uint64_t entry = 0;
    if constexpr (kCheck) entry = check.load(std::memory_order_relaxed);

    // Relaxed load + store rather than fetch_add: inside a working lock this is exactly a
    // plain increment (and moves the line like one). Line 0 is the check word.
    if constexpr (!kCheck)
        if (line_count > 0)
            check.store(check.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    for (unsigned i = 1; i < line_count; ++i) {
        auto& v = lines[i].value;
        v.store(v.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    arch::burn(critical_iterations);
    if constexpr (kCheck) {
        overlaps += check.load(std::memory_order_relaxed) != entry;
        check.store(entry + 1, std::memory_order_relaxed);
    }
}

// The busy work outside the lock, always inlined for the same reason ("parallel work").
[[gnu::always_inline]] inline void parallel_work(std::uint64_t parallel_iterations) {
    arch::burn(parallel_iterations);
}

// lockhammer's loop: acquire, critical work on shared lines, release, parallel work. The lock
// calls are direct (LockT is a concrete type), so nothing indirect runs per iteration.
//
// Exclusion is checked on every acquire of a lock that claims to exclude, with the check word:
// shared line 0 (with --data same-line, or no shared lines, a word next to the lock on the
// lock's own cache line: NeighbourWords). The holder
// loads it on entry, does the critical work, loads it again and stores the entry value + 1
// just before the release. A second holder that entered in between either stored first (the
// exit load differs: an overlap, counted per thread) or read the same entry value (one of the
// two increments is lost: the harness compares the word with the acquire count). The window is
// the whole critical section, so a long one is caught nearly always; relaxed loads and a store
// to a line the holder moves anyway, no atomic read-modify-write.
template <typename LockT, bool kLatency>
void measured_loop(void* lock_storage, const LoopArgs& args) {
    auto& slot = *static_cast<LockSlot<LockT>*>(lock_storage);
    LockT& lock = slot;
    typename LockT::Context context;
    seed_context(context, args.seed);
    ThreadResult& result = *args.result;
    // Copies of what the loop reads: it stores through pointers the compiler cannot tell apart
    // from `args`, which would otherwise be reloaded every trip.
    const std::atomic<bool>& stop = *args.stop;
    std::atomic<std::uint64_t>& progress = args.progress->acquires;
    SharedLine* const lines = args.lines;
    const unsigned line_count = args.line_count;
    const std::uint64_t acquire_limit = args.acquire_limit;
    const std::uint64_t critical_iterations = args.critical_iterations;
    const std::uint64_t parallel_iterations = args.parallel_iterations;
    constexpr bool kCheck = locks::excludes<LockT>();
    std::atomic<std::uint64_t>& check =
        line_count > 0 && !args.first_line_on_lock ? lines[0].value : slot.words.datum;
    std::uint64_t acquires = 0, overlaps = 0;

    while (acquires < acquire_limit && !stop.load(std::memory_order_relaxed)) {
        std::uint64_t before = 0, acquired = 0;
        if constexpr (kLatency) before = arch::ticks();
        lock.lock(context);
        if constexpr (kLatency) acquired = arch::ticks();
        critical_section<kCheck>(check, lines, line_count, critical_iterations, overlaps);
        lock.unlock(context);
        // Recorded after the release: the histogram update (bucket, count, total, max) would
        // otherwise lengthen the critical section, and latency runs would measure a different
        // workload than throughput runs. tests/unit/workload/loop_disasm_test.cpp checks it.
        if constexpr (kLatency) {
            arch::compute_after_here(acquired);
            result.latency.record(acquired - before);
        }

        ++acquires;
        progress.store(acquires, std::memory_order_relaxed);
        parallel_work(parallel_iterations);
    }
    result.acquires = acquires;
    result.overlaps = overlaps;
    result.rmw_attempts = context.stats.rmw_attempts;
    result.spin_iterations = context.stats.spin_iterations;
    result.sleeps = context.stats.sleeps;
}

// The lock's acquire path out of line, for `lockprof list-locks --disasm`. In measured_loop the
// inlined lock() is scheduled together with the loop's own code, so there is no clean span to
// show; this copy is compiled in the same flavour unit with the same flags, so it holds the
// instructions the flavour really uses. It is never called: make_kernel() keeps its address in
// LoopKernel::acquire_probe, which list-locks resolves to the symbol and its code.
template <typename LockT>
[[gnu::noinline, gnu::used]] void acquire_probe(LockT& lock, typename LockT::Context& context) {
    lock.lock(context);
}

template <typename LockT>
void* create_lock() {
    return new LockSlot<LockT>();
}
template <typename LockT>
void destroy_lock(void* lock) {
    delete static_cast<LockSlot<LockT>*>(lock);
}
template <typename LockT>
NeighbourWords* neighbour_words(void* lock) {
    return &static_cast<LockSlot<LockT>*>(lock)->words;
}

template <typename LockT, bool kLatency>
LoopKernel make_kernel() {
    return LoopKernel{&create_lock<LockT>, &destroy_lock<LockT>, &measured_loop<LockT, kLatency>,
                      &neighbour_words<LockT>,
                      reinterpret_cast<const void*>(&acquire_probe<LockT>)};
}

}  // namespace lockprof::workload::inline LOCKPROF_FLAVOUR_NS
