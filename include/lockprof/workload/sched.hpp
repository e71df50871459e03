// `--sched fifo`: the workers under SCHED_FIFO. What the kernel allows, what the machine's load
// makes risky, and the scope that lifts the trial's watching thread above its workers.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "lockprof/workload/spec.hpp"

namespace lockprof::workload {

// The workers' real-time priority under --sched fifo, and the watching thread's, one above:
// it sleeps nearly all the time, but must run to end a timed trial and to see a stall.
inline constexpr int kFifoWorkerPriority = 1;
inline constexpr int kFifoWatcherPriority = 2;

// Throws UsageError (exit 2) when this process may not run threads under SCHED_FIFO, with the
// kernel's reason: tried on a short-lived thread, so nothing of this process changes.
void check_fifo_allowed();

// The machine's use, as --sched fifo's warnings judge it.
struct MachineLoad {
    double load_average = 0;  // /proc/loadavg's 1-minute figure; negative: unreadable
    unsigned cpus = 0;        // CPUs the workers may run on
};

MachineLoad read_machine_load(unsigned cpus, const std::filesystem::path& root = "/");

// Warnings for FIFO spinners on this machine, one line each, none when it is idle: a load
// average of 1 or more, or fewer idle CPUs (cpus - load average) than `threads`, the largest
// thread count.
std::vector<std::string> fifo_warnings(const MachineLoad& load, unsigned threads);

// Throws UsageError when `threads` FIFO workers would share fewer CPUs (`cpus` distinct ones)
// and `force` is not set: a FIFO spinner never yields its CPU to the holder it waits for.
void check_fifo_oversubscription(unsigned threads, unsigned cpus, bool force);

// Runs the calling thread under SCHED_FIFO at `priority` while it lives (nothing for
// SchedPolicy::other), restoring its policy after; throws Error when the kernel refuses.
class FifoScope {
  public:
    FifoScope(SchedPolicy policy, int priority);
    ~FifoScope();
    FifoScope(const FifoScope&) = delete;
    FifoScope& operator=(const FifoScope&) = delete;

  private:
    bool active_ = false;
    int old_policy_ = 0;
    int old_priority_ = 0;
};

}  // namespace lockprof::workload
