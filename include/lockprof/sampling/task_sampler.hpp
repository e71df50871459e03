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

#include "lockprof/measure/data.hpp"

namespace lockprof::sampling {

struct RingBuffer;

// What the kernel reports of a command's processes besides samples (attach_inherited only):
// the executable mappings each makes, its name at exec, the processes it forks. The recorder
// rebuilds from them the mappings of processes that ended before /proc/PID/maps could be read.
struct TaskEvent {
    enum class Kind { mmap, comm, fork };
    Kind kind = Kind::mmap;
    pid_t pid = 0;
    pid_t tid = 0;                  // comm: the renamed thread
    pid_t parent = 0;               // fork: the parent process
    std::uint64_t time_ns = 0;      // perf clock, as samples' time_ns
    std::uint64_t address = 0;      // mmap: start of the executable mapping
    std::uint64_t length = 0;       // mmap
    std::uint64_t file_offset = 0;  // mmap
    bool exec = false;              // comm: set by an exec (the process's mappings start over)
    std::string name;               // mmap: file path ("//anon", "[vdso]" for others); comm
};

class TaskSampler {
  public:
    // `attr` and `info` as choose_perf_event() picked them.
    TaskSampler(const perf_event_attr& attr, measure::SamplingInfo info);
    ~TaskSampler();
    TaskSampler(const TaskSampler&) = delete;
    TaskSampler& operator=(const TaskSampler&) = delete;

    // Samples thread `tid` from now on. Returns 0, or the errno perf_event_open or mmap gave.
    int attach_task(pid_t tid);
    // Samples `pid` and every thread and process it starts, on each of `cpus`, from its next
    // exec on (open between fork and exec). Returns 0 or the first errno.
    int attach_inherited(pid_t pid, const std::vector<int>& cpus);

    // Samples gathered since the last call (every buffer emptied).
    std::vector<measure::RawSample> drain();
    // Task events gathered by drain() since the last call, in no particular order (each CPU
    // has its own buffer): sort by time_ns before replaying them.
    std::vector<TaskEvent> take_events();
    // Stops sampling (disables every event); a final drain() still returns what was buffered.
    void stop();

    std::uint64_t lost() const;
    // Distinct problems met (buffers that had to shrink, mmap failures), one line each.
    std::vector<std::string> notes() const { return {notes_.begin(), notes_.end()}; }

  private:
    int add(perf_event_attr attr, pid_t pid, int cpu);

    perf_event_attr attr_;
    measure::SamplingInfo info_;
    std::vector<std::shared_ptr<RingBuffer>> rings_;
    std::vector<TaskEvent> events_;
    std::set<std::string> notes_;
};

}  // namespace lockprof::sampling
