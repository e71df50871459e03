// The kernel's `uprobe` PMU (/sys/bus/event_source/devices/uprobe): a perf_event_open with its
// type, config1 = the binary's path and config2 = a file offset probes every execution of that
// instruction in every process that maps the file; with the `retprobe` config bit, every return
// of the function that starts there. No tracefs is needed. The sysfs root is a parameter for
// tests.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace lockprof::pmu {

struct UprobePmu {
    std::uint32_t type = 0;  // perf_event_attr::type
    int retprobe_bit = 0;    // the config bit that makes it a uretprobe (format/retprobe)
};

// The registered uprobe PMU; nullopt with `why` saying what is missing.
std::optional<UprobePmu> uprobe_pmu(std::string& why, const std::filesystem::path& sysfs = "/sys");

// Attributes of a uprobe (or, `return_probe`, a uretprobe) on the function at `file_offset` of
// the file `path` (which must outlive the perf_event_open: config1 points at it). Samples every
// hit (sample_period 1), user space only, disabled until enabled; the caller adds sample_type.
perf_event_attr uprobe_attr(const UprobePmu& pmu, const std::string& path,
                            std::uint64_t file_offset, bool return_probe);

// Attributes of the tracepoint event `id` (trace_uprobe.hpp's TraceUprobes::define), as
// uprobe_attr() makes them.
perf_event_attr trace_uprobe_attr(std::uint64_t id);

// One line for an errno perf_event_open gave for a uprobe on `function` in `path`, with what to
// do (EACCES/EPERM: CAP_PERFMON; ENOENT: the PMU; EINVAL: the offset).
std::string explain_uprobe_error(int error_number, const std::string& function,
                                 const std::string& path);

}  // namespace lockprof::pmu
