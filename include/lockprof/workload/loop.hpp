// The measured loop, instantiated per lock type. Include this only from a flavour translation
// unit (src/workload/kernels.cpp) or from tests.
#pragma once

#include <cstdint>
#include <new>

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

// The lock as a trial builds it (create_lock), with the harness's words right after it
// (kernel.hpp).
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

// The exclusion check of a lock with a shared mode (locks::SharedLock), where readers must not
// write the check word. A writer marks the word odd for the whole of its critical section: it
// loads the word on entry (odd: another writer is inside), stores it with the low bit set, does
// the critical work, loads it again (changed: another holder stored meanwhile) and stores the
// next even value, entry + 2, before the release. So the word ends at twice the write acquires
// unless writers overlapped (the trial counts the shortfall as lost updates).
[[gnu::always_inline]] inline void write_section(std::atomic<std::uint64_t>& check,
                                                 SharedLine* lines, unsigned line_count,
                                                 std::uint64_t critical_iterations,
                                                 std::uint64_t& overlaps) {
    const std::uint64_t entry = check.load(std::memory_order_relaxed);
    overlaps += entry & 1;
    const std::uint64_t marked = entry | 1;
    check.store(marked, std::memory_order_relaxed);
    for (unsigned i = 1; i < line_count; ++i) {
        auto& v = lines[i].value;
        v.store(v.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    arch::burn(critical_iterations);
    overlaps += check.load(std::memory_order_relaxed) != marked;
    check.store(marked + 1, std::memory_order_relaxed);
}

// A reader's critical section: loads of the shared lines (no stores: readers share them) and
// the busy work. Its check only reads the word: odd on entry means a writer is inside, a
// different value at exit means a writer entered (or left) while the reader was inside; either
// is an overlap. A writer inside for the reader's whole stay is seen by its odd mark.
[[gnu::always_inline]] inline void read_section(const std::atomic<std::uint64_t>& check,
                                                SharedLine* lines, unsigned line_count,
                                                std::uint64_t critical_iterations,
                                                std::uint64_t& overlaps) {
    const std::uint64_t entry = check.load(std::memory_order_relaxed);
    overlaps += entry & 1;
    for (unsigned i = 1; i < line_count; ++i)
        static_cast<void>(lines[i].value.load(std::memory_order_relaxed));
    arch::burn(critical_iterations);
    overlaps += check.load(std::memory_order_relaxed) != entry;
}

// The per-thread read/write mix of `--read-fraction`: xorshift64* from the thread's mix seed;
// an acquire is shared when the top 53 bits of the draw fall below LoopArgs::read_threshold.
[[gnu::always_inline]] inline bool draw_shared(std::uint64_t& state, std::uint64_t threshold) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return ((state * 0x2545F4914F6CDD1Dull) >> 11) < threshold;
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
    // Locks with a shared mode take --read-fraction of their acquires shared (draw_shared);
    // every other lock takes all of them exclusive and draws nothing.
    constexpr bool kShared = locks::has_shared<LockT>();
    static_assert(!kShared || kCheck, "a reader-writer lock excludes its writers");
    const std::uint64_t read_threshold = args.read_threshold;
    std::uint64_t mix = args.mix_seed, reads = 0;

    while (acquires < acquire_limit && !stop.load(std::memory_order_relaxed)) {
        // With --latency, the acquire's latency in ticks is taken as soon as the lock is held:
        // one register live through the critical section rather than two timestamps, so the
        // latency loop holds the lock with the same registers, and no more spills, than the
        // throughput loop (loop_disasm_test.cpp).
        std::uint64_t before = 0, latency = 0;
        bool shared = false;
        if constexpr (kShared) shared = read_threshold != 0 && draw_shared(mix, read_threshold);
        if constexpr (kLatency) before = arch::ticks();
        if constexpr (kShared) {
            if (shared) {
                lock.lock_shared(context);
                if constexpr (kLatency) latency = arch::ticks() - before;
                read_section(check, lines, line_count, critical_iterations, overlaps);
                lock.unlock_shared(context);
                ++reads;
            } else {
                lock.lock(context);
                if constexpr (kLatency) latency = arch::ticks() - before;
                write_section(check, lines, line_count, critical_iterations, overlaps);
                lock.unlock(context);
            }
        } else {
            lock.lock(context);
            if constexpr (kLatency) latency = arch::ticks() - before;
            critical_section<kCheck>(check, lines, line_count, critical_iterations, overlaps);
            lock.unlock(context);
        }
        // Recorded after the release: the histogram update (bucket, count, total, max) would
        // otherwise lengthen the critical section, and latency runs would measure a different
        // workload than throughput runs. tests/unit/workload/loop_disasm_test.cpp checks it.
        if constexpr (kLatency) {
            arch::compute_after_here(latency);
            result.latency.record(latency);
            if (shared) result.read_latency.record(latency);
        }

        ++acquires;
        progress.store(acquires, std::memory_order_relaxed);
        parallel_work(parallel_iterations);
    }
    result.acquires = acquires;
    result.overlaps = overlaps;
    result.read_acquires = reads;
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

// The lock is built in memory the trial provides (workload/lock_page.hpp: the heap, or a huge
// page), so where it lives is chosen once for every lock type; these only construct and destroy.
template <typename LockT>
void* create_lock(void* storage) {
    return new (storage) LockSlot<LockT>();
}
template <typename LockT>
void destroy_lock(void* lock) {
    static_cast<LockSlot<LockT>*>(lock)->~LockSlot<LockT>();
}
template <typename LockT>
NeighbourWords* neighbour_words(void* lock) {
    return &static_cast<LockSlot<LockT>*>(lock)->words;
}

template <typename LockT, bool kLatency>
LoopKernel make_kernel() {
    return LoopKernel{&create_lock<LockT>,
                      &destroy_lock<LockT>,
                      &measured_loop<LockT, kLatency>,
                      &neighbour_words<LockT>,
                      reinterpret_cast<const void*>(&acquire_probe<LockT>),
                      sizeof(LockSlot<LockT>),
                      alignof(LockSlot<LockT>)};
}

}  // namespace lockprof::workload::inline LOCKPROF_FLAVOUR_NS
