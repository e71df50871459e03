// Every entry and return of chosen functions in other processes, for `record --spin`: a
// uprobe and a uretprobe (pmu/uprobe.hpp) per function, sampling each hit with its thread and
// time; an entry also with the user registers the call ABI needs (arch/call_abi.hpp: the
// arguments and, on x86-64, the stack word at the stack pointer, the return address). Opened
// per thread (--pid/--match) or per CPU inherited by a command and everything it starts, as
// TaskSampler does. All the events of one thread (one CPU) write to one ring buffer, their
// records told apart by PERF_SAMPLE_IDENTIFIER. The kernel also counts each event's hits, so
// entries are exact even when a full buffer loses records.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lockprof/pmu/uprobe.hpp"

namespace lockprof::sampling {

struct RingBuffer;

struct UprobeTarget {
    std::string path;  // the ELF file
    std::uint64_t file_offset = 0;
    std::string function;  // for messages
};

struct UprobeHit {
    std::size_t probe = 0;  // index into the sampler's targets
    bool is_return = false;
    std::uint32_t pid = 0, tid = 0;
    std::uint64_t time_ns = 0;                    // perf clock
    std::vector<std::uint64_t> regs;              // entry: the call ABI's registers
    std::optional<std::uint64_t> return_address;  // entry
};

class UprobeSampler {
  public:
    UprobeSampler(const pmu::UprobePmu& pmu, std::vector<UprobeTarget> targets);
    ~UprobeSampler();
    UprobeSampler(const UprobeSampler&) = delete;
    UprobeSampler& operator=(const UprobeSampler&) = delete;

    // Probes every target's entries and returns in thread `tid` from now on. Returns 0, or
    // the errno perf_event_open (or mmap) gave, with `failed` the target it gave it for.
    int attach_task(pid_t tid, std::size_t& failed);
    // Probes `pid` and every thread and process it starts on each of `cpus`, from its next
    // exec on (open between fork and exec).
    int attach_inherited(pid_t pid, const std::vector<int>& cpus, std::size_t& failed);

    // Hits recorded since the last call, in no particular order across buffers.
    std::vector<UprobeHit> drain();
    void stop();

    const std::vector<UprobeTarget>& targets() const { return targets_; }
    // The kernel's count of each target's entries and returns over every attached event
    // (inherited children included once they ended): exact, lost records or not.
    struct Counts {
        std::uint64_t entries = 0, returns = 0;
    };
    std::vector<Counts> counts() const;
    std::uint64_t lost() const;
    std::vector<std::string> notes() const { return {notes_.begin(), notes_.end()}; }
    // Opens each target's entry probe on lockprof's own process, where the kernel checks the
    // instruction when lockprof maps the file too (glibc): a refused target is dropped now
    // rather than when an inherited event is enabled at the command's exec, silently.
    void check_targets();
    // Targets the kernel refused to probe at all (said in notes()), dropped from every attach,
    // and why ("" when not refused).
    bool unusable(std::size_t target) const { return unusable_.count(target) > 0; }
    std::string refusal(std::size_t target) const;
    // Whether every target has been refused.
    bool none_usable() const { return unusable_.size() == targets_.size(); }

  private:
    struct Event {
        int fd = -1;
        std::size_t probe = 0;
        bool is_return = false;
    };
    int open_all(pid_t pid, int cpu, bool inherited, std::size_t& failed);
    void refuse(std::size_t target, int error);

    pmu::UprobePmu pmu_;
    std::vector<UprobeTarget> targets_;
    std::vector<std::shared_ptr<RingBuffer>> rings_;
    std::vector<Event> events_;                 // every open event (ring owners included)
    std::map<std::uint64_t, std::size_t> ids_;  // kernel event id -> index in events_
    std::vector<int> extra_fds_;                // events writing to another's ring
    std::set<std::string> notes_;
    std::set<std::size_t> unusable_;
    std::map<std::size_t, std::string> refusals_;
};

}  // namespace lockprof::sampling
