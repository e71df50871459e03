// The boundary between the measured loop (compiled per lock, per delay policy and, on aarch64,
// per ISA flavour) and the harness that drives it (threads, barrier, clocks, watchdog).
//
// The loop side lives in a flavour translation unit that holds nothing but lock code and this
// loop: any library code there that uses atomics (shared_ptr refcounts, say) would be compiled
// with that flavour's -march and could be merged by the linker into the other flavours.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::workload {

// One shared cache line touched inside the critical section.
struct alignas(arch::kFalseSharingRange) SharedLine {
    std::atomic<std::uint64_t> value{0};
};

// What the harness keeps right after the lock object, on the lock's own cache line: the measured
// lock is built as LockSlot<Lock> (loop.hpp), whose members C++ places in the lock's tail padding,
// the way a PostgreSQL struct keeps its fields next to its slock_t. `datum` is the first shared
// datum with `--data same-line`, and the exclusion check's word when there are no shared lines.
struct NeighbourWords {
    std::atomic<std::uint64_t> datum{0};
};

// What a worker and the trial's watcher (trial.cpp) tell each other, on a line of the worker's
// own. The loop publishes its acquire count only when asked: a store every acquire cost 4% of
// an uncontended tas on the 2-core VM (bench/run-benchmarks.sh), against one load of `request`.
// At every poll (every 5 ms) the watcher reads `acquires` for the watchdog and writes `request`:
// kPublish, or kStop once the trial is over. The worker answers kPublish by storing its count
// and clearing `request`, and kStop by leaving. A kStop that the worker's clearing overwrites
// is written again at the watcher's next poll, so nothing here needs ordering stronger than
// relaxed, and no atomic read-modify-write sits in the loop.
struct alignas(arch::kFalseSharingRange) Progress {
    static constexpr std::uint8_t kPublish = 1;
    static constexpr std::uint8_t kStop = 2;
    std::atomic<std::uint64_t> acquires{0};
    std::atomic<std::uint8_t> request{0};
};

// What one worker's loop needs; the loop writes its counts into `result`.
struct LoopArgs {
    Progress* progress = nullptr;  // the loop also ends when progress->request says kStop
    SharedLine* lines = nullptr;
    unsigned line_count = 0;
    bool first_line_on_lock = false;  // --data same-line: line 0 is NeighbourWords::datum
    std::uint64_t acquire_limit = UINT64_MAX;
    std::uint64_t critical_iterations = 0;
    std::uint64_t parallel_iterations = 0;
    std::uint64_t seed = 1;  // this thread's seed for randomising locks; never 0
    // --read-fraction: an acquire of a lock with a shared mode is shared when a draw of the
    // thread's mix generator (53 bits, from mix_seed, never 0) is below read_threshold
    // (read_fraction * 2^53); 0 takes every acquire exclusive.
    std::uint64_t read_threshold = 0;
    std::uint64_t mix_seed = 1;
    ThreadResult* result = nullptr;
};

// Entry points of one lock type compiled for one delay policy and latency setting.
struct LoopKernel {
    // Constructs the lock, in its LockSlot, in `storage` (lock_size bytes aligned to lock_align)
    // and returns it; destroy_lock ends its life and leaves the memory to its owner (the trial's
    // LockMemory, workload/lock_page.hpp).
    void* (*create_lock)(void* storage) = nullptr;
    void (*destroy_lock)(void*) = nullptr;
    void (*run_loop)(void* lock, const LoopArgs& args) = nullptr;
    // The same loop with the exclusion check on every acquire (a verification trial; loop.hpp).
    void (*verify_loop)(void* lock, const LoopArgs& args) = nullptr;
    NeighbourWords* (*neighbour_words)(void* lock) = nullptr;  // in the lock's LockSlot
    // The code of acquire_probe<Lock> (loop.hpp): the lock's acquire path out of line, compiled
    // in the same flavour unit, never called. `list-locks --disasm` resolves and shows it.
    const void* acquire_probe = nullptr;
    std::size_t lock_size = 0;   // sizeof(LockSlot<Lock>)
    std::size_t lock_align = 0;  // alignof(LockSlot<Lock>)
    explicit operator bool() const { return run_loop != nullptr; }
};

}  // namespace lockprof::workload
