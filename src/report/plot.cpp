#include "lockprof/report/plot.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "lockprof/workload/provenance.hpp"

namespace lockprof::report {

namespace {

constexpr const char* kFont =
    "system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', Helvetica, Arial, sans-serif";

// Trims "1.500" to "1.5" and "2.000" to "2".
std::string trim_zeros(std::string s) {
    if (s.find('.') == std::string::npos) return s;
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

// Rough text width for layout; SVG cannot measure text without a script, and a few pixels of
// slack in the legend are harmless.
double text_width(std::string_view text, double font_px) {
    return static_cast<double>(text.size()) * font_px * 0.6;
}

// Markers differ per series as well as colours, so a black-and-white printout still tells the
// locks apart.
std::string marker(std::size_t series, double x, double y, const std::string& colour,
                   const std::string& tooltip) {
    const std::string title =
        tooltip.empty() ? "" : fmt::format("<title>{}</title>", escape_xml(tooltip));
    const std::string style =
        fmt::format("fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"1\"", colour);
    switch (series % 4) {
        case 1:
            return fmt::format(
                "<rect class=\"lp-marker\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" "
                "height=\"8\" {}>{}</rect>",
                x - 4, y - 4, style, title);
        case 2:
            return fmt::format(
                "<path class=\"lp-marker\" d=\"M{:.1f},{:.1f}l5,9h-10z\" {}>{}</path>", x, y - 5.5,
                style, title);
        case 3:
            return fmt::format(
                "<path class=\"lp-marker\" d=\"M{:.1f},{:.1f}l5,5l-5,5l-5,-5z\" {}>{}</path>", x,
                y - 5, style, title);
        default:
            return fmt::format(
                "<circle class=\"lp-marker\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" {}>{}</circle>",
                x, y, style, title);
    }
}

}  // namespace

std::vector<double> nice_ticks(double low, double high, int target) {
    if (!std::isfinite(low) || !std::isfinite(high)) return {0, 1};
    if (high < low) std::swap(low, high);
    if (high == low) {
        // A flat series still needs an axis around its value.
        const double pad = low == 0 ? 1 : std::fabs(low) * 0.5;
        low -= low == 0 ? 0 : pad;
        high += pad;
    }
    target = std::max(target, 2);
    const double raw = (high - low) / target;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = magnitude * 10;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * magnitude >= raw) {
            step = m * magnitude;
            break;
        }
    const double first = std::floor(low / step + 1e-9);
    const double last = std::ceil(high / step - 1e-9);
    std::vector<double> ticks;
    // Multiplying an integer counter avoids the drift of repeated addition (0.30000000000000004).
    for (double i = first; i <= last + 1e-9; ++i) {
        const double v = i * step;
        ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
    }
    return ticks;
}

std::string tick_label(double value, double axis_max) {
    const double a = std::fabs(value);
    if (a == 0) return "0";
    if (a >= 1e9) return trim_zeros(fmt::format("{:.2f}", value / 1e9)) + "G";
    if (a >= 1e6) return trim_zeros(fmt::format("{:.2f}", value / 1e6)) + "M";
    if (a >= 1e4) return trim_zeros(fmt::format("{:.2f}", value / 1e3)) + "k";
    const double scale = std::max(a, std::fabs(axis_max));
    if (scale < 0.01) {
        const auto [factor, prefix] = scale >= 1e-3   ? std::pair{1e3, "m"}
                                      : scale >= 1e-6 ? std::pair{1e6, "\u00b5"}
                                                      : std::pair{1e9, "n"};
        return trim_zeros(fmt::format("{:.4g}", value * factor)) + prefix;
    }
    return trim_zeros(fmt::format("{:.3f}", value));
}

std::string series_colour(std::size_t index) {
    // Okabe-Ito colour-blind-safe colours, darkened where they are too light on white paper.
    static const char* const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#B07800",
                                          "#3A9BD9", "#6A3D9A", "#555555", "#8C564B", "#17BECF"};
    return palette[index % std::size(palette)];
}

namespace {

// The finite points a plot can draw (a log2 axis cannot draw x <= 0), with their extent.
struct DataRange {
    std::size_t points = 0;
    double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
    std::set<double> xs;
};

bool drawable(const PlotSpec& spec, const PlotPoint& p) {
    return std::isfinite(p.x) && std::isfinite(p.y) &&
           !(spec.x_scale == AxisScale::log2 && p.x <= 0);
}

DataRange data_range(const PlotSpec& spec) {
    DataRange r;
    for (const auto& s : spec.series)
        for (const auto& p : s.points) {
            if (!drawable(spec, p)) continue;
            ++r.points;
            r.xs.insert(p.x);
            r.x_min = std::min(r.x_min, p.x), r.x_max = std::max(r.x_max, p.x);
            r.y_min = std::min({r.y_min, p.y, p.low.value_or(p.y)});
            r.y_max = std::max({r.y_max, p.y, p.high.value_or(p.y)});
        }
    return r;
}

// Where the plot area sits: room for the y labels on the left, the legend on the right.
struct PlotArea {
    double left = 78, top = 0, width = 0, height = 0;
};

PlotArea plot_area(const PlotSpec& spec) {
    double legend_width = 0;
    for (const auto& s : spec.series) legend_width = std::max(legend_width, text_width(s.name, 12));
    legend_width = spec.series.empty() ? 0 : std::min(legend_width + 44, 240.0);
    PlotArea area;
    area.top = 30 + (spec.title.empty() ? 0 : 14) + (spec.subtitle.empty() ? 0 : 16);
    const double bottom = 52, right = 16 + legend_width;
    area.width = std::max(40.0, spec.width - area.left - right);
    area.height = std::max(40.0, spec.height - area.top - bottom);
    return area;
}

// Both axes' ticks and the mapping of data to pixels.
struct PlotAxes {
    const PlotSpec& spec;
    const PlotArea& area;
    std::vector<double> x_ticks, y_ticks;
    double ax_lo = 0, ax_hi = 0;  // x extent on the axis (log2 of x on a log2 axis)
    double lo = 0, hi = 0;        // y extent

    double to_axis(double x) const { return spec.x_scale == AxisScale::log2 ? std::log2(x) : x; }
    double px(double x) const {
        return area.left + (to_axis(x) - ax_lo) / (ax_hi - ax_lo) * area.width;
    }
    double py(double y) const {
        return area.top + area.height - (y - lo) / (hi - lo) * area.height;
    }
};

PlotAxes plot_axes(const PlotSpec& spec, const PlotArea& area, const DataRange& range) {
    PlotAxes axes{spec, area, {}, {}, 0, 0, 0, 0};
    // x axis: log2 places thread counts 1, 2, 4, 8 evenly, as the thread's graphs did.
    axes.ax_lo = axes.to_axis(range.x_min), axes.ax_hi = axes.to_axis(range.x_max);
    if (spec.x_scale == AxisScale::log2) {
        // Few distinct sweep values: label exactly those; many: label the powers of two.
        if (range.xs.size() <= 12)
            axes.x_ticks.assign(range.xs.begin(), range.xs.end());
        else
            for (double v = std::exp2(std::floor(axes.ax_lo)); v <= range.x_max * 1.0001; v *= 2)
                axes.x_ticks.push_back(v);
    } else {
        axes.x_ticks = nice_ticks(range.x_min, range.x_max, 8);
        axes.ax_lo = std::min(axes.ax_lo, axes.x_ticks.front());
        axes.ax_hi = std::max(axes.ax_hi, axes.x_ticks.back());
    }
    if (axes.ax_hi == axes.ax_lo) axes.ax_lo -= 1, axes.ax_hi += 1;
    const double pad = (axes.ax_hi - axes.ax_lo) * 0.05;  // keep markers off the frame
    axes.ax_lo -= pad, axes.ax_hi += pad;

    const double lo = spec.y_from_zero ? std::min(0.0, range.y_min) : range.y_min;
    const double hi = spec.y_max ? std::max(*spec.y_max, range.y_max) : range.y_max;
    axes.y_ticks = nice_ticks(lo, hi, 6);
    axes.lo = axes.y_ticks.front(), axes.hi = axes.y_ticks.back();
    if (axes.hi == axes.lo) axes.hi = axes.lo + 1;
    return axes;
}

// The <svg> tag, title, subtitle, the plot frame and the axis titles.
void write_plot_frame(std::string& out, const PlotSpec& spec, const PlotArea& area,
                      std::size_t points) {
    const double width = spec.width, height = spec.height;
    if (spec.standalone) out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\"{} class=\"lp-plot\" viewBox=\"0 0 {} {}\" "
        "width=\"{}\" height=\"{}\" font-family=\"{}\" font-size=\"12\" role=\"img\" "
        "data-series=\"{}\" data-points=\"{}\">\n",
        spec.id.empty() ? "" : fmt::format(" id=\"{}\"", escape_xml(spec.id)), width, height, width,
        height, kFont, spec.series.size(), points);
    out += fmt::format("<title>{}</title>\n", escape_xml(spec.title));
    out += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", width, height);
    double title_y = 22;
    if (!spec.title.empty()) {
        out += fmt::format(
            "<text class=\"lp-title\" x=\"{}\" y=\"{}\" font-size=\"15\" font-weight=\"600\" "
            "fill=\"#1a1a1a\">{}</text>\n",
            area.left, title_y, escape_xml(spec.title));
        title_y += 17;
    }
    if (!spec.subtitle.empty())
        out += fmt::format(
            "<text class=\"lp-subtitle\" x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#555555\">{}"
            "</text>\n",
            area.left, title_y, escape_xml(spec.subtitle));
    out += fmt::format(
        "<rect class=\"lp-frame\" x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"#fcfcfd\" stroke=\"#b0b0b8\"/>\n",
        area.left, area.top, area.width, area.height);
    // Axis titles (with units) are drawn even without data: the empty frame still says what
    // it would show.
    out += fmt::format(
        "<text class=\"lp-axis-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
        "fill=\"#333333\">{}</text>\n",
        area.left + area.width / 2, area.top + area.height + 40, escape_xml(spec.x_label));
    out += fmt::format(
        "<text class=\"lp-axis-label\" transform=\"translate({:.1f},{:.1f}) rotate(-90)\" "
        "text-anchor=\"middle\" fill=\"#333333\">{}</text>\n",
        18.0, area.top + area.height / 2, escape_xml(spec.y_label));
}

void write_grid_and_ticks(std::string& out, const PlotAxes& axes) {
    const PlotArea& area = axes.area;
    out += "<g class=\"lp-grid\" stroke=\"#e3e3ea\" stroke-width=\"1\">\n";
    for (double t : axes.y_ticks)
        out += fmt::format("<line x1=\"{}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>\n",
                           area.left, area.left + area.width, axes.py(t), axes.py(t));
    for (double t : axes.x_ticks)
        out += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{:.1f}\"/>\n",
                           axes.px(t), axes.px(t), area.top, area.top + area.height);
    out += "</g>\n<g class=\"lp-ticks\" fill=\"#444444\" font-size=\"11\">\n";
    const auto largest = [](const std::vector<double>& ticks) {
        double m = 0;
        for (double t : ticks) m = std::max(m, std::fabs(t));
        return m;
    };
    const double y_max = largest(axes.y_ticks), x_max = largest(axes.x_ticks);
    for (double t : axes.y_ticks)
        out += fmt::format(
            "<text class=\"lp-ytick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" "
            "dominant-baseline=\"middle\">{}</text>\n",
            area.left - 6, axes.py(t), tick_label(t, y_max));
    for (double t : axes.x_ticks)
        out += fmt::format(
            "<text class=\"lp-xtick\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
            axes.px(t), area.top + area.height + 17, tick_label(t, x_max));
    out += "</g>\n";
}

// One series: its line, error bars and markers, points in x order.
std::string dash_attribute(const PlotSeries& s) {
    return s.dash.empty() ? std::string()
                          : fmt::format(" stroke-dasharray=\"{}\"", escape_xml(s.dash));
}

void write_series(std::string& out, const PlotAxes& axes, std::size_t index) {
    const auto& s = axes.spec.series[index];
    auto sorted = s.points;
    std::erase_if(sorted, [&](const PlotPoint& p) { return !drawable(axes.spec, p); });
    std::sort(sorted.begin(), sorted.end(),
              [](const PlotPoint& a, const PlotPoint& b) { return a.x < b.x; });
    out += fmt::format("<g class=\"lp-series\" data-name=\"{}\">\n", escape_xml(s.name));
    if (sorted.size() > 1) {
        std::string path;
        for (const auto& p : sorted)
            path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", axes.px(p.x),
                                axes.py(p.y));
        out += fmt::format(
            "<path class=\"lp-line\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
            "stroke-linejoin=\"round\"{}/>\n",
            path, s.colour, dash_attribute(s));
    }
    for (const auto& p : sorted)
        if (p.low && p.high && *p.high > *p.low) {
            const double x = axes.px(p.x), y1 = axes.py(*p.low), y2 = axes.py(*p.high);
            out += fmt::format(
                "<path class=\"lp-errorbar\" d=\"M{0:.1f},{1:.1f}V{2:.1f}M{3:.1f},{1:.1f}"
                "H{4:.1f}M{3:.1f},{2:.1f}H{4:.1f}\" stroke=\"{5}\" stroke-width=\"1.2\" "
                "fill=\"none\"/>\n",
                x, y1, y2, x - 4, x + 4, s.colour);
        }
    for (const auto& p : sorted)
        out += marker(index, axes.px(p.x), axes.py(p.y), s.colour, p.tooltip) + "\n";
    out += "</g>\n";
}

void write_plot_legend(std::string& out, const PlotSpec& spec, const PlotArea& area) {
    if (spec.series.empty()) return;
    const double lx = area.left + area.width + 14;
    out += "<g class=\"lp-legend\">\n";
    for (std::size_t i = 0; i < spec.series.size(); ++i) {
        const double ly = area.top + 10 + 20.0 * static_cast<double>(i);
        const auto& s = spec.series[i];
        out += fmt::format(
            "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
            "stroke-width=\"2\"{}/>\n",
            lx, lx + 22, ly, ly, s.colour, dash_attribute(s));
        out += marker(i, lx + 11, ly, s.colour, "");
        out += fmt::format(
            "<text class=\"lp-legend-entry\" x=\"{:.1f}\" y=\"{:.1f}\" "
            "dominant-baseline=\"middle\" fill=\"#222222\">{}</text>\n",
            lx + 30, ly, escape_xml(s.name));
    }
    out += "</g>\n";
}

}  // namespace

std::string render_plot(const PlotSpec& spec) {
    const DataRange range = data_range(spec);
    const PlotArea area = plot_area(spec);
    std::string out;
    write_plot_frame(out, spec, area, range.points);
    if (range.points == 0) {
        out += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#777777\">no data "
            "measured for this plot</text>\n</svg>\n",
            area.left + area.width / 2, area.top + area.height / 2);
        return out;
    }
    const PlotAxes axes = plot_axes(spec, area, range);
    write_grid_and_ticks(out, axes);
    for (std::size_t i = 0; i < spec.series.size(); ++i) write_series(out, axes, i);
    write_plot_legend(out, spec, area);
    out += "</svg>\n";
    return out;
}

std::vector<std::string> lock_order(const std::vector<analysis::CellSummary>& summaries) {
    std::vector<std::string> locks;
    for (const auto& s : summaries)
        if (s.cell && std::find(locks.begin(), locks.end(), s.cell->lock) == locks.end())
            locks.push_back(s.cell->lock);
    return locks;
}

PlotSpec figure_plot(
    const std::vector<analysis::CellSummary>& summaries,
    const std::function<const analysis::Spread*(const analysis::CellSummary&)>& figure,
    std::string title, std::string y_label, std::string unit) {
    PlotSpec spec;
    spec.title = std::move(title);
    spec.y_label = std::move(y_label);
    spec.x_label = "threads (log\u2082 scale)";
    const auto locks = lock_order(summaries);
    for (std::size_t i = 0; i < locks.size(); ++i) {
        PlotSeries series{locks[i], series_colour(i), {}, {}};
        for (const auto& s : summaries) {
            if (!s.cell || s.cell->lock != locks[i] || s.trials == 0) continue;
            const analysis::Spread* value = figure(s);
            if (!value || value->values.empty()) continue;
            PlotPoint p;
            p.x = s.cell->threads;
            p.y = value->median;
            if (value->values.size() > 1) p.low = value->min, p.high = value->max;
            p.tooltip =
                fmt::format("{}, {} thread{}: {} {}", locks[i], s.cell->threads,
                            s.cell->threads == 1 ? "" : "s", tick_label(value->median), unit);
            if (value->values.size() > 1)
                p.tooltip +=
                    fmt::format(" (median of {} trials, min {}, max {})", value->values.size(),
                                tick_label(value->min), tick_label(value->max));
            series.points.push_back(std::move(p));
        }
        // The series stays even when empty, so the lock keeps its colour and legend entry.
        spec.series.push_back(std::move(series));
    }
    return spec;
}

PlotSpec scalability_plot(const workload::RunResult& run,
                          const std::vector<analysis::CellSummary>& summaries) {
    auto spec = figure_plot(
        summaries, [](const analysis::CellSummary& s) { return &s.acquires_per_second; },
        "Throughput vs threads", "acquires/s (all threads)", "acquires/s");
    spec.id = "plot-scalability";
    const auto& p = run.provenance;
    const std::string_view lse = workload::lse_label(p);
    spec.subtitle = fmt::format(
        "{}{}{}; {} {}{}; median of {} trial{}, bars: min\u2013max",
        p.cpu_model.empty() ? p.arch : p.cpu_model, lse.empty() ? "" : fmt::format(", {}", lse),
        p.vm_hint.empty() ? "" : ", VM " + p.vm_hint, p.compiler, p.build_type,
        p.assertions ? ", ASSERTIONS ON" : "", run.spec.trials, run.spec.trials == 1 ? "" : "s");
    return spec;
}

}  // namespace lockprof::report
