// How much a run's text output says, and the helpers that merge per-cell notes into one line
// per kind ("the threads ran on 0.27-0.28 of 1 CPU in all 3 cells at 1 thread and ..."): the
// terminal table's notes, the verdict lines under it and the explanation use them, so a sweep
// of many cells reads in one screen (docs/reports.md, "What a run prints").
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace lockprof::analysis {

// brief: the default terminal output, one line per note kind, short legend and method;
// full: `--verbose`, every cell's note and every sentence in its long form. The JSON and the
// HTML report always hold everything.
enum class Detail { brief, full };

// A cell as a note names it.
struct CellRef {
    std::string lock;
    unsigned threads = 0;
    friend bool operator==(const CellRef&, const CellRef&) = default;
};

// The cells a merged note applies to, grouped by thread count in first-seen order: "all 3
// cells at 1 thread", "tas, cas at 2 threads", "tas at 1 thread and all 3 at 2 threads".
// `all` is every cell of the run: a group that holds every cell at its thread count says so.
std::string cells_text(const std::vector<CellRef>& cells, const std::vector<CellRef>& all);

// Comparison pairs named together: "ttas, cas vs tas at 1 and 2 threads", "cas vs tas at 2
// threads; ttas vs tas at 1 thread". Each entry is (other, baseline, threads).
struct PairRef {
    std::string other, baseline;
    unsigned threads = 0;
};
std::string pairs_text(const std::vector<PairRef>& pairs);

// A range of figures as text, "0.27-0.28" (one figure when both ends read the same), with
// `format` applied to each end.
template <typename Format>
std::string figure_range(const std::vector<double>& values, Format format);

}  // namespace lockprof::analysis

#include <algorithm>

#include "lockprof/common/number_format.hpp"

namespace lockprof::analysis {

template <typename Format>
std::string figure_range(const std::vector<double>& values, Format format) {
    if (values.empty()) return "";
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    return range_text(format(*low), format(*high));
}

}  // namespace lockprof::analysis
