// The explanation: a short, numbered diagnosis per compared lock pair at each thread count,
// built only from measured evidence. Every claim quotes its numbers; where the evidence is
// weak the diagnosis says "inconclusive" instead of guessing.
//
// Rules are data: each has an id, what it needs, thresholds in ExplainThresholds, and a
// function from the pair's evidence to zero or more findings. Tests feed synthetic evidence
// (the 2020 thread's 83.93% stxr / 81.29% b.ne profiles, LSE builds) straight into explain().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockprof/analysis/stats.hpp"
#include "lockprof/analysis/steal.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/analysis/verdict.hpp"
#include "lockprof/common/number_format.hpp"
#include "lockprof/symbols/mnemonics.hpp"

namespace lockprof::analysis {

struct InstructionShare {
    std::string mnemonic;  // "stxr", "lock cmpxchg"
    double share = 0;      // of the cell's samples, 0..1
    bool in_acquire_loop = false;
    std::string previous_mnemonic;  // the instruction before it (skid reading)
};

// Everything explain() may use about one cell. Absent evidence stays empty.
struct CellEvidence {
    std::string lock;       // "tas@llsc"
    std::string algorithm;  // "tas"
    std::string flavour;    // "", "llsc", "lse", "outline"
    unsigned threads = 0;
    Spread acquires_per_second;
    // What the throughput verdict compares (CellSummary::verdict_values); empty: the trials.
    std::vector<double> verdict_values;
    Spread rmw_per_acquire;
    Spread spins_per_acquire;
    Spread sleeps_per_acquire;  // pg-slock's pg_usleep
    Spread cpus_used;           // CPUs the threads ran on, on average (summary.hpp)
    // --read-fraction > 0: acquires/s taken shared and exclusive, and each kind's latency
    // where --latency measured both (summary.hpp).
    std::optional<double> read_per_second, write_per_second;
    std::optional<LatencySummary> read_latency, write_latency;
    std::vector<std::pair<std::string, Spread>> events_per_acquire;  // counted events only
    Spread acquires;  // acquires per trial, all threads: what the event counts are over
    std::vector<DerivedMetric> derived;  // IPC, stxr fail ratio, where their inputs were counted
    // Sampling: sampled instructions of the annotated functions and the acquire loop's code.
    std::uint64_t samples = 0;
    bool precise = false;  // precise_ip granted: no skid
    std::vector<InstructionShare> instructions;
    std::vector<std::string> acquire_loop_mnemonics;
    // `--trials auto`: the cell's line when the budget stopped it unsettled (adaptive_note).
    std::string trials_note;
    // The hypervisor's steal over the cell's trials: high steal is spread the host caused.
    StealTally steal;
    // The observer-effect check: where the instruments raised or lowered the cell's throughput,
    // the sentence that says so (perturbation_claim, summary.hpp); "" otherwise.
    std::string perturbation;
};

struct ExplainThresholds {
    std::uint64_t min_samples = 200;  // fewer samples: no instruction claims
    double dominant_share = 0.30;     // an instruction this hot is "where the time goes"
    double rmw_ratio = 2.0;           // rmw/acquire differs at least this much
    double min_rmw = 1.5;             // and the larger is at least this (retries happen)
    double exclusive_fail_ratio = 2.0;
    // A counted event explains a difference only when the two locks' counts differ by at least
    // this much per acquire (and by more than the counts' own noise): a context switch per
    // million acquires moves no throughput.
    double min_event_difference = 0.01;
    double cpu_use_ratio = 0.8;  // one lock's threads ran on at most this share of the other's CPUs
    // A queue lock "spins locally" when it waited (at least this many polls per acquire) with
    // at most queue_max_rmw read-modify-writes per acquire: the polls were plain loads.
    double queue_min_spins = 1.0;
    double queue_max_rmw = 3.0;
    // A reader-writer lock makes its writers wait when their median or p99 acquire latency is
    // at least this many times the readers'.
    double writer_latency_ratio = 2.0;
    // The throughput verdict's confidence and equivalence band (verdict.hpp), the same the
    // run table uses; the pairs of one explain() call are one Bonferroni family.
    VerdictOptions verdict;
};

struct Finding {
    std::string rule;  // which rule said it
    std::string text;  // the claim, with its numbers
    // Whether it tells the pair apart. Numbers that are equivalent, inconclusive, from too few
    // trials or counted 0 for both are quoted but explain nothing.
    bool explains = true;
};

struct PairDiagnosis {
    std::string baseline;  // the first lock
    std::string other;
    unsigned threads = 0;
    std::vector<Finding> findings;
    bool inconclusive = false;  // the throughput verdict is not settled and nothing explains
    std::optional<Effect> throughput{};  // the throughput verdict (the table's `vs first`)
    bool sampled = false;                // either cell has samples
};

// Evidence from a run's summaries (throughput, rmw, spins, events); sampling evidence is added
// by the annotation (sampling::add_instruction_evidence).
std::vector<CellEvidence> evidence_from(const std::vector<CellSummary>& summaries);

// One diagnosis per (baseline, other) pair at each thread count, in the given order.
std::vector<PairDiagnosis> explain(const std::vector<CellEvidence>& cells,
                                   const ExplainThresholds& thresholds = {});

// "Explanation (from measured evidence only):" then, Detail::full, each pair's numbered
// findings; Detail::brief, each pair's conclusion once: a pair with evidence gets its verdict
// and its numbered evidence, pairs with nothing but a verdict share one line per conclusion
// ("ttas, cas vs tas at 1 and 2 threads: inconclusive ...").
std::string render_explanation(const std::vector<PairDiagnosis>& diagnoses,
                               Detail detail = Detail::full);

}  // namespace lockprof::analysis
