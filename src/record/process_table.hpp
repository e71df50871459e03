// The processes a recording has seen (RecordResult::processes) and those still alive: pid and
// match attach to them thread by thread (counters, sampler, spin probes), and every poll
// attaches the threads born since, re-reads mappings that changed (exec, dlopen) and retires
// the processes that exited. A command's processes are only known, with their mappings, from
// its samples and probe hits.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lockprof/pmu/counters.hpp"
#include "lockprof/record/recorder.hpp"
#include "lockprof/record/targets.hpp"
#include "lockprof/record/uretprobe_frames.hpp"
#include "lockprof/sampling/task_sampler.hpp"
#include "record/notes.hpp"
#include "record/spin_probes.hpp"

namespace lockprof::record {

// File mappings are re-read this often (a process may dlopen), and whenever a process is first
// seen; samples are resolved against the last snapshot taken while it was alive.
inline constexpr auto kModuleRefresh = std::chrono::milliseconds(200);

// Why counters could not be opened, as notes.
void note_open_failures(Notes& notes, const pmu::CountingPlan& counting,
                        const std::vector<pmu::OpenFailure>& failures);

class ProcessTable {
  public:
    // `sampler` and `spin` are attached to each thread where they hold one (spin once
    // prepared); `seconds()` is the time since the recording started.
    ProcessTable(const RecordSpec& spec, RecordResult& result, Notes& notes,
                 std::optional<sampling::TaskSampler>& sampler, std::optional<SpinProbes>& spin,
                 std::function<double()> seconds);

    // pid / match: the processes to attach to at the start; throws UsageError when a --pid
    // process or any --match one is not running. `matcher`: match's, else nullptr.
    std::vector<ProcessInfo> initial_targets(const NameMatcher* matcher) const;
    // A process's mappings as of now; none once it has exited.
    std::vector<measure::MappedModule> modules_now(pid_t pid) const;

    // Adds a process (alive); `snapshot`: read its mappings now (not for a forked child that
    // has not exec'd yet). Returns its index in RecordResult::processes.
    std::size_t add(ProcessRecord p, bool snapshot = true);
    // Adds a process and attaches to its threads.
    void attach(const ProcessInfo& info);
    // match: attaches to the processes started since the last look.
    void attach_new_matches(const NameMatcher& matcher);
    // Samples from processes not attached by pid (children of a command) make them known,
    // with their mappings, while they are alive.
    void know_command_process(pid_t pid);

    // Attaches new threads, retires the processes that exited and re-reads mappings due.
    void poll();
    // Re-reads the mappings of live processes not read for kModuleRefresh.
    void refresh_live_modules();
    // Re-reads a process's mappings when they changed (exec, dlopen), and its name with them.
    void refresh_modules(pid_t pid);
    // A command that ended: no longer live.
    void ended(pid_t pid);

    bool any_live() const { return !live_.empty(); }
    bool known(pid_t pid) const { return known_.count(pid) != 0; }
    // The mappings of process `pid` as last read; nullptr when it was never seen alive.
    const std::vector<measure::MappedModule>* modules_of(std::uint32_t pid) const;
    // Where each probed process's uretprobe trampoline is.
    const std::map<pid_t, CodeRange>& uprobe_pages() const { return uprobe_pages_; }
    // Stops every thread's counters and reads them into its TaskRecord.
    void read_counters();

  private:
    struct LiveProcess {
        std::size_t index = 0;                          // into RecordResult::processes
        std::vector<measure::MappedModule> executable;  // last read, to skip unchanged re-reads
        std::chrono::steady_clock::time_point refreshed{};
        std::map<pid_t, pmu::ThreadCounters> counters;  // by tid
        std::set<pid_t> tasks;                          // attached (or refused) tids
    };

    void attach_new_tasks(pid_t pid);
    // Attaches one new thread; false when it ended meanwhile (nothing to report).
    bool attach_task(pid_t pid, LiveProcess& live, TaskRecord& task, int& refused);
    bool open_task_counters(LiveProcess& live, TaskRecord& task, int& refused);
    void retire(pid_t pid);
    std::vector<std::pair<pid_t, pid_t>> live_tasks() const;

    const RecordSpec& spec_;
    const std::string proc_root_;
    RecordResult& result_;
    Notes& notes_;
    std::optional<sampling::TaskSampler>& sampler_;
    std::optional<SpinProbes>& spin_;
    std::function<double()> seconds_;
    const AttachContext context_;
    std::map<pid_t, std::size_t> known_;  // every process seen -> index
    std::map<pid_t, LiveProcess> live_;
    std::vector<std::tuple<std::size_t, pid_t, pmu::ThreadCounters>> retired_;
    std::map<pid_t, CodeRange> uprobe_pages_;
};

}  // namespace lockprof::record
