// The boundary between the measured loop (compiled per lock, per delay policy and, on aarch64,
// per ISA flavour) and the harness that drives it (threads, barrier, clocks, watchdog).
//
// The loop side lives in a flavour translation unit that holds nothing but lock code and this
// loop: any library code there that uses atomics (shared_ptr refcounts, say) would be compiled
// with that flavour's -march and could be merged by the linker into the other flavours.
#pragma once

#include <atomic>
#include <cstdint>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::workload {

// One shared cache line touched inside the critical section.
struct alignas(arch::kFalseSharingRange) SharedLine {
    std::atomic<std::uint64_t> value{0};
};

// What the harness keeps right after the lock object, on the lock's own cache line: the measured
// loop allocates LockSlot<Lock> (loop.hpp), whose members C++ places in the lock's tail padding,
// the way a PostgreSQL struct keeps its fields next to its slock_t. `datum` is the first shared
// datum with `--data same-line`, and the exclusion check's word when there are no shared lines.
struct NeighbourWords {
    std::atomic<std::uint64_t> datum{0};
};

// A thread's published acquire count, read by the watchdog.
struct alignas(arch::kFalseSharingRange) Progress {
    std::atomic<std::uint64_t> acquires{0};
};

// What one worker's loop needs; the loop writes its counts into `result`.
struct LoopArgs {
    const std::atomic<bool>* stop = nullptr;
    Progress* progress = nullptr;
    SharedLine* lines = nullptr;
    unsigned line_count = 0;
    bool first_line_on_lock = false;  // --data same-line: line 0 is NeighbourWords::datum
    std::uint64_t acquire_limit = UINT64_MAX;
    std::uint64_t critical_iterations = 0;
    std::uint64_t parallel_iterations = 0;
    std::uint64_t seed = 1;  // this thread's seed for randomising locks; never 0
    ThreadResult* result = nullptr;
};

// Entry points of one lock type compiled for one delay policy and latency setting.
struct LoopKernel {
    void* (*create_lock)() = nullptr;
    void (*destroy_lock)(void*) = nullptr;
    void (*run_loop)(void* lock, const LoopArgs& args) = nullptr;
    NeighbourWords* (*neighbour_words)(void* lock) = nullptr;  // in the lock's LockSlot
    // The code of acquire_probe<Lock> (loop.hpp): the lock's acquire path out of line, compiled
    // in the same flavour unit, never called. `list-locks --disasm` resolves and shows it.
    const void* acquire_probe = nullptr;
    explicit operator bool() const { return run_loop != nullptr; }
};

}  // namespace lockprof::workload
