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

// One access to a shared datum inside the critical section: a writer's increment, a relaxed
// load + store rather than fetch_add (inside a working lock this is exactly a plain increment,
// and moves the line like one), or a reader's load.
template <bool kWrite>
[[gnu::always_inline]] inline void touch(std::atomic<std::uint64_t>& datum) {
    if constexpr (kWrite)
        datum.store(datum.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    else
        static_cast<void>(datum.load(std::memory_order_relaxed));
}

// Shared lines 1 to line_count - 1; line 0 is each section's own business.
template <bool kWrite>
[[gnu::always_inline]] inline void touch_lines_after_the_first(SharedLine* lines,
                                                               unsigned line_count) {
    for (unsigned i = 1; i < line_count; ++i) touch<kWrite>(lines[i].value);
}

// The critical section of a measured trial, between the lock's acquire and its release: an
// increment of each shared line (`first` is line 0: NeighbourWords::datum with --data
// same-line), then the busy work; a reader (kWrite false, a shared acquire of a reader-writer
// lock) loads the lines instead. Nothing else: the trial compares line 0 with the acquires
// afterwards (trial.cpp), which costs the loop nothing. A function of its own, always inlined,
// so that DWARF names the phase of every instruction (attribution/phases.hpp: the flamegraph's
// "critical section"); the code is what it would be written inline.
template <bool kWrite>
[[gnu::always_inline]] inline void critical_section(std::atomic<std::uint64_t>& first,
                                                    SharedLine* lines, unsigned line_count,
                                                    std::uint64_t critical_iterations) {
    if (line_count > 0) touch<kWrite>(first);
    touch_lines_after_the_first<kWrite>(lines, line_count);
    arch::burn(critical_iterations);
}

// The critical section of a verification trial: the same work, with the exclusion check around
// it (see measured_loop). `check` is line 0, or NeighbourWords::datum when there are no shared
// lines. Counts an overlap when another holder was seen inside. The same name as the measured
// one, so that the phases read the same in both loops.
[[gnu::always_inline]] inline void critical_section(std::atomic<std::uint64_t>& check,
                                                    SharedLine* lines, unsigned line_count,
                                                    std::uint64_t critical_iterations,
                                                    std::uint64_t& overlaps) {
    const std::uint64_t entry = check.load(std::memory_order_relaxed);
    touch_lines_after_the_first<true>(lines, line_count);
    arch::burn(critical_iterations);
    overlaps += check.load(std::memory_order_relaxed) != entry;
    check.store(entry + 1, std::memory_order_relaxed);
}

// The verification check of a lock with a shared mode (locks::SharedLock), where readers must
// not write the check word. A writer marks the word odd for the whole of its critical section:
// it loads the word on entry (odd: another writer is inside), stores it with the low bit set,
// does the critical work, loads it again (changed: another holder stored meanwhile) and stores
// the next even value, entry + 2, before the release. So the word ends at twice the write
// acquires unless writers overlapped (the trial counts the shortfall as lost updates).
[[gnu::always_inline]] inline void checked_write_section(std::atomic<std::uint64_t>& check,
                                                         SharedLine* lines, unsigned line_count,
                                                         std::uint64_t critical_iterations,
                                                         std::uint64_t& overlaps) {
    const std::uint64_t entry = check.load(std::memory_order_relaxed);
    overlaps += entry & 1;
    const std::uint64_t marked = entry | 1;
    check.store(marked, std::memory_order_relaxed);
    touch_lines_after_the_first<true>(lines, line_count);
    arch::burn(critical_iterations);
    overlaps += check.load(std::memory_order_relaxed) != marked;
    check.store(marked + 1, std::memory_order_relaxed);
}

// A reader's verified critical section: loads of the shared lines (no stores: readers share
// them) and the busy work. Its check only reads the word: odd on entry means a writer is inside,
// a different value at exit means a writer entered (or left) while the reader was inside; either
// is an overlap. A writer inside for the reader's whole stay is seen by its odd mark.
[[gnu::always_inline]] inline void checked_read_section(const std::atomic<std::uint64_t>& check,
                                                        SharedLine* lines, unsigned line_count,
                                                        std::uint64_t critical_iterations,
                                                        std::uint64_t& overlaps) {
    const std::uint64_t entry = check.load(std::memory_order_relaxed);
    overlaps += entry & 1;
    touch_lines_after_the_first<false>(lines, line_count);
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

// The verification trial's loop is measured_loop<Verifying<Lock>, false>: the same function with
// the exclusion check (kVerify). A tag rather than a third template parameter or a shared
// helper, so that measured_loop keeps the name every tool shows
// ("measured_loop<TasLock<(Delay)1>, false>") and its whole body in its own DWARF, where
// `pprof -list` and the annotation read the lock's lines.
template <typename LockT>
struct Verifying {};

template <typename T>
struct LoopMode {
    using Lock = T;
    static constexpr bool kVerify = false;
};
template <typename T>
struct LoopMode<Verifying<T>> {
    using Lock = T;
    static constexpr bool kVerify = true;
};

// lockhammer's loop: acquire, critical work on shared lines, release, parallel work. The lock
// calls are direct (LockT is a concrete type), so nothing indirect runs per iteration. One
// function runs both kinds of trial: measured_loop<Lock, latency> a measured one, and
// measured_loop<Verifying<Lock>, false> a verification one (kVerify).
//
// Measured trials (kVerify false) run exactly that and nothing else the lock or its line can
// feel: per acquire, the lock's acquire path, the increments of the shared lines and the busy
// work, the release, the busy work outside, then the harness's own steps: count the acquire
// and compare it with the limit (registers), and load a byte on the thread's own line, set
// every few milliseconds by the watcher, which asks for the count or tells it to stop. The lock's
// attempt counts are plain integers in its context, which the compiler keeps in registers
// (tests/unit/workload/loop_disasm_test.cpp checks the acquire loops touch no stack memory).
//
// Verification trials (kVerify true; one per cell, before its measured trials: sweep.cpp) check
// exclusion on every acquire of a lock that claims to exclude, with the check word: shared
// line 0 (with --data same-line, or no shared lines, a word next to the lock on the lock's own
// cache line: NeighbourWords). The holder loads it on entry, does the critical work, loads it
// again and stores the entry value + 1 just before the release. A second holder that entered in
// between either stored first (the exit load differs: an overlap, counted per thread) or read
// the same entry value (one of the two increments is lost: the harness compares the word with
// the acquire count). The window is the whole critical section, so a long one is caught nearly
// always. The check's extra load and its store, on the lock's own line when there are no shared
// lines, are why it has a trial of its own: with waiters spinning on that line by
// read-modify-write, the store costs the holder one more transfer per handoff.
//
// Each instance starts on a cache line, so the same code has the same layout in every build:
// placed where the linker happened to put it, cas's uncontended loop, identical instruction
// for instruction, ran at 0.97-0.99x the bare loop in one build and 1.10x in another
// (docs/benchmarks.md).
template <typename LockOrVerifying, bool kLatency>
[[gnu::aligned(arch::kCacheLine)]] void measured_loop(void* lock_storage, const LoopArgs& args) {
    using LockT = typename LoopMode<LockOrVerifying>::Lock;
    constexpr bool kVerify = LoopMode<LockOrVerifying>::kVerify;
    auto& slot = *static_cast<LockSlot<LockT>*>(lock_storage);
    LockT& lock = slot;
    typename LockT::Context context;
    seed_context(context, args.seed);
    ThreadResult& result = *args.result;
    // Copies of what the loop reads: it stores through pointers the compiler cannot tell apart
    // from `args`, which would otherwise be reloaded every trip.
    Progress& progress = *args.progress;
    SharedLine* const lines = args.lines;
    const unsigned line_count = args.line_count;
    const std::uint64_t acquire_limit = args.acquire_limit;
    const std::uint64_t critical_iterations = args.critical_iterations;
    const std::uint64_t parallel_iterations = args.parallel_iterations;
    constexpr bool kCheck = kVerify && locks::excludes<LockT>();
    // Line 0, or the word beside the lock: with --data same-line the first shared datum, and
    // the verification's check word when there are no shared lines.
    std::atomic<std::uint64_t>& first =
        line_count > 0 && !args.first_line_on_lock ? lines[0].value : slot.words.datum;
    std::uint64_t acquires = 0, overlaps = 0;
    // Locks with a shared mode take --read-fraction of their acquires shared (draw_shared);
    // every other lock takes all of them exclusive and draws nothing.
    constexpr bool kShared = locks::has_shared<LockT>();
    static_assert(!kShared || locks::excludes<LockT>(),
                  "a reader-writer lock excludes its writers");
    const std::uint64_t read_threshold = args.read_threshold;
    std::uint64_t mix = args.mix_seed, reads = 0;

    while (acquires < acquire_limit) {
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
                if constexpr (kCheck)
                    checked_read_section(first, lines, line_count, critical_iterations, overlaps);
                else
                    critical_section<false>(first, lines, line_count, critical_iterations);
                lock.unlock_shared(context);
                ++reads;
            } else {
                lock.lock(context);
                if constexpr (kLatency) latency = arch::ticks() - before;
                if constexpr (kCheck)
                    checked_write_section(first, lines, line_count, critical_iterations, overlaps);
                else
                    critical_section<true>(first, lines, line_count, critical_iterations);
                lock.unlock(context);
            }
        } else {
            lock.lock(context);
            if constexpr (kLatency) latency = arch::ticks() - before;
            if constexpr (kCheck)
                critical_section(first, lines, line_count, critical_iterations, overlaps);
            else
                critical_section<true>(first, lines, line_count, critical_iterations);
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
        parallel_work(parallel_iterations);
        // The watcher asks every few milliseconds (kernel.hpp's Progress): publish the count
        // for the watchdog, then see whether the trial is over.
        if (const auto asked = progress.request.load(std::memory_order_relaxed)) [[unlikely]] {
            progress.acquires.store(acquires, std::memory_order_relaxed);
            if (asked == Progress::kStop) break;
            progress.request.store(0, std::memory_order_relaxed);
        }
    }
    result.acquires = acquires;
    result.overlaps = overlaps;
    result.read_acquires = reads;
    result.rmw_attempts = locks::rmw_attempts<LockT>(context.stats, acquires - reads);
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
                      &measured_loop<Verifying<LockT>, false>,
                      &neighbour_words<LockT>,
                      reinterpret_cast<const void*>(&acquire_probe<LockT>),
                      sizeof(LockSlot<LockT>),
                      alignof(LockSlot<LockT>)};
}

}  // namespace lockprof::workload::inline LOCKPROF_FLAVOUR_NS
