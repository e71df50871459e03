// The HTML report: one self-contained file (inline CSS and SVG, no script of its own, no
// network) that reads offline and prints: provenance, throughput with error bars, per-acquire
// costs, fairness, latency, the explanation, hot instructions and the flamegraph.
// Used by `lockprof --report FILE.html` and `lockprof report RESULT.json`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lockprof/analysis/report_inputs.hpp"
#include "lockprof/analysis/summary.hpp"
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

// The report's inputs beyond the summaries (analysis::gather_report_inputs) with the
// flamegraph rendered.
struct ReportExtras : analysis::ReportInputs {
    std::string flamegraph_svg;  // "" when there are no samples
};
ReportExtras with_flamegraph(analysis::ReportInputs inputs, const workload::RunResult& run);

std::string render_html_report(const workload::RunResult& run,
                               const std::vector<analysis::CellSummary>& summaries,
                               const ReportExtras& extras, const HtmlReportOptions& options = {});

// Base64 (RFC 4648, with padding): embeds the flamegraph as a data: URL so its script runs in
// its own document, next to the report's.
std::string base64(std::string_view bytes);

}  // namespace lockprof::report
