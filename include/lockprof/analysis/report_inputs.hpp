// What a report shows beyond the summaries: the explanation's evidence (the summaries' figures
// plus a sampled run's instruction shares) and the explanation, the attribution and the
// flamegraph's stacks (attribution/run_attribution) gathered once, so that report/ only renders.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lockprof/analysis/explain.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/attribution/run_attribution.hpp"
#include "lockprof/export/folded.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::analysis {

// What explain() needs from an annotation: sampled instructions with shares and classes.
void add_instruction_evidence(const attribution::CellAnnotation& cell, bool precise,
                              CellEvidence& evidence);

// Explanation evidence: the summaries' figures plus, when given, the annotation's
// instruction shares.
std::vector<CellEvidence> gather_evidence(const workload::RunResult& run,
                                          const std::vector<CellSummary>& summaries,
                                          const attribution::RunAttribution* attribution);

// What a report shows beyond the summaries, computed here so that report/ only renders: the
// explanation always; the annotation and the flamegraph's folded stacks when `run` holds raw
// samples (a live run, or a file written with --samples-out). `omitted` says why a part is
// missing ("hot instructions and flamegraph: ...").
struct ReportInputs {
    std::vector<PairDiagnosis> explanation;
    std::optional<attribution::RunAttribution> attribution;  // cells in run order
    std::optional<exporting::FoldedStacks> stacks;           // all cells, for the flamegraph
    std::vector<std::string> omitted;
};
ReportInputs gather_report_inputs(const workload::RunResult& run,
                                  const std::vector<CellSummary>& summaries,
                                  const attribution::AnnotateOptions& annotate);

}  // namespace lockprof::analysis
