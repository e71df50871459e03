// The measurement vocabulary: what a counter read, a sample and a mapped file are, shared by the
// modules that produce them (pmu/, sampling/), resolve them (symbols/) and keep them (workload/
// results, record/). It depends on nothing else in lockprof, so each of those can include it
// without including the others.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockprof::measure {

// A hardware or software counter read at the end of a thread's measured window (filled by the
// PMU instrumentation). Scaling by enabled/running happens in analysis/.
struct CounterReading {
    std::string event;             // alias or libpfm4 name as the user wrote it
    std::uint64_t raw = 0;         // value as read
    std::uint64_t enabled_ns = 0;  // TOTAL_TIME_ENABLED
    std::uint64_t running_ns = 0;  // TOTAL_TIME_RUNNING (0: never scheduled on a counter)
};

// A counter reading scaled for multiplexing (raw * enabled / running); nullopt when it never
// ran.
inline std::optional<double> scaled_value(const CounterReading& r) {
    if (r.running_ns == 0) return std::nullopt;
    if (r.running_ns >= r.enabled_ns) return static_cast<double>(r.raw);
    return static_cast<double>(r.raw) *
           (static_cast<double>(r.enabled_ns) / static_cast<double>(r.running_ns));
}

// One sample of where a worker thread was (perf_event ring buffer or the timer-signal sampler).
// Raw and position-dependent: addresses are resolved later against SamplingInfo::modules.
struct RawSample {
    std::uint64_t ip = 0;       // interrupted instruction (with skid unless SamplingInfo::skid
                                // is zero)
    std::uint32_t tid = 0;      // kernel thread id
    std::uint64_t time_ns = 0;  // perf clock / CLOCK_MONOTONIC; only differences mean anything
    std::uint64_t weight = 1;   // period this sample stands for (event counts; ns for clocks)
    std::vector<std::uint64_t> callchain;  // return addresses, innermost caller first
    std::uint32_t pid = 0;                 // process (thread group) id; 0 when not recorded
    // --call-graph dwarf, until they are unwound into `callchain` and emptied
    // (symbols::UnwinderCache): the user registers the kernel sampled
    // (arch::unwind_registers()'s mask, in ascending perf register number) and its copy of the
    // user stack from the stack pointer up.
    // (Brace-initialised so the aggregate initialisations that stop at pid stay warning-free.)
    std::vector<std::uint64_t> user_regs{};
    std::vector<unsigned char> user_stack{};
};

// A file mapped into the measured process when the run ended, so saved samples can be resolved
// to symbols later (`lockprof annotate`) the way /proc/PID/maps would.
struct MappedModule {
    std::string path;
    std::uint64_t start = 0, end = 0, offset = 0;
    std::string permissions;  // "r-xp"
    std::string build_id;     // hex GNU build-id of the file, "" when it has none

    bool operator==(const MappedModule&) const = default;
};

// How far a sample's ip may lie from the instruction that caused the event, whatever
// precise_ip the kernel granted: on arm64 the kernel accepts precise_ip on core PMUs and ignores
// it (sampling::skid_meaning decides per architecture).
enum class Skid : std::uint8_t {
    arbitrary,  // an interrupt's skid: the sample lands some instructions after the cause
    constant,   // a fixed distance after it (x86 precise_ip 1)
    zero,       // the instruction that caused the event (x86 precise_ip 2 and 3: PEBS, IBS)
};

constexpr std::string_view skid_name(Skid skid) {
    switch (skid) {
        case Skid::arbitrary:
            return "arbitrary";
        case Skid::constant:
            return "constant";
        case Skid::zero:
            return "zero";
    }
    return "?";
}

// How samples were taken: written once per run when sampling was on.
struct SamplingInfo {
    std::string sampler;          // "perf" or "timer"
    std::string sampler_reason;   // why that sampler (the auto choice or the user's)
    std::string requested_event;  // what --sample-event said
    std::string event;            // what was actually sampled ("cpu-clock" after a fallback)
    std::string event_note;       // why the event or its rate differ from the request, or ""
    std::uint64_t period = 0;     // fixed period in event units (0 when frequency based)
    std::uint64_t frequency = 0;  // samples per second of the event (0 when period based)
    int precise_ip = 0;           // precise_ip the kernel granted (perf_event_attr)
    Skid skid = Skid::arbitrary;  // what that level means on this CPU
    std::string precise_note;     // why precise_ip and skid are what they are
    bool kernel = false;          // kernel-mode code was sampled too (record --kernel)
    // How call chains were taken (--call-graph): "fp", the kernel's walk of the frame pointers,
    // or "dwarf", each sample's user registers and `stack_size` bytes of its stack, unwound by
    // lockprof from the files' call frame information after the measurement.
    std::string call_graph = "fp";
    std::uint32_t stack_size = 0;  // dwarf: bytes of user stack copied per sample
    std::string call_graph_note;   // why call_graph is not what was asked for ("" when it is)
    // dwarf: samples unwound, those where no caller was found, and the time it took.
    std::uint64_t unwound = 0;
    std::uint64_t unwound_without_callers = 0;
    double unwind_seconds = 0;
    std::vector<MappedModule> modules;
};

// What the instruments attached to one thread measured: counter readings and samples. A lock
// workload's ThreadResult and a recorded thread both carry it.
struct ThreadMeasurements {
    std::vector<CounterReading> counters;
    // Sampling (--sample): what this thread's sampler recorded and what it had to drop.
    std::vector<RawSample> samples;
    std::uint64_t samples_lost = 0;  // PERF_RECORD_LOST totals, or timer buffer overflow
    bool sampled = false;            // a sampler ran on this thread
};

}  // namespace lockprof::measure
