// Hypervisor steal: the time a virtual machine's CPUs were runnable but the host ran something
// else. It is what makes trials on a busy cloud host spread, and it is where perf's task_clock
// (which advances with the task's time on its CPU, stolen time included) and
// CLOCK_THREAD_CPUTIME_ID (the scheduler's runtime, from which paravirtual steal accounting
// takes the stolen time out) part.
//
// The source is /proc/stat's per-CPU steal column (the 8th value of each `cpuN` line), in
// USER_HZ ticks: 10 ms on every Linux architecture lockprof runs on. The kernel keeps it in ns
// but shows it only in ticks, so one reading is exact to a tick per CPU and the difference of
// two to under a tick either way. Nothing finer reaches user space: /proc/PID/schedstat's
// run-delay is time spent waiting on the runqueue (other tasks of this machine), not steal;
// /proc/schedstat and cgroup cpu.stat count runtime, which already excludes steal; the
// paravirtual steal clock (KVM's MSR, Xen's runstate) is read by the kernel alone.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockprof/workload/results.hpp"

namespace lockprof::workload {

// One CPU's line of /proc/stat, in ticks since boot.
struct CpuTimes {
    std::uint64_t steal = 0;
    // user + nice + system + idle + iowait + irq + softirq + steal (guest time is already in
    // user and nice): all the CPU's time since it came online.
    std::uint64_t total = 0;
};

// Every CPU's times at one moment, or why there is no steal figure.
struct CpuTimesSnapshot {
    std::map<int, CpuTimes> cpus;  // CPU number -> its times; empty when unknown
    std::string unknown_because;   // set exactly when `cpus` is empty: one clause
};

// The `cpuN` lines of /proc/stat text (the all-CPU `cpu` line is left out). Without a steal
// column (Linux before 2.6.11, or an emulated /proc that writes fewer columns) steal is unknown,
// never 0.
CpuTimesSnapshot parse_proc_stat(std::string_view text);

// Reads `root`/proc/stat ("/" normally; a test folder in tests).
CpuTimesSnapshot read_cpu_times(const std::filesystem::path& root = "/");

// ns per /proc/stat tick: 1e9 / sysconf(_SC_CLK_TCK).
std::uint64_t proc_stat_tick_ns();

// The CPUs a trial's steal covers: each thread's pinned CPU when every thread is pinned, else
// `allowed` (where unpinned threads may have run).
std::vector<int> steal_cpus(const std::vector<ThreadResult>& threads,
                            const std::vector<int>& allowed);

// The steal of `cpus` between two snapshots `window_ns` apart, or why it is unknown. A CPU
// missing from either snapshot (offline) or whose count went backwards (a hypervisor's
// accounting bug) is left out of the CPUs covered; with none left it is unknown.
struct StealReading {
    std::optional<TrialSteal> steal;
    std::string unknown_because;  // set when `steal` is not
};
StealReading steal_between(const CpuTimesSnapshot& before, const CpuTimesSnapshot& after,
                           const std::vector<int>& cpus, std::uint64_t window_ns,
                           std::uint64_t tick_ns);

// Steal's share of all CPUs' time since boot; nullopt when unknown.
std::optional<double> steal_share_since_boot(const CpuTimesSnapshot& now);

}  // namespace lockprof::workload
