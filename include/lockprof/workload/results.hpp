// What a run produced: raw per-thread figures for every trial of every cell, plus provenance.
// Derived figures (per-acquire metrics, medians, fairness) are computed by analysis/ from these.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockprof/measure/data.hpp"
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

// One worker's figures. The measurements the PMU counters and samplers attach
// (measure::ThreadMeasurements: counters, samples) are its base, so an instrument fills them
// without knowing the lock workload.
struct ThreadResult : measure::ThreadMeasurements {
    unsigned index = 0;
    int cpu = -1;  // pinned CPU, -1 when not pinned
    std::uint64_t acquires = 0;
    // Acquires at which this thread's exclusion check found another holder inside (at entry or
    // at exit): non-zero means the lock did not exclude.
    std::uint64_t overlaps = 0;
    // --read-fraction: of `acquires`, those taken shared (the rest exclusive), and the seed of
    // the thread's read/write mix generator (workload::mix_seed()), so a run can be repeated.
    std::uint64_t read_acquires = 0;
    std::uint64_t mix_seed = 0;
    std::uint64_t rmw_attempts = 0;
    std::uint64_t spin_iterations = 0;
    std::uint64_t sleeps = 0;  // times the lock gave up the CPU while waiting (pg-slock)
    // The busy work as this worker calibrated it after pinning, all workers at once
    // (workload::calibrate_work): burn() speed, trips, and the measured duration of each.
    double burn_iterations_per_ns = 0;
    std::uint64_t critical_iterations = 0, parallel_iterations = 0;
    double critical_work_ns = 0, parallel_work_ns = 0;
    std::uint64_t cpu_ns = 0;       // CLOCK_THREAD_CPUTIME_ID over the measured window
    std::uint64_t start_ns = 0;     // window start, relative to the trial's release
    std::uint64_t end_ns = 0;       // window end, relative to the trial's release
    LatencyHistogram latency;       // acquire latency in ticks, when --latency
    LatencyHistogram read_latency;  // of those, the shared acquires' (--read-fraction)
    std::uint64_t write_acquires() const { return acquires - read_acquires; }
};

// The huge page a trial's lock sat at the start of (`--lock-page huge`, workload/lock_page.hpp).
struct LockPageUse {
    std::uint64_t page_size = 0;  // bytes
    // Where the page is in physical memory; nullopt where /proc/self/pagemap did not say (it
    // shows frame numbers only to root), never a made-up 0.
    std::optional<std::uint64_t> physical_address;
};

// What the hypervisor took from the CPUs a trial's threads ran on, over a window that encloses
// every thread's (workload/steal.hpp: /proc/stat's steal column, read before the start gate
// opens and after the last thread stops).
struct TrialSteal {
    // The CPUs it covers: the pinned ones, or every CPU the threads were allowed to run on (an
    // unpinned thread may have run on any of them).
    std::vector<int> cpus;
    std::uint64_t steal_ns = 0;   // summed over `cpus`
    std::uint64_t window_ns = 0;  // between the two readings
    std::uint64_t tick_ns = 0;    // the resolution of each CPU's figure (one USER_HZ tick)
};

struct TrialResult {
    unsigned trial = 0;
    unsigned process = 0;       // which of RunSpec::processes ran it (0 in a one-process run)
    std::uint64_t wall_ns = 0;  // release of the start barrier to the last thread's stop
    std::uint64_t ticks = 0;    // the same window in arch::ticks()
    std::vector<ThreadResult> threads;
    std::optional<LockPageUse> lock_page;  // --lock-page huge; nullopt with normal
    // nullopt: unknown (no steal column in /proc/stat, unreadable, or a file written before
    // lockprof measured it), never a made-up 0.
    std::optional<TrialSteal> steal;
};

// Why a cell stopped running trials.
enum class TrialStop {
    planned,      // --trials N: all N ran
    settled,      // --trials auto: its interval became narrower than the equivalence band
    budget,       // --trials auto: the --max-time budget ran out first
    interrupted,  // a signal or the watchdog ended the sweep first
};

// "planned", "settled", "budget", "interrupted" (the result file's `stop.reason`).
constexpr const char* trial_stop_name(TrialStop stop) {
    switch (stop) {
        case TrialStop::planned:
            return "planned";
        case TrialStop::settled:
            return "settled";
        case TrialStop::budget:
            return "budget";
        case TrialStop::interrupted:
            return "interrupted";
    }
    return "?";
}

// The verification trial(s) a cell ran before its measured ones (workload/sweep.hpp): the loop
// with the exclusion check on every acquire and no instruments, which also warms the cell up.
// Their figures prove exclusion; they are never among the measured trials' figures.
struct Verification {
    unsigned trials = 0;  // 1, or one per process with --processes
    std::uint64_t acquires = 0;
    std::uint64_t wall_ns = 0;  // summed over the trials
    std::uint64_t overlaps = 0;
    std::uint64_t lost_updates = 0;
};

// One lock at one thread count: all its trials.
struct CellResult {
    std::string lock;       // registered name, e.g. "tas" or "tas@llsc"
    std::string algorithm;  // "tas"
    std::string flavour;    // "" for the default build
    arch::Delay delay = arch::Delay::none;
    unsigned threads = 0;
    std::vector<TrialResult> trials;
    // RunSpec::perturbation_check: the same cell's trials without instruments, trial i beside
    // trials[i] (alternately before and after it), numbered as they are. They give the
    // throughput verdicts (analysis/summary.hpp) and the observer effect, instrumented / plain;
    // their threads carry no counters or samples. Empty without the check.
    std::vector<TrialResult> plain_trials;
    bool complete = true;  // false when interrupted before all trials ran
    TrialStop stop = TrialStop::planned;
    // Over the verification and every measured trial, non-zero means the lock did not exclude:
    // acquires at which the exclusion check found another holder inside (the threads' overlaps;
    // only the verification checks every acquire), and increments of the first shared datum
    // lost to overlapping holders (measured trials compare it too, when there are shared lines).
    std::uint64_t overlaps = 0;
    std::uint64_t lost_updates = 0;
    // nullopt: the lock claims no exclusion (`empty`), the sweep was interrupted before it, or a
    // file written before lockprof had verification trials.
    std::optional<Verification> verification;
};

struct RunResult {
    Provenance provenance;
    RunSpec spec;
    Calibration calibration;
    std::vector<CellResult> cells;
    std::vector<std::string> notes;  // things the user must know (dropped events, fallbacks)
    bool interrupted = false;
    std::string interrupted_by;  // "SIGINT", "SIGTERM" or "watchdog"; "" when not interrupted
    std::optional<measure::SamplingInfo> sampling;  // set when --sample ran
};

}  // namespace lockprof::workload
