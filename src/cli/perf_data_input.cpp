#include "cli/perf_data_input.hpp"

#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/common/error.hpp"
#include "lockprof/perfdata/perf_data.hpp"

namespace lockprof::cli {

bool is_perf_data_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char head[8] = {};
    in.read(head, sizeof head);
    return perfdata::looks_like_perf_data(
        std::string_view(head, static_cast<std::size_t>(in.gcount())));
}

void print_fold_report(const exporting::PerfScriptReport& report, const std::string& name,
                       const std::string& event_option, bool perf_data) {
    for (std::size_t i = 0; i < report.problems.size() && i < 5; ++i)
        fmt::print(stderr, "lockprof: warning: {}\n", report.problems[i]);
    if (report.skipped > 0)
        fmt::print(stderr,
                   "lockprof: warning: skipped {} {}{} of {} in {}; use --strict "
                   "to fail on them instead\n",
                   report.skipped, perf_data ? "malformed record" : "unrecognised line",
                   report.skipped == 1 ? "" : "s", report.lines, name);
    if (report.other_event > 0)
        fmt::print(stderr,
                   "lockprof: note: folded {} samples of event '{}', left out {} of other events "
                   "({}); choose with --event NAME or --event all\n",
                   report.folded, report.event, report.other_event,
                   fmt::join(report.other_events, ", "));
    if (!event_option.empty() && event_option != "all" && report.folded == 0 && report.samples > 0)
        throw UsageError(
            fmt::format("--event {}: no samples of that event in {} (it has: {}); "
                        "pick one of those",
                        event_option, name, fmt::join(report.other_events, ", ")));
    if (report.samples == 0)
        fmt::print(stderr, "lockprof: warning: no samples found in {}; {}\n", name,
                   perf_data ? "was it recorded with `perf record`, and did it run long enough?"
                             : "is it `perf script` output?");
}

exporting::FoldedStacks fold_perf_data_file(const std::string& path,
                                            const exporting::PerfScriptOptions& options) {
    exporting::PerfScriptReport report;
    auto stacks = perfdata::fold(perfdata::PerfData::open(path), options, report);
    print_fold_report(report, path, options.event, true);
    return stacks;
}

}  // namespace lockprof::cli
