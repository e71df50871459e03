// A sampled run's samples attributed to code: each cell's annotation (hottest functions, the
// acquire loop), the explanation's instruction evidence, folded stacks and the notes on lost
// samples. Shared by the run's sampling extension, `lockprof annotate FILE` and the HTML
// report's inputs, so a saved result is analysed exactly as the live run was. Rendering the
// listings is report/annotation_report's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lockprof/analysis/explain.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/export/flamegraph_svg.hpp"
#include "lockprof/export/folded.hpp"
#include "lockprof/sampling/annotate.hpp"
#include "lockprof/sampling/stacks.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::analysis {

struct Attribution {
    std::vector<sampling::CellAnnotation> cells;  // one per run cell, same order
    std::vector<std::string> warnings;            // e.g. binaries changed since the run
    // Said once for the run: e.g. that a build without -g has only the acquire loop as a phase.
    // (Brace-initialised so aggregate initialisations that stop at warnings stay warning-free.)
    std::vector<std::string> notes{};
};

// Resolves and annotates a run's raw samples against the mappings saved with them.
Attribution attribute(const workload::RunResult& run, const sampling::AnnotateOptions& options);

// Aggregates every cell's samples and annotates its hottest functions.
std::vector<sampling::CellAnnotation> annotate(const workload::RunResult& run,
                                               const symbols::SymbolResolver& resolver,
                                               const sampling::AnnotateOptions& options);

// What explain() needs from an annotation: sampled instructions with shares and classes.
void add_instruction_evidence(const sampling::CellAnnotation& cell, bool precise,
                              CellEvidence& evidence);

// Explanation evidence: the summaries' figures plus, when given, the annotation's
// instruction shares.
std::vector<CellEvidence> gather_evidence(const workload::RunResult& run,
                                          const std::vector<CellSummary>& summaries,
                                          const Attribution* attribution);

// The labels of a sampled run's flamegraph (exporting::sampled_flamegraph_options): the locks
// as its title, the sampler and event as its subtitle.
exporting::SvgOptions flamegraph_options(const workload::RunResult& run);

// Per-cell sample totals and losses, as notes the run prints ("sampling: ... lost").
std::vector<std::string> loss_notes(const workload::RunResult& run);

// Folded stacks of all cells, one root frame per cell ("tas/2t"), callers root first, ending
// as `leaf` says (sampling::Leaf: the function; the loop phase and instruction in the measured
// loop, "measured_loop<...>;acquire loop;+0x58 xchg"; every instruction).
// The attribution's annotated functions name the mnemonics and the acquire loop; each cell's
// stacks take the phases its own annotation gave (without -g the acquire loop is marked from
// the cell's samples), then the other cells'.
exporting::FoldedStacks folded_stacks(const workload::RunResult& run,
                                      const Attribution& attribution, sampling::Leaf leaf);

// True when any thread of any trial holds a raw sample.
bool has_raw_samples(const workload::RunResult& run);

// What a report shows beyond the summaries, computed here so that report/ only renders: the
// explanation always; the annotation and the flamegraph's folded stacks when `run` holds raw
// samples (a live run, or a file written with --samples-out). `omitted` says why a part is
// missing ("hot instructions and flamegraph: ...").
struct ReportInputs {
    std::vector<PairDiagnosis> explanation;
    std::optional<Attribution> attribution;         // cells in run order
    std::optional<exporting::FoldedStacks> stacks;  // all cells, for the flamegraph
    std::vector<std::string> omitted;
};
ReportInputs gather_report_inputs(const workload::RunResult& run,
                                  const std::vector<CellSummary>& summaries,
                                  const sampling::AnnotateOptions& annotate);

}  // namespace lockprof::analysis
