// Hypervisor steal in the analysis (the figures: workload/steal.hpp): how much of each trial's
// CPUs the host took, the one note a run gets when that was a lot, the explanation's evidence,
// and the range perf's task_clock must lie in given thread CPU time and steal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockprof/workload/results.hpp"

namespace lockprof::analysis {

// A trial's steal is high above this share of its CPUs' time: a few percent already moves
// 2-thread lock throughput by more than the 2% equivalence band.
inline constexpr double kHighStealShare = 0.03;

// steal / (window x CPUs covered): the share of the covered CPUs' time the host took.
double steal_share(const workload::TrialSteal& steal);

// Above kHighStealShare even one tick per CPU lower (the reading's resolution), so a single
// tick in a short trial is not called high.
bool high_steal(const workload::TrialSteal& steal);

// Trials' steal counted together: over one cell, a pair of cells or a whole run.
struct StealTally {
    std::size_t trials = 0;                // trials looked at
    std::size_t measured = 0;              // of them, those whose steal is known
    std::size_t high = 0;                  // of those, with high_steal()
    double high_least = 0, high_most = 0;  // share range over the high ones
    double most = 0;                       // the largest share measured
    std::vector<double> shares;            // every measured trial's share
    std::uint64_t tick_ns = 0;             // the resolution (the last measured trial's)

    void add(const workload::TrialResult& trial);
    void add(const workload::CellResult& cell);
    void add(const StealTally& other);
};

// "the hypervisor took 9-14% of the threads' CPUs in 6 of 12 trials", "" without a high trial.
std::string high_steal_text(const StealTally& tally);

// The run's one note when some trial's steal was high, from every cell's trials tallied
// together; "" otherwise.
std::string steal_note(const StealTally& run);

// The HTML report's provenance line for a run's trials: "measured in 12 of 12 trials
// (/proc/stat, 10 ms per CPU): median 0.4%, at most 2.1% of the threads' CPUs' time"; "unknown:
// ..." when no trial has it.
std::string steal_overview(const StealTally& run);

// Where perf's task_clock total may lie for threads whose CLOCK_THREAD_CPUTIME_ID total is
// `thread_cpu_ns`, with `steal` measured over a window enclosing theirs: at least their CPU
// time, at most it plus everything stolen from their CPUs, each widened by the readings'
// resolution (a tick per CPU) and kClockSlack of the CPU time (the counter is enabled just
// before and disabled just after the CPU clock is read; interrupt time that one clock counts
// and the other does not). A misread or doubly scaled counter falls outside; a busy host does
// not.
inline constexpr double kClockSlack = 0.02;
struct ClockRange {
    double low_ns = 0, high_ns = 0;
    bool contains(double ns) const { return ns >= low_ns && ns <= high_ns; }
};
ClockRange task_clock_range(std::uint64_t thread_cpu_ns, const workload::TrialSteal& steal);

}  // namespace lockprof::analysis
