// `record --spin` during a recording: the uprobes on the slow paths (sampling/uprobe_sampler.hpp)
// planned in the targets' files, extended to files they map later, attached to their threads,
// and drained into the recording's SpinRecording (spin.hpp); with --call-graph dwarf, the
// entries' stacks kept per call site (SpinStackReservoirs).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lockprof/pmu/uprobe.hpp"
#include "lockprof/record/recorder.hpp"
#include "lockprof/record/spin.hpp"
#include "lockprof/sampling/uprobe_sampler.hpp"
#include "record/notes.hpp"
#include "record/stack_copies.hpp"

namespace lockprof::record {

// Reservoir sampling per call site: a site's first kSpinStacksPerSite stacks are kept, then its
// n-th replaces a kept one at random with probability kSpinStacksPerSite / n, so what is kept
// is a uniform sample of the site's stacks, in bounded memory.
class SpinStackReservoirs {
  public:
    // `hit` (an entry's stack) is counted in recording.stacks_seen, and kept in
    // recording.hits, or not, with `copies` told of the stack it holds or replaced.
    void keep(SpinRecording& recording, SpinHit hit, StackCopies& copies);

  private:
    struct Reservoir {
        std::uint64_t seen = 0;
        std::vector<std::size_t> kept;  // into SpinRecording::hits
    };
    std::map<std::string, Reservoir> by_site_;
    std::mt19937_64 random_{0x5eed5eedu};  // fixed: a recording's sample is reproducible
};

class SpinProbes {
  public:
    // Finds the uprobe PMU under `root`/sys ("": the machine's); throws Error when there is
    // none. `recording` is set by prepare(); `copies` holds the entries' stacks.
    SpinProbes(const RecordSpec& spec, std::optional<SpinRecording>& recording, Notes& notes,
               StackCopies& copies);

    const pmu::UprobePmu& pmu() const { return pmu_; }
    // Whether prepare() made the probes.
    bool prepared() const { return sampler_.has_value(); }

    // Finds the functions in `binaries` and makes the probes for them.
    void prepare(const std::vector<std::string>& binaries);
    // A command's probes, inherited by its threads and processes: defined in tracefs before
    // it starts. Throws Error when that cannot be done or no function could be probed.
    void prepare_inheritance();
    // Opens the inherited probes on forked, not yet exec'd `child`; the error to end the
    // recording with, "" when they are open.
    std::string attach_inherited(pid_t child, const std::vector<int>& cpus);

    // A process mapped files after the start (dlopen, or a process --match found later):
    // those not searched yet are, and what they define of the --spin functions is probed from
    // now on in every thread of `tasks` ((pid, tid); threads attached later get every probe
    // anyway). `seen_within`: how late lockprof may see a new mapping, for the note.
    void extend(const ProcessRecord& process, const std::vector<std::pair<pid_t, pid_t>>& tasks,
                std::chrono::milliseconds seen_within);
    // Probes thread `tid` of `pid`: 0, or EACCES/EPERM when refused (after the first thread
    // probed; throws Error for the first), ESRCH when the thread ended. Other failures are
    // notes. Throws Error when the kernel refused every function.
    int attach_task(pid_t pid, pid_t tid);

    // Moves the hits recorded so far into the recording; `on_entry(pid)` is told each
    // entry's process first.
    void drain(const std::function<void(pid_t)>& on_entry);
    // Stops the probes and drains the rest; strings of processes that ended before they were
    // read come from their files, through `modules_of`.
    void finish(const std::function<void(pid_t)>& on_entry,
                const StackCopies::ModulesOf& modules_of);

  private:
    std::string attach_error(int error, std::size_t failed) const;
    std::string nothing_probed() const;
    std::optional<std::string> target_string(std::uint32_t pid, std::uint64_t address);
    SpinHit hit_of(sampling::UprobeHit& h, const std::function<void(pid_t)>& on_entry);
    void probe_new_targets(std::vector<SpinProbe> probes, const ProcessRecord& process,
                           const std::vector<std::pair<pid_t, pid_t>>& tasks,
                           std::chrono::milliseconds seen_within);

    const RecordSpec& spec_;
    std::optional<SpinRecording>& recording_;
    Notes& notes_;
    StackCopies& copies_;
    pmu::UprobePmu pmu_;
    std::optional<sampling::UprobeSampler> sampler_;
    bool attached_ = false;        // some thread has probes: later refusals are notes
    std::set<std::string> tried_;  // files searched for --spin functions
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::string> strings_;  // read so far
    SpinStackReservoirs reservoirs_;
};

}  // namespace lockprof::record
