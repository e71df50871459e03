// The kernel's PMUs as sysfs lists them (/sys/bus/event_source/devices), and which of them is
// the CPU's own (core) PMU. Why an event failed depends on it: ENOENT with no core PMU means the
// kernel has none (a VM without a virtual PMU); with one it means its driver does not implement
// that event. The sysfs root is a parameter so tests can point it at a folder they built.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace lockprof::pmu {

struct EventSource {
    std::string name;          // "cpu", "armv8_pmuv3_0", "software", "uncore_imc_0"
    bool has_cpus = false;     // a `cpus` file: the CPUs a core PMU counts on (arm_pmu, x86 hybrid)
    bool has_cpumask = false;  // a `cpumask` file: an uncore or system PMU read through one CPU
};

// The event sources under `sysfs`/bus/event_source/devices, sorted by name; empty when the
// folder is missing or unreadable.
std::vector<EventSource> event_sources(const std::filesystem::path& sysfs = "/sys");

// Whether `source` is a CPU's core PMU: x86 `cpu` (`cpu_core`, `cpu_atom` on hybrid parts),
// arm64 `armv8_*`/`armv9_*` (armv8_pmuv3_0, armv8_cortex_a57, armv8_neoverse_n1) and Apple's
// `apple_*_pmu`, or any other PMU with a `cpus` file and no `cpumask`. Kernel sources
// (software, tracepoint, breakpoint, kprobe, uprobe), msr, power, cstate, uncore, IBS, SPE and
// interconnect PMUs are not.
bool is_core_pmu(const EventSource& source);

// Names of the core PMUs among `sources` (one per core type on big.LITTLE), in order.
std::vector<std::string> core_pmu_names(const std::vector<EventSource>& sources);

// core_pmu_names(event_sources(sysfs)).
std::vector<std::string> registered_core_pmus(const std::filesystem::path& sysfs = "/sys");

}  // namespace lockprof::pmu
