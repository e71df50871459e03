// Self-contained interactive SVG flamegraphs rendered by lockprof itself (Debian ships no
// flamegraph.pl): click to zoom, reset zoom, search (regex or substring) with the matched
// percentage, <title> tooltips with samples and percent, hash-based stable colours per frame.
// The differential graph takes widths from AFTER and colours frames by the change of their
// share of total samples between BEFORE and AFTER. See docs/flamegraph.md.
#pragma once

#include <string>
#include <string_view>

#include "lockprof/export/folded.hpp"

namespace lockprof::exporting {

struct SvgOptions {
    std::string title = "Flame Graph";
    std::string subtitle;       // e.g. the run's provenance; the diff graph appends its legend
    double min_width_px = 0.1;  // frames narrower than this are left out (their parents stay)
    bool inverted = false;      // icicle graph: root at the top, growing down
    int width = 1200;           // image width in px
    int frame_height = 16;      // px per stack level
    double font_size = 12;      // px
    std::string count_name = "samples";  // unit in tooltips ("samples", "events")
};

// Renders `stacks` as an SVG document (UTF-8, starting with "<?xml"). Empty input renders a
// valid SVG that says "no samples". Throws UsageError on invalid options (width < 100 etc).
std::string render_flamegraph_svg(const FoldedStacks& stacks, const SvgOptions& options);

// The unit of cpu-clock samples, whose counts are nanoseconds of the threads' CPU time.
inline constexpr const char* kCpuTimeUnit = "ns of CPU time";

// Options for a flamegraph of lockprof's own samples, with the labels every such graph gets (run
// --flamegraph, the HTML report's graph, record --flamegraph): the title "TOOL: SUBJECT"
// ("lockprof: tas, ttas", "lockprof record: postgres"), the subtitle as given, and the tooltips'
// unit: the sampled event, "ns of CPU time" for cpu-clock (its count is nanoseconds), or
// "samples" when no event is known.
SvgOptions sampled_flamegraph_options(std::string_view tool, std::string_view subject,
                                      std::string subtitle, const std::string& event);

// Differential flamegraph: frame widths from `after`; fill colour by the normalised change
// share_after - share_before of each frame's inclusive weight (share = weight / total of its
// profile): red grew, blue shrank, white unchanged, deeper colour for bigger change; frames new
// in AFTER are drawn red with "new" in the tooltip. Frames present only in BEFORE (vanished)
// have no width in AFTER: they are listed under the graph with their BEFORE share, largest
// first, and counted in the subtitle.
std::string render_diff_flamegraph_svg(const FoldedStacks& before, const FoldedStacks& after,
                                       const SvgOptions& options);

}  // namespace lockprof::exporting
