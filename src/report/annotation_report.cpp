#include "lockprof/report/annotation_report.hpp"

#include <fmt/format.h>

namespace lockprof::report {

std::string render_annotations(const workload::RunResult& run,
                               const analysis::Attribution& attribution, unsigned top_functions) {
    if (!run.sampling || top_functions == 0) return "";
    std::string out;
    for (const auto& w : attribution.warnings) out += fmt::format("warning: {}\n", w);
    for (const auto& cell : attribution.cells)
        out += "\n" + sampling::render_annotation(cell, *run.sampling, top_functions);
    return out;
}

}  // namespace lockprof::report
