// A sampled run's samples attributed to code: each cell's annotation (hottest functions, the
// acquire loop), folded stacks, the flamegraph's labels and the notes on lost samples. Shared
// by the run's sampling extension, `lockprof annotate FILE`, `convert` and the HTML report's
// inputs (analysis/report_inputs), so a saved result is attributed exactly as the live run
// was. Rendering the listings is report/annotation_report's.
#pragma once

#include <string>
#include <vector>

#include "lockprof/attribution/annotate.hpp"
#include "lockprof/attribution/stacks.hpp"
#include "lockprof/export/flamegraph_svg.hpp"
#include "lockprof/export/folded.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::attribution {

struct RunAttribution {
    std::vector<CellAnnotation> cells;  // one per run cell, same order
    std::vector<std::string> warnings;  // e.g. binaries changed since the run
    // Said once for the run: e.g. that a build without -g has only the acquire loop as a phase.
    // (Brace-initialised so aggregate initialisations that stop at warnings stay warning-free.)
    std::vector<std::string> notes{};
};

// Resolves and annotates a run's raw samples against the mappings saved with them.
RunAttribution attribute(const workload::RunResult& run, const AnnotateOptions& options);

// Aggregates every cell's samples and annotates its hottest functions.
std::vector<CellAnnotation> annotate_cells(const workload::RunResult& run,
                                           const symbols::SymbolResolver& resolver,
                                           const AnnotateOptions& options);

// The labels of a sampled run's flamegraph (exporting::sampled_flamegraph_options): the locks
// as its title, the sampler and event as its subtitle.
exporting::SvgOptions flamegraph_options(const workload::RunResult& run);

// Per-cell sample totals and losses, as notes the run prints ("sampling: ... lost").
std::vector<std::string> loss_notes(const workload::RunResult& run);

// Folded stacks of all cells, one root frame per cell ("tas/2t"), callers root first, ending
// as `leaf` says (Leaf: the function; the loop phase and instruction in the measured
// loop, "measured_loop<...>;acquire loop;+0x58 xchg"; every instruction).
// The attribution's annotated functions name the mnemonics and the acquire loop; each cell's
// stacks take the phases its own annotation gave (without -g the acquire loop is marked from
// the cell's samples), then the other cells'.
exporting::FoldedStacks folded_stacks(const workload::RunResult& run,
                                      const RunAttribution& attribution, Leaf leaf);

// True when any thread of any trial holds a raw sample.
bool has_raw_samples(const workload::RunResult& run);

}  // namespace lockprof::attribution
