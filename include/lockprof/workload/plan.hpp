// From a validated request to the ordered list of cells to run. All checks that can fail on
// user input happen here, before any thread starts.
#pragma once

#include <vector>

#include "lockprof/workload/runnable_locks.hpp"
#include "lockprof/workload/pinning.hpp"
#include "lockprof/workload/spec.hpp"

namespace lockprof::workload {

struct PlannedCell {
    const RunnableLock* lock = nullptr;
    arch::Delay delay = arch::Delay::none;
    unsigned threads = 0;
};

struct Plan {
    RunSpec spec;
    Calibration calibration;
    std::vector<PlannedCell> cells;  // thread count major, locks in the user's order
    std::vector<CpuTopology> cpus;

    TrialSpec trial_spec(const PlannedCell& cell, std::uint64_t trial) const;
};

// The lock named `name`, or UsageError with a did-you-mean and the list.
const RunnableLock& resolve_lock(const std::string& name);

// --critical-ins / --parallel-ins: UsageError when given with their -ns option, or not a whole
// number of the work loop's trips (arch::kBurnInstructionsPerTrip instructions each).
void check_instruction_work(const WorkSpec& work);

// Throws UsageError for unknown locks, delays a lock does not accept or this CPU lacks, LSE
// flavours on CPUs without LSE, empty thread lists, unavailable CPUs.
Plan make_plan(const RunSpec& spec, const Calibration& calibration);

// Measures burn() speed and the tick rate (a few tens of milliseconds).
Calibration calibrate();

// The busy work of a trial as one worker calibrated it, on its own CPU.
struct WorkCalibration {
    double burn_iterations_per_ns = 0;
    // burn() trips for WorkSpec::critical_ns (or critical_instructions / 2), and for the
    // parallel work
    std::uint64_t critical_iterations = 0;
    std::uint64_t parallel_iterations = 0;
    double critical_ns = 0;  // how long burn(critical_iterations) then took: best of several
    double parallel_ns = 0;  // ... and burn(parallel_iterations)
};

// Measures burn() speed on the calling thread, turns the requested work into trips (an
// instruction count needs no measurement: kBurnInstructionsPerTrip per trip) and times
// the result (about a millisecond). The trial runs it in every worker at once, after pinning,
// so frequency, SMT siblings and the neighbours' load are those of the measurement (as
// lockhammer calibrates).
WorkCalibration calibrate_work(const WorkSpec& work);

}  // namespace lockprof::workload
