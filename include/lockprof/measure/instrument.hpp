// Hooks for per-thread measurement that rides along with a runner (PMU counter groups,
// samplers): the lock workload's trial threads, or anything else that runs threads. Each worker
// thread attaches itself before the start barrier, so per-task events are opened by the thread they
// measure (pid 0, cpu -1) and mmap of sample buffers works. None of these calls runs inside the
// measured loop. Today only workload/trial.cpp drives it; `record` does not (it opens counters
// and samplers on other tasks: pmu::ThreadCounters, sampling::TaskSampler).
#pragma once

#include <memory>

#include "lockprof/measure/data.hpp"

namespace lockprof::measure {

class ThreadInstrument {
  public:
    virtual ~ThreadInstrument() = default;
    virtual void start() = 0;                              // right after the start barrier
    virtual void stop() = 0;                               // right after the loop ends
    virtual void collect(ThreadMeasurements& result) = 0;  // after stop, on the thread
};

class Instrumentation {
  public:
    virtual ~Instrumentation() = default;
    // Called on the worker thread itself; may return nullptr (nothing to measure here).
    virtual std::unique_ptr<ThreadInstrument> attach_current_thread(unsigned thread_index) = 0;
};

}  // namespace lockprof::measure
