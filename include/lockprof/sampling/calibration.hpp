// What `record`'s own instruments cost on this machine, measured before it attaches: the CPU
// time one probed call takes more than an unprobed one (a uprobe and a uretprobe hit, plus the
// stack copy with --call-graph dwarf), and the CPU time one sample takes (the interrupt and
// the record the kernel writes; with --call-graph dwarf the stack copy too). Both on a
// calibration thread of lockprof's own, in CPU time (CLOCK_THREAD_CPUTIME_ID counts the time
// the kernel spends on a thread's traps and interrupts), over rounds that alternate plain and
// instrumented work; the median difference, with the rounds' range. The recording then
// multiplies them by its hits and samples to estimate the share of the targets' CPU time its
// instruments took (record/analysis.hpp).
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockprof/pmu/uprobe.hpp"

namespace lockprof::sampling {

struct CostEstimate {
    double ns = 0;             // median extra CPU time per call or sample
    double low = 0, high = 0;  // the rounds' range
    unsigned rounds = 0;
    std::uint64_t units = 0;  // probed calls or samples measured, over all rounds
};

// A probed call's extra cost with the uprobe PMU (one uprobe on entry, one uretprobe; with
// `stack_size`, a third event copying that much stack), or nullopt with `why`.
std::optional<CostEstimate> probe_call_cost(const pmu::UprobePmu& pmu, std::uint32_t stack_size,
                                            std::string& why);

// One sample's cost with `attr` (choose_perf_event()'s, for the recording's event), taken at
// `frequency` samples a second during the calibration so that the cost is well above the
// noise; nullopt with `why`.
std::optional<CostEstimate> sample_cost(const perf_event_attr& attr, std::uint64_t frequency,
                                        std::string& why);

// The median and range of per-round differences, (instrumented - plain) / units: what both
// calibrations return, apart for tests.
CostEstimate summarize_rounds(const std::vector<double>& plain_ns,
                              const std::vector<double>& instrumented_ns,
                              const std::vector<std::uint64_t>& units);

}  // namespace lockprof::sampling
