// What a sampled run prints and exports: annotation listings, the explanation, folded stacks.
// Shared by the run's sampling extension and `lockprof annotate FILE`, so a saved result
// renders exactly as the live run did.
#pragma once

#include <string>
#include <vector>

#include "lockprof/analysis/explain.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/export/flamegraph_svg.hpp"
#include "lockprof/export/folded.hpp"
#include "lockprof/sampling/annotate.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::sampling {

struct Attribution {
    std::vector<CellAnnotation> cells;  // one per run cell, same order
    std::vector<std::string> warnings;  // e.g. binaries changed since the run
};

// Resolves and annotates a run's raw samples against the mappings saved with them.
Attribution attribute(const workload::RunResult& run, const AnnotateOptions& options);

// Explanation evidence: the summaries' figures plus, when given, the annotation's
// instruction shares.
std::vector<analysis::CellEvidence> gather_evidence(
    const workload::RunResult& run, const std::vector<analysis::CellSummary>& summaries,
    const Attribution* attribution);

// Annotation listings of every sampled cell (top_functions 0: none).
std::string render_annotations(const workload::RunResult& run, const Attribution& attribution,
                               unsigned top_functions);

// Folded stacks of all cells, one root frame per cell ("tas/2t"), callers root first. With
// instruction_leaf the leaf frame is the sampled instruction ("measured_loop<...>+0x58 xchg").
exporting::FoldedStacks folded_stacks(const workload::RunResult& run,
                                      const Attribution& attribution, bool instruction_leaf);

// The labels of a sampled run's flamegraph (exporting::sampled_flamegraph_options): the locks
// as its title, the sampler and event as its subtitle.
exporting::SvgOptions flamegraph_options(const workload::RunResult& run);

}  // namespace lockprof::sampling
