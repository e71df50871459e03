// What to run: the validated request (RunSpec, filled by the CLI from options and profiles) and
// one trial of one lock at one thread count (TrialSpec, made by the plan).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockprof/arch/cpu.hpp"

namespace lockprof::workload {

enum class PinMode { none, compact, scatter, list };

// The name users write for a pin mode (`--pin`), also used in reports and result files.
constexpr const char* pin_mode_name(PinMode mode) {
    switch (mode) {
        case PinMode::none:
            return "none";
        case PinMode::compact:
            return "compact";
        case PinMode::scatter:
            return "scatter";
        case PinMode::list:
            return "list";
    }
    return "?";
}

struct PinSpec {
    PinMode mode = PinMode::none;
    std::vector<int> cpus;  // for PinMode::list
    // `--cpu-order FILE`: `cpus` (PinMode::list) came from this file, in its order; "" else.
    std::string cpu_order_file;
};

// The workers' scheduling policy (`--sched`): the default SCHED_OTHER, or SCHED_FIFO.
enum class SchedPolicy { other, fifo };

constexpr const char* sched_policy_name(SchedPolicy policy) {
    return policy == SchedPolicy::fifo ? "fifo" : "other";
}

// Where the data the critical section increments sits (`--data`).
enum class DataPlacement {
    separate,   // every shared line apart from the lock's (a handoff moves two lines)
    same_line,  // the first datum on the lock's own cache line, right after the lock, as a
                // PostgreSQL struct keeps its fields next to its slock_t; the rest apart
};

constexpr const char* data_placement_name(DataPlacement placement) {
    return placement == DataPlacement::same_line ? "same-line" : "separate";
}

// What memory the lock and its shared lines live in (`--lock-page`; workload/lock_page.hpp).
enum class LockPage {
    normal,  // the C++ heap, as before there was a choice: the lock and the lines are two
             // allocations on ordinary pages, wherever the allocator puts them in each trial
    huge,    // one hugetlb page (MAP_HUGETLB, the kernel's default huge page size), the lock at
             // its start and the lines after it, as lockhammer's -M: a physical page that the
             // next run, in another process, usually gets back from the pool
};

constexpr const char* lock_page_name(LockPage page) {
    return page == LockPage::huge ? "huge" : "normal";
}

// The loop each thread runs (lockhammer's model): acquire, critical work touching
// `shared_lines` shared cache lines, release, parallel work. Work is given in nanoseconds,
// turned into calibrated busy-loop trips by every worker, or in instructions of the busy loop
// (arch::burn(), arch::kBurnInstructionsPerTrip a trip), which need no calibration.
struct WorkSpec {
    std::uint64_t critical_ns = 0;
    std::uint64_t parallel_ns = 0;
    // `--critical-ins` / `--parallel-ins`: the work as instructions of burn()'s loop (a multiple
    // of kBurnInstructionsPerTrip), for machines whose timers are too coarse to calibrate; set,
    // it replaces the ns figure above (then 0).
    std::optional<std::uint64_t> critical_instructions;
    std::optional<std::uint64_t> parallel_instructions;
    unsigned shared_lines = 1;
    DataPlacement data = DataPlacement::separate;
    LockPage lock_page = LockPage::normal;
    // `--read-fraction`: the share of acquires each worker takes shared, 0 to 1. Only locks
    // with a shared mode (rw-cas, spin-rw) honour it; the others take every acquire exclusive.
    double read_fraction = 0;
};

// Everything a user asked for, after parsing and validation.
struct RunSpec {
    std::vector<std::string> locks;            // names as the user wrote them ("tas", "cas@lse")
    std::vector<unsigned> threads;             // sweep, in the user's order
    std::optional<std::uint64_t> duration_ns;  // stop after this long ...
    std::optional<std::uint64_t> acquires_per_thread;  // ... or after this many acquires each
    WorkSpec work;
    std::optional<arch::Delay> delay;  // none set: each lock's default
    PinSpec pin;
    SchedPolicy sched = SchedPolicy::other;
    bool force = false;  // `--force`: --sched fifo with more threads than CPUs
    std::uint64_t warmup_ns = 0;
    unsigned trials = 1;  // with max_time_ns: the minimum per cell
    // `--trials auto --max-time`: after `trials` per cell, more until a cell is settled (the
    // sweep's `settled` hook says so) or this much time since the sweep began has passed.
    std::optional<std::uint64_t> max_time_ns;
    // `--processes N`: the sweep ran in N processes, `trials` trials of every cell in each
    // (cli/process_runner); 1: in this one.
    unsigned processes = 1;
    std::uint64_t seed = 1;
    bool latency = false;
    std::uint64_t watchdog_ns = 10'000'000'000;  // no progress for this long ends the run
    // The observer-effect check (`--sample` or `--event` without --no-perturbation-check): every
    // measured trial that runs with instruments is paired with one of the same cell without any,
    // in alternating order (workload/sweep.hpp), into CellResult::plain_trials.
    bool perturbation_check = false;
};

// Calibration of the machine, measured once at start-up on the main thread. The busy work of
// each trial is calibrated again by every worker (ThreadResult); burn_iterations_per_ns here is
// the main thread's figure, kept for reference.
struct Calibration {
    double burn_iterations_per_ns = 0;  // arch::burn() trips per nanosecond
    double ticks_per_ns = 0;            // arch::ticks() per nanosecond
};

// One trial of one lock at one thread count, fully resolved.
struct TrialSpec {
    unsigned threads = 1;
    arch::Delay delay = arch::Delay::none;
    std::optional<std::uint64_t> duration_ns;
    std::optional<std::uint64_t> acquires_per_thread;
    WorkSpec work;                   // each worker calibrates it into burn() trips
    std::vector<int> cpu_of_thread;  // empty: not pinned
    SchedPolicy sched = SchedPolicy::other;
    bool latency = false;
    std::uint64_t seed = 1;
    std::uint64_t watchdog_ns = 10'000'000'000;
    // A verification trial (LoopKernel::verify_loop): the exclusion check on every acquire, no
    // instruments. Its figures prove exclusion and are never among the measured trials.
    bool verify = false;
};

}  // namespace lockprof::workload
