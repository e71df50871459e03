// The HTML report: one self-contained file (inline CSS and SVG, no script of its own, no
// network) that reads offline and prints: provenance, throughput with error bars, per-acquire
// costs, fairness, latency, the explanation, hot instructions and the flamegraph.
// Used by `lockprof --report FILE.html` and `lockprof report RESULT.json`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lockprof/analysis/explain.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/sampling/annotate.hpp"
#include "lockprof/sampling/report.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::report {

struct HtmlReportOptions {
    std::string title = "lockprof report";
    std::string source;  // where the data came from ("this run", a file name); "" to omit
    // Hot instructions at this thread count; default: the largest thread count with samples.
    std::optional<unsigned> annotate_threads;
    unsigned annotate_functions = 2;  // hottest functions listed per lock
    unsigned max_instructions = 24;   // rows per function listing
};

// What the report shows beyond the summaries. Missing parts are explained in `omitted`.
struct ReportExtras {
    std::vector<analysis::PairDiagnosis> explanation;
    std::optional<sampling::Attribution> attribution;  // cells in run order
    std::string flamegraph_svg;                        // "" when there are no samples
    std::vector<std::string> omitted;  // "no flamegraph: ..." lines shown in the report
};

// Explanation always; annotation and flamegraph when `run` holds raw samples (a live run, or
// a file written with --samples-out); `omitted` says why a part is missing.
ReportExtras gather_report_extras(const workload::RunResult& run,
                                  const std::vector<analysis::CellSummary>& summaries,
                                  const sampling::AnnotateOptions& annotate);

// True when any thread of any trial holds a raw sample.
bool has_raw_samples(const workload::RunResult& run);

std::string render_html_report(const workload::RunResult& run,
                               const std::vector<analysis::CellSummary>& summaries,
                               const ReportExtras& extras, const HtmlReportOptions& options = {});

// Base64 (RFC 4648, with padding): embeds the flamegraph as a data: URL so its script runs in
// its own document, next to the report's.
std::string base64(std::string_view bytes);

}  // namespace lockprof::report
