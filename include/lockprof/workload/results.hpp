// What a run produced: raw per-thread figures for every trial of every cell, plus provenance.
// Derived figures (per-acquire metrics, medians, fairness) are computed by analysis/ from these.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockprof/workload/provenance.hpp"
#include "lockprof/workload/spec.hpp"

namespace lockprof::workload {

// Log-linear histogram of acquire latencies in ticks: values below 2^kSubBits are exact, above
// that each power of two is split into 2^kSubBits buckets (worst relative error 1/2^kSubBits).
class LatencyHistogram {
  public:
    static constexpr unsigned kSubBits = 5;
    static constexpr unsigned kBuckets = (64 - kSubBits + 1) << kSubBits;

    void record(std::uint64_t value) {
        ++counts_[bucket_of(value)];
        ++total_;
        if (value > max_) max_ = value;
    }
    void merge(const LatencyHistogram& other);
    std::uint64_t total() const { return total_; }
    std::uint64_t max() const { return max_; }
    // Smallest recorded value v such that at least `quantile` of the values are <= v (upper
    // bound of its bucket, capped at the maximum seen).
    std::uint64_t quantile(double quantile) const;
    bool empty() const { return total_ == 0; }

    // Non-empty buckets as (bucket index, count), for serialisation.
    std::vector<std::pair<unsigned, std::uint64_t>> nonzero() const;
    void set_bucket(unsigned index, std::uint64_t count);
    void set_max(std::uint64_t max) { max_ = max; }

    // Inline, so the measured loop's record() makes no call (workload/loop.hpp).
    static constexpr unsigned bucket_of(std::uint64_t value) {
        constexpr std::uint64_t kLinear = std::uint64_t{1} << kSubBits;
        if (value < kLinear) return static_cast<unsigned>(value);
        const unsigned magnitude = 63 - static_cast<unsigned>(std::countl_zero(value));
        const unsigned shift = magnitude - kSubBits;  // magnitude >= kSubBits here
        const unsigned sub = static_cast<unsigned>((value >> shift) & (kLinear - 1));
        return ((shift + 1) << kSubBits) + sub;
    }
    static std::uint64_t bucket_upper(unsigned bucket);

  private:
    std::vector<std::uint64_t> counts_ = std::vector<std::uint64_t>(kBuckets, 0);
    std::uint64_t total_ = 0;
    std::uint64_t max_ = 0;
};

// A hardware or software counter read at the end of a thread's measured window (filled by the
// PMU instrumentation). Scaling by enabled/running happens in analysis/.
struct CounterReading {
    std::string event;             // alias or libpfm4 name as the user wrote it
    std::uint64_t raw = 0;         // value as read
    std::uint64_t enabled_ns = 0;  // TOTAL_TIME_ENABLED
    std::uint64_t running_ns = 0;  // TOTAL_TIME_RUNNING (0: never scheduled on a counter)
};

// One sample of where a worker thread was (perf_event ring buffer or the timer-signal sampler).
// Raw and position-dependent: addresses are resolved later against RunResult::sampling.modules.
struct RawSample {
    std::uint64_t ip = 0;       // interrupted instruction (with skid unless SamplingInfo::skid
                                // is zero)
    std::uint32_t tid = 0;      // kernel thread id
    std::uint64_t time_ns = 0;  // perf clock / CLOCK_MONOTONIC; only differences mean anything
    std::uint64_t weight = 1;   // period this sample stands for (event counts; ns for clocks)
    std::vector<std::uint64_t> callchain;  // return addresses, innermost caller first
    std::uint32_t pid = 0;                 // process (thread group) id; 0 when not recorded
};

// A file mapped into the measured process when the run ended, so saved samples can be resolved
// to symbols later (`lockprof annotate`) the way /proc/PID/maps would.
struct MappedModule {
    std::string path;
    std::uint64_t start = 0, end = 0, offset = 0;
    std::string permissions;  // "r-xp"
    std::string build_id;     // hex GNU build-id of the file, "" when it has none
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
    std::string event_note;       // why the event differs from the request, "" if it does not
    std::uint64_t period = 0;     // fixed period in event units (0 when frequency based)
    std::uint64_t frequency = 0;  // samples per second of the event (0 when period based)
    int precise_ip = 0;           // precise_ip the kernel granted (perf_event_attr)
    Skid skid = Skid::arbitrary;  // what that level means on this CPU
    std::string precise_note;     // why precise_ip and skid are what they are
    std::vector<MappedModule> modules;
};

struct ThreadResult {
    unsigned index = 0;
    int cpu = -1;  // pinned CPU, -1 when not pinned
    std::uint64_t acquires = 0;
    // Acquires at which this thread's exclusion check found another holder inside (at entry or
    // at exit): non-zero means the lock did not exclude.
    std::uint64_t overlaps = 0;
    std::uint64_t rmw_attempts = 0;
    std::uint64_t spin_iterations = 0;
    std::uint64_t sleeps = 0;  // times the lock gave up the CPU while waiting (pg-slock)
    // The busy work as this worker calibrated it after pinning, all workers at once
    // (workload::calibrate_work): burn() speed, trips, and the measured duration of each.
    double burn_iterations_per_ns = 0;
    std::uint64_t critical_iterations = 0, parallel_iterations = 0;
    double critical_work_ns = 0, parallel_work_ns = 0;
    std::uint64_t cpu_ns = 0;    // CLOCK_THREAD_CPUTIME_ID over the measured window
    std::uint64_t start_ns = 0;  // window start, relative to the trial's release
    std::uint64_t end_ns = 0;    // window end, relative to the trial's release
    LatencyHistogram latency;    // acquire latency in ticks, when --latency
    std::vector<CounterReading> counters;
    // Sampling (--sample): what this thread's sampler recorded and what it had to drop.
    std::vector<RawSample> samples;
    std::uint64_t samples_lost = 0;  // PERF_RECORD_LOST totals, or timer buffer overflow
    bool sampled = false;            // a sampler ran on this thread
};

struct TrialResult {
    unsigned trial = 0;
    std::uint64_t wall_ns = 0;  // release of the start barrier to the last thread's stop
    std::uint64_t ticks = 0;    // the same window in arch::ticks()
    std::vector<ThreadResult> threads;
};

// One lock at one thread count: all its trials.
struct CellResult {
    std::string lock;       // registered name, e.g. "tas" or "tas@llsc"
    std::string algorithm;  // "tas"
    std::string flavour;    // "" for the default build
    arch::Delay delay = arch::Delay::none;
    unsigned threads = 0;
    std::vector<TrialResult> trials;
    bool complete = true;  // false when interrupted before all trials ran
    // Over all trials, non-zero means the lock did not exclude: acquires at which the exclusion
    // check found another holder inside (the threads' overlaps), and increments of shared line 0
    // lost to overlapping holders.
    std::uint64_t overlaps = 0;
    std::uint64_t lost_updates = 0;
};

struct RunResult {
    Provenance provenance;
    RunSpec spec;
    Calibration calibration;
    std::vector<CellResult> cells;
    std::vector<std::string> notes;  // things the user must know (dropped events, fallbacks)
    bool interrupted = false;
    std::optional<SamplingInfo> sampling;  // set when --sample ran
};

}  // namespace lockprof::workload
