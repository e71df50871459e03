// Counting per thread: the events of a run split into perf_event groups, a move-only set of
// open groups per worker thread (opened by the thread itself, disabled until the start barrier),
// and the Instrumentation that plugs it into the runner. Values are stored raw with their
// enabled/running times; analysis/ scales them.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "lockprof/pmu/events.hpp"
#include "lockprof/measure/instrument.hpp"
#include "lockprof/measure/data.hpp"

namespace lockprof::pmu {

using Group = std::vector<std::size_t>;  // indices into the event list; the first leads

// Software events form their own group (they always run, even when hardware groups cannot be
// scheduled); hardware events go in groups of at most `hardware_per_group` (the PMU's counters),
// which the kernel time-shares when there are several.
std::vector<Group> plan_groups(const std::vector<ResolvedEvent>& events,
                               std::size_t hardware_per_group);

// Decodes one read() of a group leader opened with PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED |
// TOTAL_TIME_RUNNING | ID: {nr, enabled, running, {value, id} x nr}. Values are matched to
// events by id, not position. Returns one reading per id in `ids` (order kept); an id missing
// from the buffer, or a short buffer, reads as never counted (all zero).
std::vector<measure::CounterReading> decode_group_read(std::span<const std::uint64_t> words,
                                                       const std::vector<std::uint64_t>& ids,
                                                       const std::vector<std::string>& names);

struct OpenFailure {
    std::size_t event = 0;  // index into the event list
    int error = 0;          // errno
};

// The open counter groups of one thread. Move-only; closes its descriptors.
class ThreadCounters {
  public:
    // Where the counters attach. The default is the calling thread.
    struct Target {
        pid_t task = 0;        // thread id (0: the calling thread)
        bool inherit = false;  // also count the task's future threads and children
        // Start counting when the task calls exec (for `record -- CMD`, opened between fork
        // and exec); otherwise counters start with start().
        bool enable_on_exec = false;
    };

    // Opens `groups` of `events` for `target`, disabled. Events that fail to open are
    // reported in `failures` and read as never counted.
    static ThreadCounters open(const std::vector<ResolvedEvent>& events,
                               const std::vector<Group>& groups, std::vector<OpenFailure>& failures,
                               const Target& target);
    static ThreadCounters open(const std::vector<ResolvedEvent>& events,
                               const std::vector<Group>& groups,
                               std::vector<OpenFailure>& failures) {
        return open(events, groups, failures, Target{});
    }

    ThreadCounters() = default;
    ThreadCounters(ThreadCounters&& other) noexcept;
    ThreadCounters& operator=(ThreadCounters&& other) noexcept;
    ThreadCounters(const ThreadCounters&) = delete;
    ThreadCounters& operator=(const ThreadCounters&) = delete;
    ~ThreadCounters();

    void start();  // reset and enable every group
    void stop();   // disable every group
    // One reading per event, in event order.
    std::vector<measure::CounterReading> read() const;
    std::size_t open_descriptors() const;

  private:
    struct OpenGroup {
        std::vector<int> fds;  // leader first
        std::vector<std::uint64_t> ids;
        std::vector<std::size_t> events;
    };
    void close_all();
    std::vector<OpenGroup> groups_;
    std::vector<std::string> names_;  // requested names, per event
};

struct CountingOptions {
    std::vector<std::string> requested;  // empty: the defaults
    bool include_kernel = false;
    bool strict = false;
    // Whether the defaults include task_clock: not for a lock run, which measures each thread's
    // CPU time itself (cpu ns/acq); a second column of the same figure would say nothing more.
    bool default_task_clock = true;
};

// What a run counts, decided before the sweep: resolved events that passed a trial open on the
// calling thread, their groups, and one note per cause for what was dropped.
struct CountingPlan {
    std::vector<ResolvedEvent> events;
    std::vector<Group> groups;
    std::vector<std::string> notes;
};

// The aliases counted when --event is not given, in order; task_clock among them unless
// `with_task_clock` is false (CountingOptions::default_task_clock).
std::vector<std::string> default_event_names(bool with_task_clock = true);

// Throws UsageError for unknown names, and (strict) for anything that cannot be counted.
CountingPlan plan_counting(const CountingOptions& options);

// Plugs a CountingPlan into the runner: each worker opens its own groups.
class CounterInstrumentation : public measure::Instrumentation {
  public:
    explicit CounterInstrumentation(CountingPlan plan);
    std::unique_ptr<measure::ThreadInstrument> attach_current_thread(
        unsigned thread_index) override;
    const CountingPlan& plan() const { return plan_; }
    // One line per cause for events that failed to open on worker threads during the run and
    // were not already explained by the plan's notes.
    std::vector<std::string> run_failures() const;

  private:
    CountingPlan plan_;
    mutable std::mutex mutex_;
    std::map<int, std::vector<std::size_t>> failures_;  // errno -> events
};

}  // namespace lockprof::pmu
