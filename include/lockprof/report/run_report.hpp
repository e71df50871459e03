// The run's human table and its CSV form.
#pragma once

#include <string>
#include <vector>

#include "lockprof/analysis/steal.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::report {

// The workload as one line of text ("1.00 s per trial, 5 trials, critical 100 ns (measured
// 98.7 ns) on 1 shared line apart from the lock, ..."), with the workers' measured work next to
// what was asked for. The text table and the HTML report both print it.
// What the exclusion checks found, one line without the "exclusion: " label: the verification
// trial of each cell (workload/sweep.hpp), and any cell whose measured trials lost an increment
// of the first shared datum. "" for a run with neither (no excluding lock, or an older file).
std::string exclusion_summary(const workload::RunResult& run);
// Whether some cell of the run let a second holder in.
bool exclusion_failed(const workload::RunResult& run);

// Detail::brief leaves out the lock page and the pinning where the run kept their defaults.
std::string describe_workload(const workload::RunResult& run,
                              const std::vector<analysis::CellSummary>& summaries,
                              analysis::Detail detail = analysis::Detail::full);

// The columns a report shows only when some cell needs them, decided in one place so the text
// table and the HTML report show the same ones.
struct OptionalColumns {
    bool sleeps = false;   // some lock slept (pg-slock's pg_usleep): sleeps/acq
    bool partial = false;  // some cell ran all its threads at once for under 90% of the window
    bool latency = false;  // some cell recorded latency
};
constexpr double kFullConcurrencyNote = 0.9;
OptionalColumns optional_columns(const std::vector<analysis::CellSummary>& summaries);

// The note for a cell whose threads ran all at once for under kFullConcurrencyNote of the
// window; "" otherwise. Its cause and advice follow the run's stop rule: threads that finished
// their acquires early (`--acquires`), or started late (`--duration`).
std::string partial_concurrency_note(const analysis::CellSummary& s, bool acquire_limited);

// Below this share of the CPUs its threads could have used (min(threads, online CPUs)), a
// cell's threads are said to have waited off-CPU.
constexpr double kCpuUseNote = 0.8;

// The note for a cell with more threads than online CPUs (oversubscribed), or whose threads
// ran on under kCpuUseNote of the CPUs they could use; "" otherwise. online_cpus 0: unknown.
std::string cpu_use_note(const analysis::CellSummary& s, unsigned online_cpus);

// The notes on the cells: Detail::full, each cell's own (the HTML report, --verbose), in the
// order of the cells; Detail::brief, one note per kind naming the cells it applies to and the
// range of its figure (all-run share, oversubscription, sleeping waiters, off-CPU threads).
// Then the run's one hypervisor steal note (analysis::steal_note) over all cells' trials.
std::vector<std::string> cell_notes(const workload::RunResult& run,
                                    const std::vector<analysis::CellSummary>& summaries,
                                    analysis::Detail detail = analysis::Detail::full);

// Header (provenance and workload), one table per thread count, legend, verdict lines, notes.
// Detail::brief (the terminal's default): the columns a reader needs (ns/acq and ticks/acq,
// and event columns that read 0.00 everywhere, only in full), a one-line legend and method,
// merged notes; Detail::full (--verbose): every column and sentence.
std::string render_table(const workload::RunResult& run,
                         const std::vector<analysis::CellSummary>& summaries,
                         analysis::Detail detail = analysis::Detail::full);

// A CSV field: as it is, or in double quotes (quotes doubled) when it holds a comma, a quote or
// a newline. Every CSV lockprof writes quotes its text fields with this.
std::string csv_field(const std::string& text);

// One row per cell; medians with min/max for throughput; one column per event.
std::string render_csv(const workload::RunResult& run,
                       const std::vector<analysis::CellSummary>& summaries);

}  // namespace lockprof::report
