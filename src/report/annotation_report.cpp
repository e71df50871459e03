#include "lockprof/report/annotation_report.hpp"

#include <map>

#include <fmt/format.h>

namespace lockprof::report {

std::string render_annotations(const workload::RunResult& run,
                               const attribution::RunAttribution& attribution,
                               unsigned top_functions, attribution::ListingDetail detail) {
    if (!run.sampling || top_functions == 0) return "";
    std::string out;
    for (const auto& w : attribution.warnings) out += fmt::format("warning: {}\n", w);
    for (const auto& n : attribution.notes) out += fmt::format("note: {}\n", n);
    // The short form shows one cell per lock: its largest thread count, the most contended.
    std::map<std::string, unsigned> largest;
    for (const auto& cell : attribution.cells)
        if (cell.samples > 0) largest[cell.lock] = std::max(largest[cell.lock], cell.threads);
    std::size_t left_out = 0;
    for (const auto& cell : attribution.cells) {
        if (detail == attribution::ListingDetail::hottest && largest.count(cell.lock) &&
            largest[cell.lock] != cell.threads) {
            ++left_out;
            continue;
        }
        // Two appends, not "\n" + ...: GCC 12 -O3 warns (-Wrestrict) falsely on that.
        out += '\n';
        out += attribution::render_annotation(cell, *run.sampling, top_functions, detail);
    }
    if (left_out)
        out += fmt::format(
            "\n{} more cell{} annotated (each lock is shown at its largest thread count): "
            "--annotate-top N prints every cell, and --report or `lockprof annotate` on "
            "--samples-out keeps them all\n",
            left_out, left_out == 1 ? "" : "s");
    return out;
}

}  // namespace lockprof::report
