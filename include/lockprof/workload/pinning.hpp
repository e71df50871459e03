// Which CPU each worker thread runs on.
#pragma once

#include <vector>

#include "lockprof/workload/spec.hpp"

namespace lockprof::workload {

struct CpuTopology {
    int cpu;
    int core;     // topology/core_id
    int package;  // topology/physical_package_id
};

// CPUs the calling thread may run on (its affinity mask); empty when it cannot be read.
std::vector<int> affinity_cpus();

// The same CPUs with their topology (from /sys; core = cpu when unknown).
std::vector<CpuTopology> allowed_cpus();

// CPU for each of `threads` threads; empty for PinMode::none. More threads than CPUs wrap
// around. compact: CPUs in number order (siblings share cores first); scatter: one thread per
// package, then per core, before any core gets a second thread.
std::vector<int> assign_cpus(const PinSpec& pin, unsigned threads,
                             const std::vector<CpuTopology>& cpus);

}  // namespace lockprof::workload
