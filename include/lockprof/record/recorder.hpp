// `lockprof record`: counts and samples real programs instead of lockprof's own workloads.
//
// Three ways to choose what is recorded:
//  - command: fork, open inherited counters (and per-CPU inherited samplers) on the child
//    while it waits, then exec CMD; everything it starts is counted and sampled with it, and
//    the recording ends when it exits (its exit status is kept).
//  - pid / match: attach to running processes, one counter group set and one sampling ring
//    buffer per thread (/proc/PID/task). A poll loop (every kPollInterval) attaches threads
//    born later and, for match, processes started later; a thread that lives and dies between
//    two polls is missed. Ends at the duration, on SIGINT/SIGTERM, or when every target is
//    gone; closing the events detaches (nothing is left in the targets).
// The data flow is options -> RecordSpec -> record() -> RecordResult -> profile (profile.hpp)
// -> text/JSON/folded outputs (report/record_report.hpp).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lockprof/common/error.hpp"
#include "lockprof/pmu/counters.hpp"
#include "lockprof/record/spin.hpp"
#include "lockprof/record/targets.hpp"
#include "lockprof/sampling/sampler.hpp"
#include "lockprof/sampling/calibration.hpp"
#include "lockprof/sampling/task_sampler.hpp"
#include "lockprof/workload/provenance.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::record {

inline constexpr auto kPollInterval = std::chrono::milliseconds(100);

enum class Mode { command, pid, match };
const char* mode_name(Mode mode);

struct RecordSpec {
    Mode mode = Mode::pid;
    std::vector<pid_t> pids;                   // pid
    std::string match;                         // match
    std::vector<std::string> command;          // command: program and arguments
    std::optional<std::uint64_t> duration_ns;  // pid/match; nullopt: until SIGINT or all exit
    pmu::CountingPlan counting;                // empty events: count nothing
    std::optional<sampling::SamplerRequest> sampling;
    // --spin: the functions to probe on entry and return (spin.hpp); empty: the known slow
    // paths found in the target; nullopt: no probes.
    std::optional<std::vector<std::string>> spin;
    // --spin with --call-graph dwarf,SIZE: each entry also copies SIZE bytes of stack, up to
    // kSpinStacksPerSite kept per call site and unwound into call stacks; 0: no stacks.
    std::uint32_t spin_stack = 0;
    // Where /proc and /sys are read: "" (the machine's own) except in tests, whose fake
    // folder holds proc/ and sys/.
    std::string root;
    // command, once stopped by a signal: how long it has to end after the SIGINT (which the
    // terminal sent it too) before it is sent SIGTERM, and after SIGTERM before SIGKILL.
    std::chrono::milliseconds stop_grace{2000};
    // Told each step taken to stop a command ("sent it SIGTERM"), as it is taken; also a note.
    std::function<void(const std::string&)> on_stop_step;
    // Measure the instruments' cost before attaching (InstrumentCalibration); tests of the
    // recorder's bookkeeping leave it off.
    bool calibrate = true;
};

// What the recording's instruments cost on this machine, measured before it attached
// (sampling/calibration.hpp): per probed call (--spin) and per sample (--sample), at the
// calibration's sample rate. record::analyse() turns them into a share of the targets' CPU time.
struct InstrumentCalibration {
    std::optional<sampling::CostEstimate> probe_call;
    std::optional<sampling::CostEstimate> sample;
    std::uint64_t sample_frequency = 0;  // samples a second during the calibration
    std::vector<std::string> problems;   // why an instrument could not be calibrated
};

struct TaskRecord {
    pid_t tid = 0;
    std::string comm;
    std::vector<measure::CounterReading> counters;  // event order; pid/match modes
    bool attached = false;                          // counters opened
};

// Mappings an exec replaced: a process's samples taken before `until_ns` (perf clock, as
// samples' time_ns) resolve against them. Between its fork and its exec a child runs its
// parent's code at its parent's addresses.
struct EarlierMappings {
    std::uint64_t until_ns = 0;
    std::vector<measure::MappedModule> modules;
};

struct ProcessRecord {
    ProcessInfo info;
    bool exited = false;   // gone before the recording ended (its data is kept)
    double seen_at_s = 0;  // seconds after the start when it was first attached or sampled
    std::vector<TaskRecord> threads;  // pid/match: per-thread counters
    // command: the command and everything it started, summed by the kernel (inherited
    // counters cannot be split per thread); empty for the processes it started.
    std::vector<measure::CounterReading> inherited;
    std::vector<measure::MappedModule> modules;  // latest snapshot of its file mappings
    std::vector<EarlierMappings> before_exec;    // command: oldest first, from task events
    std::string problem;                         // why it could not be (fully) recorded
};

struct RecordResult {
    workload::Provenance provenance;
    Mode mode = Mode::pid;
    std::vector<pid_t> pids;
    std::string match;
    std::vector<std::string> command;
    double duration_s = 0;
    std::vector<std::string> events;  // counted, in reading order
    std::vector<ProcessRecord> processes;
    std::optional<measure::SamplingInfo> sampling;  // its modules are unused: per process
    // With pid and tid; with --call-graph dwarf their stacks are unwound into `callchain` by
    // the time record() returns (during the recording once the copies held pass 64 MiB).
    std::vector<measure::RawSample> samples;
    std::uint64_t samples_lost = 0;
    std::optional<SpinRecording> spin;                 // --spin: every probed entry and return
    std::optional<InstrumentCalibration> calibration;  // with --spin or --sample
    std::vector<std::string> notes;
    std::optional<int> exit_status;  // command: its exit code, 128+signal when killed
    bool interrupted = false;        // ended by SIGINT/SIGTERM
    std::string interrupted_by;      // "SIGINT" or "SIGTERM" when interrupted
};

// A command that could not be started: exit 127 (not found) or 126 (not executable), as a
// shell does.
class CommandError : public Error {
  public:
    CommandError(const std::string& message, int code) : Error(message), code_(code) {}
    int exit_code() const override { return code_; }

  private:
    int code_;
};

// The mappings and names of a command's processes, replayed from the sampler's task events
// (any order; sorted by time here): an exec starts a process's mappings over (those it replaced
// are kept in before_exec), a fork copies the parent's, each executable file mapping is added
// and replaces what it overlaps. Used for processes that ended before /proc/PID/maps could be
// read, and for samples taken before an exec. A mapping is given from its file's
// start (address - file offset, offset 0), which is how libdwfl finds the load address when the
// file's first, non-executable segment is missing.
struct ReplayedProcess {
    std::string comm;
    std::vector<measure::MappedModule> modules;
    std::vector<EarlierMappings> before_exec;  // what each exec since its fork replaced
};
std::map<pid_t, ReplayedProcess> replay_task_events(std::vector<sampling::TaskEvent> events);

// A process's mappings as last read from /proc (`snapshot`), with the replayed ones it lacks: a
// read can come before the process maps more (a child read while its loader still mapped libc,
// which then ended before the next read), and the kernel's records have them. A replayed
// mapping overlapping one of the snapshot is left out, so a complete snapshot stays as it is
// (its non-executable segments too, which the replay does not hold). Sorted by start.
std::vector<measure::MappedModule> with_replayed_mappings(
    std::vector<measure::MappedModule> snapshot,
    const std::vector<measure::MappedModule>& replayed);

// Records until the target exits, the duration passes or `stop` holds a signal number (the
// CLI's SIGINT/SIGTERM handler). A command stopped by a signal is waited for: after SIGTERM it
// is passed SIGTERM at once; after SIGINT (which a terminal sends the whole process group) it
// has spec.stop_grace to end, then is sent SIGTERM; SIGKILL follows another stop_grace later,
// so the recording ends in bounded time even when the command ignores both. Throws
// UsageError for targets that do not exist, CommandError for commands that cannot start,
// Error when nothing could be attached.
RecordResult record(const RecordSpec& spec, const std::vector<std::string>& argv,
                    const std::atomic<int>& stop);

}  // namespace lockprof::record
