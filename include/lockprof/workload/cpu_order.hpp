// `--cpu-order FILE`: the CPUs worker threads pin to, in the order a file lists them (as
// lockhammer's -C/--cpuorder-file): worker i runs on the file's i-th CPU.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace lockprof::workload {

// The CPUs of a CPU-order text: numbers separated by spaces, tabs, commas or newlines; `#`
// starts a comment to the end of its line. `file` names the file in errors. Throws UsageError
// naming the file and line for junk, a CPU not in `online`, a CPU listed twice, and fewer CPUs
// than `threads` (the largest thread count of the sweep).
std::vector<int> parse_cpu_order(std::string_view text, const std::string& file, unsigned threads,
                                 const std::vector<int>& online);

// The file read and parsed against the online CPUs (/sys/devices/system/cpu/online under
// `root`); a missing or unreadable file is a UsageError naming it.
std::vector<int> read_cpu_order(const std::filesystem::path& file, unsigned threads,
                                const std::filesystem::path& root = "/");

// The CPUs the kernel has online under `root` (sys/devices/system/cpu/online); empty when the
// file is unreadable.
std::vector<int> online_cpus(const std::filesystem::path& root = "/");

}  // namespace lockprof::workload
