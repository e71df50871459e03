// Line plots rendered as SVG by lockprof itself, so reports and mailing-list attachments need no
// charting library or network: nice ticks, a log-2 thread axis, error bars from the trials'
// min/max, legends, and one colour per lock that stays the same across every plot of a report.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/export/xml.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::report {

struct PlotPoint {
    double x = 0;
    double y = 0;
    std::optional<double> low, high;  // error bar (the trials' min and max), absent: none
    std::string tooltip;              // <title> of the marker, "" for none
};

struct PlotSeries {
    std::string name;               // legend entry
    std::string colour;             // CSS colour
    std::vector<PlotPoint> points;  // drawn in x order
    std::string dash;               // the line's stroke-dasharray ("6 3"), "" for solid
};

enum class AxisScale { linear, log2 };

struct PlotSpec {
    std::string id;  // DOM id of the <svg> (HTML report, tests); "" for none
    std::string title;
    std::string subtitle;
    std::string x_label;  // with units: "threads"
    std::string y_label;  // with units: "acquires/s"
    AxisScale x_scale = AxisScale::log2;
    bool y_from_zero = true;      // throughput and costs are read against zero
    std::optional<double> y_max;  // fixed top (Jain's index: 1)
    int width = 720;
    int height = 380;
    bool standalone = false;  // XML prolog and namespace: a file of its own, not inline HTML
    std::vector<PlotSeries> series;
};

// The SVG document or element. A plot with no points says so inside the frame.
std::string render_plot(const PlotSpec& spec);

// Up to about `target` round tick values (1, 2, 2.5 or 5 times a power of ten) covering
// [low, high]; the first tick <= low and the last >= high.
std::vector<double> nice_ticks(double low, double high, int target = 6);

// Tick label: 0, 0.5, 25, 1.5k, 12M, 2.5G; no trailing zeros. Below 0.01 the SI prefixes
// m, µ, n rather than "0.00013" or "7.5e-05", scaled by `axis_max` (the axis's largest tick, so
// every label on an axis has the same prefix: 0, 50µ, 100µ, 150µ); `value` itself by default.
std::string tick_label(double value, double axis_max = 0);

// Colour of the index-th lock: a colour-blind-safe palette, repeated with the same order.
std::string series_colour(std::size_t index);

// Escapes text for XML/HTML text and attributes (the same escaper as the flamegraphs).
using exporting::escape_xml;

// Lock names in first-seen order over the summaries: their position picks their colour, so a
// lock has the same colour in every plot of one report.
std::vector<std::string> lock_order(const std::vector<analysis::CellSummary>& summaries);

// One series per lock of `figure` (median with min/max bars) against threads; cells where
// `figure` returns nullptr are left out. `unit` goes into tooltips.
PlotSpec figure_plot(
    const std::vector<analysis::CellSummary>& summaries,
    const std::function<const analysis::Spread*(const analysis::CellSummary&)>& figure,
    std::string title, std::string y_label, std::string unit);

// Acquires per second against threads, titled with the CPU and build.
PlotSpec scalability_plot(const workload::RunResult& run,
                          const std::vector<analysis::CellSummary>& summaries);

}  // namespace lockprof::report
