// Runs one trial: creates the threads, releases them together, stops them, collects results.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "lockprof/workload/runnable_locks.hpp"
#include "lockprof/measure/instrument.hpp"
#include "lockprof/workload/results.hpp"
#include "lockprof/workload/spec.hpp"

namespace lockprof::workload {

struct RunControl {
    std::vector<measure::Instrumentation*> instruments;
    // Set asynchronously (SIGINT); the running trial stops early and is reported interrupted.
    const std::atomic<bool>* interrupted = nullptr;
};

struct TrialOutcome {
    TrialResult result;
    bool interrupted = false;
    // For excluding locks (0 when the lock works): acquires that found another holder inside,
    // and increments of shared line 0 lost.
    std::uint64_t overlaps = 0;
    std::uint64_t lost_updates = 0;
    // --lock-page huge: why result.lock_page has no physical address ("" when it has one).
    std::string physical_address_unknown;
    // Why result.steal is unknown ("" when it was measured).
    std::string steal_unknown;
};

// Throws StallError when no progress is made for spec.watchdog_ns.
TrialOutcome run_trial(const RunnableLock& lock, const TrialSpec& spec, RunControl& control);

}  // namespace lockprof::workload
