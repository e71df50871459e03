// Per-acquire figures for each cell, summarised over trials, and the comparison with the first
// lock at the same thread count. Everything derived lives here; results hold only raw counts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lockprof/analysis/derived_events.hpp"
#include "lockprof/analysis/notes.hpp"
#include "lockprof/analysis/stats.hpp"
#include "lockprof/analysis/verdict.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::analysis {

struct LatencySummary {
    double p50_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
    std::uint64_t samples = 0;
};

// An event's per-acquire value after multiplex scaling (value * enabled / running).
struct EventSummary {
    std::string event;
    Spread per_acquire;
    double running_fraction = 0;  // running / enabled, worst thread, median over trials
    bool counted = false;         // false: never ran on a counter ("not counted", not zero)
};

// The throughput of a cell against the first lock at its thread count, through the one engine
// (verdict.hpp): effect.ratio is the ratio of geometric means of acquires/s over trials.
struct Comparison {
    std::string baseline;  // lock it is compared with (first lock at this thread count)
    Effect effect;         // this lock vs the baseline, one of the run's family of comparisons
    // What the effect resampled (`--processes`): from kMinTrials processes on, each process's
    // trials pooled into its geometric mean, one value per process; else every trial.
    unsigned processes = 1;
    bool over_processes = false;
};

struct CellSummary {
    const workload::CellResult* cell = nullptr;
    unsigned trials = 0;
    Spread acquires;  // total acquires per trial
    Spread acquires_per_second;
    Spread wall_ns_per_acquire;  // window / acquires: inverse throughput
    Spread cpu_ns_per_acquire;   // CPU time of all threads / acquires: cost incl. spinning
    // CPU time of all threads / the trial window: how many CPUs the threads ran on, on average
    // (perf stat's "CPUs utilized"). Below the thread count they waited off-CPU: slept in the
    // lock, or were descheduled (more threads than CPUs, other load).
    Spread cpus_used;
    Spread ticks_per_acquire;   // tick counter (TSC / CNTVCT) over the window / acquires
    Spread rmw_per_acquire;     // atomic read-modify-writes per acquire
    Spread spins_per_acquire;   // polls of a held lock per acquire
    Spread sleeps_per_acquire;  // times a waiter gave up its CPU per acquire (pg-slock)
    // The busy work as the workers measured it after calibrating (ns per execution of the
    // calibrated critical / parallel work; median over threads, per trial). 0: none asked for.
    Spread critical_work_ns;
    Spread parallel_work_ns;
    // Share of the trial window (first thread's start to last thread's end) in which every
    // thread was running the loop: latest start to earliest end. Below 1 some threads ran with
    // fewer rivals than the thread count says (acquire-limited runs of unfair locks).
    Spread full_concurrency;
    Spread jain;  // fairness of per-thread acquires
    Spread min_max;
    Spread cv;
    std::optional<LatencySummary> latency;  // all trials merged
    // --read-fraction > 0: the acquires taken shared (per trial, and per second of the window)
    // and the exclusive rest per second; the latency of each kind when --latency measured it.
    std::optional<Spread> read_acquires, read_acquires_per_second, write_acquires_per_second;
    std::optional<LatencySummary> read_latency, write_latency;
    std::vector<EventSummary> events;
    std::vector<DerivedMetric> derived;    // IPC, stxr fail ratio (derived_events.hpp)
    std::optional<Comparison> comparison;  // absent for the baseline itself
    // The values the `vs first` verdicts compare for this cell: acquires/s per trial, or with
    // 3 or more --processes one pooled value per process. The explanation judges with them too.
    std::vector<double> verdict_values;
    // The geometric mean of verdict_values: the figure whose ratio `vs first` shows, and the
    // acquires/s the tables print. 0 when a value is 0 or there is none.
    double throughput = 0;
    // The observer-effect check (RunSpec::perturbation_check): the ratio of this cell's
    // instrumented acquires/s to its plain twins' (geometric means; base = plain, other =
    // instrumented), one of a family over every such cell. Its verdict reads through
    // perturbation_verdict_name: raised (faster), lowered (slower), equivalent, inconclusive.
    // When present, acquires_per_second, verdict_values and throughput are the plain trials';
    // every per-acquire figure stays the instrumented trials' (they carry counts and samples).
    std::optional<Effect> perturbation;
    std::string instruments;  // what ran in the instrumented trials: "sampling", "counters", ...
    // `--trials auto` cells only (stopped as settled or by the budget): how precisely the
    // cell's own trials pin down its throughput, judged with the run's band, Bonferroni over
    // every cell of the run: what the sweep's stopping rule used.
    std::optional<Precision> precision;
};

// Every cell's summary; the comparisons with the first lock are judged together (Bonferroni
// over all of them) against `options`' equivalence band.
std::vector<CellSummary> summarize(const workload::RunResult& run,
                                   const VerdictOptions& options = {});

// How many `vs first` comparisons a run's summaries make: the Bonferroni family of the table
// and the explanation.
std::size_t comparison_count(const std::vector<CellSummary>& summaries);

// The options the summaries' comparisons were judged with (the defaults when they make none),
// so the explanation judges its pairs exactly as the table did.
VerdictOptions verdict_options(const std::vector<CellSummary>& summaries);

// The lines under a table of `vs first` verdicts: the method (level, correction, band), then
// each cell that is inconclusive (with what would settle it), has too few trials or flagged
// outliers; then adaptive_notes(). Empty when nothing was compared and trials were fixed.
// Detail::brief: the method in one line, the inconclusive cells in one line with their
// intervals and one remedy, limits merged by text, the budget-stopped cells in one line.
std::vector<std::string> verdict_notes(const std::vector<CellSummary>& summaries,
                                       Detail detail = Detail::full);

// `--trials auto --max-time 20s`: a budget that would likely let every cell settle, from the
// trials the slowest-to-settle comparison needs, the cells and their trials' length.
std::string auto_trials_advice(const std::vector<CellSummary>& summaries, unsigned trials_needed);

// Whether the cell's plain twins give its verdicts (the observer-effect check ran and some did).
bool has_plain_trials(const workload::RunResult& run, const workload::CellResult& cell);
// What the instrumented trials carried: "sampling", "sampling and counters", "counters".
std::string instruments_text(const workload::RunResult& run);
// The observer effect's verdict in its own words: "raised" (the instruments raised throughput,
// Verdict::faster), "lowered", else verdict_name ("equivalent", "inconclusive", ...).
const char* perturbation_verdict_name(Verdict verdict);
// Whether some cell has a perturbation: the tables' instr/plain column.
bool any_perturbation(const std::vector<CellSummary>& summaries);
// For the table's instr/plain column: "1.24x raised", "0.99x equivalent", "1.10x, too few
// trials (2 per side)".
std::string perturbation_text(const Effect& effect);
// A cell whose instruments raised or lowered its throughput, in one sentence with the size and
// its interval ("sampling raised tas's throughput by 24% [15%, 33%] at 2 threads: ..."); ""
// otherwise.
std::string perturbation_claim(const CellSummary& summary);
// The lines under the table: what instr/plain is and how the cells came out, then each raised
// or lowered cell's claim (and with Detail::full the method and the inconclusive cells). Empty
// without the check.
std::vector<std::string> perturbation_notes(const std::vector<CellSummary>& summaries,
                                            Detail detail = Detail::full);

// A cell's acquires/s per trial, in trial order (its measured trials, or the trials given).
std::vector<double> trial_throughputs(const workload::CellResult& cell);
std::vector<double> trial_throughputs(const std::vector<workload::TrialResult>& trials);
// `--processes`: the geometric mean of each process's trials, in process order (processes
// without a trial left out).
std::vector<double> process_throughputs(const workload::CellResult& cell, unsigned processes);
std::vector<double> process_throughputs(const std::vector<workload::TrialResult>& trials,
                                        unsigned processes);
// What the verdicts resampled, for the notes: "resampled over 3 processes (...)", "resampled
// over trials within one process", or for 2 processes the trials of both together.
std::string resampling_text(unsigned processes);

// The stopping rule of `--trials auto`: the precision of a cell's throughput over its trials
// so far, one of `cells` judged together. The sweep stops the cell when it is `narrow`.
Precision cell_precision(const workload::CellResult& cell, const VerdictOptions& options,
                         std::size_t cells);

// The lines `--trials auto` adds under the table and to the explanation: how many cells
// settled and after how many trials, and each cell the budget stopped with its interval still
// wider than the band, with its trials. Empty for a run with a fixed trial count.
std::vector<std::string> adaptive_notes(const std::vector<CellSummary>& summaries);
// One budget-stopped cell's line ("tas at 4 threads stayed inconclusive: ..."), "" otherwise.
std::string adaptive_note(const CellSummary& summary);

}  // namespace lockprof::analysis
