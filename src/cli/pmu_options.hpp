// The PMU counting options of `run` and `record`, one object for both: --event, --kernel,
// --strict-events, --no-counters, declared, documented and planned the same way.
#pragma once

#include <optional>
#include <string>

#include <boost/program_options.hpp>

#include "lockprof/pmu/counters.hpp"

namespace lockprof::cli {

class PmuOptions {
  public:
    // `measures_thread_cpu`: the command measures each thread's CPU time itself (a lock run's
    // cpu ns/acq), so task_clock is left out of the defaults (it can still be asked for).
    explicit PmuOptions(bool measures_thread_cpu = false)
        : default_task_clock_(!measures_thread_cpu) {}

    // The options, as the group "Counters (PMU events)"; --event's help lists the events
    // counted without it, from pmu::default_event_names().
    boost::program_options::options_description options() const;

    // What the options ask to count, planned now (pmu::plan_counting: events resolved and
    // trial-opened, so every problem is known before anything runs); nullopt with
    // --no-counters. Throws UsageError for --event with --no-counters, unknown events and
    // (--strict-events) anything that cannot be counted. Notes on events the user named are
    // warned on stderr now; defaults this machine cannot count are no news worth a warning.
    // Every note stays in the plan, for the result.
    std::optional<pmu::CountingPlan> plan(const boost::program_options::variables_map& vm) const;

    // --strict-events: a counting problem found later (a worker's open fails) is an error too.
    bool strict(const boost::program_options::variables_map& vm) const;

  private:
    bool default_task_clock_ = true;
};

// Prints "lockprof: warning: LINE" on stderr, after what stdout holds so far.
void warn(const std::string& line);

}  // namespace lockprof::cli
