// Samplers: where each worker thread spends its time, one sample at a time.
//
// Two implementations behind measure::Instrumentation, both per thread and opened by the
// thread they measure (pid 0, cpu -1):
//  - perf: a non-inherited perf_event with an mmap ring buffer (the kernel refuses mmap on
//    inherited events). PERF_SAMPLE_IP | TID | TIME | PERIOD | CALLCHAIN, user space only;
//    with --call-graph dwarf also REGS_USER | STACK_USER, unwound when the thread's
//    measurement ends (collect()).
//  - timer: a CLOCK_THREAD_CPUTIME_ID POSIX timer signalling its own thread (SIGEV_THREAD_ID);
//    the handler records the interrupted PC and a frame-pointer call chain into a buffer
//    allocated before the trial. For machines where perf_event_open is missing or denied.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <linux/perf_event.h>

#include "lockprof/pmu/aliases.hpp"
#include "lockprof/measure/instrument.hpp"
#include "lockprof/measure/data.hpp"

namespace lockprof::sampling {

enum class SamplerKind { automatic, perf, timer };

// perf record's default is 4000 Hz; 1000 Hz keeps the cost of a sample (an interrupt, a user
// stack walk, a ring-buffer write) under 1% of a core while a 1 s trial still gives each
// thread ~1000 samples, enough for instruction shares to the percent.
inline constexpr std::uint64_t kDefaultFrequency = 1000;

struct SamplerRequest {
    SamplerKind kind = SamplerKind::automatic;
    std::string event = "cycles";
    bool event_given = false;  // the user named the event (otherwise cycles, then cpu-clock)
    std::optional<std::uint64_t> period;     // event units (ns for cpu-clock and the timer)
    std::optional<std::uint64_t> frequency;  // samples per second
    // Longest window a thread is sampled for (the trial duration), to size the timer
    // sampler's preallocated buffers; nullopt for --acquires runs.
    std::optional<std::uint64_t> window_ns;
    // Sample kernel-mode code too (record --kernel): system calls and faults then show as
    // "[kernel]" instead of going unsampled. Needs perf_event_paranoid <= 1 or CAP_PERFMON.
    bool include_kernel = false;
    // --call-graph dwarf: copy this many bytes of each sample's user stack, with the user
    // registers an unwinder starts from (PERF_SAMPLE_STACK_USER, PERF_SAMPLE_REGS_USER), and
    // unwind them after the measurement (symbols/unwinder.hpp); 0: the kernel's frame-pointer
    // call chains. The timer sampler cannot copy stacks.
    std::uint32_t dwarf_stack = 0;
};

// The buffer of a sampling event: 16 data pages for frame-pointer samples; with stack copies,
// enough pages for about 128 samples (the copy plus ~512 bytes each), at most 256 (1 MiB).
std::size_t ring_data_pages(const perf_event_attr& attr);

class Sampler : public measure::Instrumentation {
  public:
    // What sampler and event were used and why (goes into RunResult::sampling).
    virtual const measure::SamplingInfo& info() const = 0;
    // Things the user must know that happened while sampling (threads that could not be
    // sampled, buffers that had to shrink). Each distinct message once.
    virtual std::vector<std::string> notes() const = 0;
};

// Picks the sampler (probing perf_event_open on the calling thread for `automatic`) and
// prepares it. Throws UsageError for contradictory requests and Error when a forced sampler
// cannot work here.
std::unique_ptr<Sampler> make_sampler(const SamplerRequest& request);

// The perf_event a sampler would sample for `request`: the requested event, else cpu-clock
// when the CPU cannot count it (info.event_note says so), probed on the calling thread.
// `error` is the one-line reason when perf_event sampling does not work here at all.
struct PerfChoice {
    perf_event_attr attr{};
    measure::SamplingInfo info;  // sampler "perf"; sampler_reason left to the caller
    std::string error;
};
PerfChoice choose_perf_event(const SamplerRequest& request);

std::unique_ptr<Sampler> make_perf_sampler(const perf_event_attr& attr, measure::SamplingInfo info);
std::unique_ptr<Sampler> make_timer_sampler(std::uint64_t period_ns,
                                            std::optional<std::uint64_t> window_ns,
                                            measure::SamplingInfo info);

// How the call stacks were taken, in one line for the reports: "frame pointers (the kernel's
// walk)", or for --call-graph dwarf the stack size, how many samples were unwound, in how long,
// and how many found no caller.
std::string call_graph_summary(const measure::SamplingInfo& info);

// What the precise_ip the kernel granted means for samples of `event` on `isa`: the skid and
// the note the annotation prints. `hardware`: counted by a PMU (software clocks have no precise
// mode); `spe`: an arm_spe_0 event source exists (named in the aarch64 note). Per
// perf_event_open(2), x86 precise_ip 1 is constant skid, 2 requested and 3 required zero skid
// (Intel PEBS, AMD IBS); the arm64 kernel accepts precise_ip on core PMUs and ignores it, so
// there it never removes skid (only SPE, a separate PMU, names the instruction).
struct SkidMeaning {
    measure::Skid skid = measure::Skid::arbitrary;
    std::string note;
};
SkidMeaning skid_meaning(pmu::Isa isa, bool hardware, int granted, std::string_view event,
                         bool spe = false);

}  // namespace lockprof::sampling
