// Every entry and return of chosen functions in other processes, for `record --spin`: a
// uprobe and a uretprobe (pmu/uprobe.hpp) per function, sampling each hit with its thread and
// time; an entry also with the user registers the call ABI needs (arch/call_abi.hpp: the
// arguments and, on x86-64, the stack word at the stack pointer, the return address). Opened
// per thread (--pid/--match) or per CPU inherited by a command and everything it starts, as
// TaskSampler does. All the events of one thread (one CPU) write to one ring buffer, their
// records told apart by PERF_SAMPLE_IDENTIFIER. The kernel also counts each event's hits, so
// entries are exact even when a full buffer loses records.
//
// With stacks (`record --spin --call-graph dwarf`), each function also gets a third event on
// its entry that records the registers an unwinder needs and a copy of the user stack, into a
// ring buffer of its own: its big records never push the entries and returns out, and when
// it is full the kernel drops stack records only (counted apart). Each copy carries the call
// ABI's registers too, so it names its call site as an entry does; the recorder keeps a
// bounded random sample of them per call site.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lockprof/pmu/trace_uprobe.hpp"
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
    // An entry's stack, recorded besides the exact entry record of the same call: regs and
    // return_address as an entry's, plus the user registers for the unwinder
    // (arch::unwind_registers()'s mask) and the stack copy.
    bool is_stack = false;
    std::vector<std::uint64_t> user_regs;
    std::vector<unsigned char> user_stack;
    std::uint32_t pid = 0, tid = 0;
    std::uint64_t time_ns = 0;                    // perf clock
    std::vector<std::uint64_t> regs;              // entry: the call ABI's registers
    std::optional<std::uint64_t> return_address;  // entry
    std::optional<std::uint64_t> return_value;    // return: rax / x0
};

class UprobeSampler {
  public:
    // `stack_size`: bytes of user stack the stack events copy (--call-graph dwarf,SIZE); 0
    // for no stack events.
    UprobeSampler(const pmu::UprobePmu& pmu, std::vector<UprobeTarget> targets,
                  std::uint32_t stack_size = 0);
    ~UprobeSampler();
    UprobeSampler(const UprobeSampler&) = delete;
    UprobeSampler& operator=(const UprobeSampler&) = delete;

    // Probes every target's entries and returns in thread `tid` from now on (the targets from
    // index `from` on: those added later to a thread probed already). The events are enabled
    // only once their buffers are mapped, so the kernel's counts and the records cover the
    // same calls. Returns 0, or the errno perf_event_open (or mmap) gave, with `failed` the
    // target it gave it for.
    int attach_task(pid_t tid, std::size_t& failed, std::size_t from = 0);
    // More targets (functions in a library a process loaded later), at the end of targets(),
    // checked as check_targets() does; returns the index of the first.
    std::size_t add_targets(std::vector<UprobeTarget> targets);
    // Defines the probes that attach_inherited() opens, in tracefs: false, with `why`, when
    // tracefs cannot be used (then nothing can be inherited safely). A target tracefs refuses
    // is dropped, as check_targets() drops one. Call before the command starts.
    bool prepare_inheritance(std::string& why);
    // Probes `pid` and every thread and process it starts on each of `cpus`, from its next
    // exec on (open between fork and exec; after prepare_inheritance()).
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
    // Entry and return records lockprof could not read (not in the layout it asked for, or of
    // an event it did not open): none, unless the kernel and lockprof disagree.
    std::uint64_t unreadable() const;
    // Drains that found an entry and return buffer full: its last losses may be in no
    // PERF_RECORD_LOST, which the kernel writes only at its next write there.
    std::uint64_t found_full() const;
    // Stack records lost to full stack buffers (the entries and returns are not affected).
    std::uint64_t stacks_lost() const;
    std::vector<std::string> notes() const { return {notes_.begin(), notes_.end()}; }
    // Opens each target's entry probe on lockprof's own process, where the kernel checks the
    // instruction when lockprof maps the file too (glibc): a refused target is dropped now
    // rather than when an inherited event is enabled at the command's exec, silently.
    void check_targets(std::size_t from = 0);
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
        bool is_stack = false;
    };
    perf_event_attr probe_attr(std::size_t target, bool return_probe, bool inherited) const;
    int open_all(pid_t pid, int cpu, bool inherited, std::size_t& failed, std::size_t from = 0);
    void open_stacks(pid_t pid, int cpu, bool inherited, std::size_t from);
    void enable(std::size_t first_event);
    void keep_probes_in_every_process(int cpu);
    void refuse(std::size_t target, int error);
    // One PERF_RECORD_SAMPLE's hit; nullopt when it cannot be read, with `stack_record` set
    // when it was a stack event's.
    std::optional<UprobeHit> read_hit(const unsigned char* body, std::size_t size,
                                      bool& stack_record) const;

    pmu::UprobePmu pmu_;
    // Inherited probes' definitions, and per target the tracepoint ids of its entry and return:
    // removed after every event on them is closed (members go in reverse order).
    std::unique_ptr<pmu::TraceUprobes> tracefs_;
    std::vector<std::array<long, 2>> trace_ids_;
    std::vector<UprobeTarget> targets_;
    std::uint32_t stack_size_ = 0;
    std::vector<std::shared_ptr<RingBuffer>> rings_;
    std::vector<std::shared_ptr<RingBuffer>> stack_rings_;
    std::vector<Event> events_;                 // every open event (ring owners included)
    std::map<std::uint64_t, std::size_t> ids_;  // kernel event id -> index in events_
    std::vector<int> extra_fds_;                // events writing to another's ring
    std::set<std::string> notes_;
    std::set<std::size_t> unusable_;
    std::map<std::size_t, std::string> refusals_;
};

}  // namespace lockprof::sampling
