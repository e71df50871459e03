// Sampling other processes, for `lockprof record`: perf_event ring buffers opened on tasks of
// running processes (one per thread, --pid/--match) or on every CPU following a command and
// everything it starts (inherited, `-- CMD`: the kernel refuses ring buffers on inherited
// per-thread events, so those are per CPU, as perf record does). The recording loop empties
// them with drain(); samples carry their pid and tid.
#pragma once

#include <sys/types.h>

#include <linux/perf_event.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lockprof/workload/results.hpp"

namespace lockprof::sampling {

struct RingBuffer;

class TaskSampler {
  public:
    // `attr` and `info` as choose_perf_event() picked them.
    TaskSampler(const perf_event_attr& attr, workload::SamplingInfo info);
    ~TaskSampler();
    TaskSampler(const TaskSampler&) = delete;
    TaskSampler& operator=(const TaskSampler&) = delete;

    // Samples thread `tid` from now on. Returns 0, or the errno perf_event_open or mmap gave.
    int attach_task(pid_t tid);
    // Samples `pid` and every thread and process it starts, on each of `cpus`, from its next
    // exec on (open between fork and exec). Returns 0 or the first errno.
    int attach_inherited(pid_t pid, const std::vector<int>& cpus);

    // Samples gathered since the last call (every buffer emptied).
    std::vector<workload::RawSample> drain();
    // Stops sampling (disables every event); a final drain() still returns what was buffered.
    void stop();

    std::uint64_t lost() const;
    // Distinct problems met (buffers that had to shrink, mmap failures), one line each.
    std::vector<std::string> notes() const { return {notes_.begin(), notes_.end()}; }

  private:
    int add(perf_event_attr attr, pid_t pid, int cpu);

    perf_event_attr attr_;
    workload::SamplingInfo info_;
    std::vector<std::shared_ptr<RingBuffer>> rings_;
    std::set<std::string> notes_;
};

}  // namespace lockprof::sampling
