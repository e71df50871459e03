#include "lockprof/report/plot.hpp"

#include <gtest/gtest.h>
#include <libxml/parser.h>

#include <regex>

namespace lockprof::report {
namespace {

bool well_formed_xml(const std::string& text) {
    xmlDocPtr doc = xmlReadMemory(text.data(), static_cast<int>(text.size()), "plot.svg", nullptr,
                                  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    const bool ok = doc != nullptr;
    xmlFreeDoc(doc);
    return ok;
}

PlotPoint pt(double x, double y, std::optional<double> low = {}, std::optional<double> high = {},
             std::string tooltip = "") {
    return {x, y, low, high, std::move(tooltip)};
}

std::vector<std::string> all(const std::string& text, const std::string& pattern) {
    std::vector<std::string> found;
    const std::regex re(pattern);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
         ++it)
        found.push_back((*it)[1].str());
    return found;
}

TEST(Plot, NiceTicksAreRoundAndCoverTheRange) {
    const auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
        ASSERT_EQ(got.size(), want.size());
        for (std::size_t i = 0; i < got.size(); ++i)
            EXPECT_NEAR(got[i], want[i], 1e-9 * want.back());
    };
    near(nice_ticks(0, 1, 6), {0, 0.2, 0.4, 0.6, 0.8, 1.0});
    near(nice_ticks(0, 97e6, 6), {0, 20e6, 40e6, 60e6, 80e6, 100e6});
    EXPECT_EQ(tick_label(nice_ticks(0, 1, 6)[3]), "0.6") << "labels hide float noise";
    const auto t = nice_ticks(3.2, 7.9, 5);
    EXPECT_LE(t.front(), 3.2);
    EXPECT_GE(t.back(), 7.9);
    for (std::size_t i = 1; i < t.size(); ++i) EXPECT_NEAR(t[i] - t[i - 1], t[1] - t[0], 1e-12);
    // A constant series still gets an axis around it.
    const auto flat = nice_ticks(5, 5);
    EXPECT_LT(flat.front(), 5);
    EXPECT_GT(flat.back(), 5);
    EXPECT_EQ(nice_ticks(0, 0).front(), 0);
}

TEST(Plot, TickLabelsUseSiSuffixesWithoutTrailingZeros) {
    EXPECT_EQ(tick_label(0), "0");
    EXPECT_EQ(tick_label(0.2), "0.2");
    EXPECT_EQ(tick_label(2.5), "2.5");
    EXPECT_EQ(tick_label(25), "25");
    EXPECT_EQ(tick_label(1500), "1500");
    EXPECT_EQ(tick_label(15000), "15k");
    EXPECT_EQ(tick_label(20e6), "20M");
    EXPECT_EQ(tick_label(12.5e6), "12.5M");
    EXPECT_EQ(tick_label(2.5e9), "2.5G");
    EXPECT_EQ(tick_label(0.01), "0.01");
    EXPECT_EQ(tick_label(0.013), "0.013");
}

// Small per-acquire figures (sleeps/acq, stxr_fail/acq) read "0.00013" and "7.5e-05" before:
// now SI prefixes, one per axis, chosen by the axis's largest tick.
TEST(Plot, SmallTickLabelsUseOnePrefixPerAxis) {
    EXPECT_EQ(tick_label(0.004), "4m");
    EXPECT_EQ(tick_label(7.5e-05), "75\u00b5");
    EXPECT_EQ(tick_label(0.00013), "130\u00b5");
    EXPECT_EQ(tick_label(2.5e-9), "2.5n");
    std::vector<std::string> labels;
    const auto ticks = nice_ticks(0, 1.4e-4, 6);
    for (double t : ticks) labels.push_back(tick_label(t, ticks.back()));
    for (const auto& label : labels) {
        EXPECT_EQ(label.find('e'), std::string::npos) << label;
        EXPECT_TRUE(label == "0" || label.ends_with("\u00b5")) << label;
    }
    EXPECT_EQ(tick_label(0.005, 0.008), "5m");
    EXPECT_EQ(tick_label(5e-4, 0.008), "0.5m") << "the axis's prefix, not the value's";
}

TEST(Plot, RendersWellFormedSvgWithAxesLegendAndErrorBars) {
    PlotSpec spec;
    spec.id = "p";
    spec.title = "Throughput <&> \"quotes\"";
    spec.x_label = "threads";
    spec.y_label = "acquires/s";
    spec.standalone = true;
    spec.series = {
        {"tas",
         series_colour(0),
         {pt(1, 10e6, 9e6, 11e6, "t1"), pt(4, 4e6, 3e6, 5e6), pt(2, 6e6)},
         ""},
        {"c<a>s", series_colour(1), {pt(1, 9e6), pt(2, 8e6), pt(4, 7e6)}, "7 4"},
    };
    const std::string svg = render_plot(spec);
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_TRUE(well_formed_xml(svg)) << svg;
    EXPECT_NE(svg.find("id=\"p\""), std::string::npos);
    EXPECT_NE(svg.find("data-series=\"2\" data-points=\"6\""), std::string::npos);
    EXPECT_NE(svg.find(">threads</text>"), std::string::npos);
    EXPECT_NE(svg.find(">acquires/s</text>"), std::string::npos);
    EXPECT_NE(svg.find("c&lt;a&gt;s"), std::string::npos);
    EXPECT_EQ(all(svg, "class=\"lp-errorbar\"()").size(), 2u) << "only points with a range";
    EXPECT_EQ(all(svg, "class=\"lp-legend-entry\"()").size(), 2u);
    // Thread ticks: exactly the sweep values, evenly spaced on the log-2 axis.
    EXPECT_EQ(all(svg, "class=\"lp-xtick\"[^>]*>([^<]*)<"),
              (std::vector<std::string>{"1", "2", "4"}));
    const auto xs = all(svg, "class=\"lp-xtick\" x=\"([0-9.]+)\"");
    ASSERT_EQ(xs.size(), 3u);
    EXPECT_NEAR(std::stod(xs[1]) - std::stod(xs[0]), std::stod(xs[2]) - std::stod(xs[1]), 0.11);
    // y axis from zero to a round top above the highest error bar (11M).
    const auto ys = all(svg, "class=\"lp-ytick\"[^>]*>([^<]*)<");
    ASSERT_FALSE(ys.empty());
    EXPECT_EQ(ys.front(), "0");
    EXPECT_EQ(ys.back(), "12M");
    // Line drawn in x order: the path of "tas" goes 1 -> 2 -> 4 (x increasing).
    const auto paths = all(svg, "class=\"lp-line\" d=\"([^\"]*)\"");
    ASSERT_EQ(paths.size(), 2u);
    const auto px = all(paths[0], "[ML]([0-9.]+),");
    ASSERT_EQ(px.size(), 3u);
    EXPECT_LT(std::stod(px[0]), std::stod(px[1]));
    EXPECT_LT(std::stod(px[1]), std::stod(px[2]));
    EXPECT_NE(svg.find("<title>t1</title>"), std::string::npos);
    // A dash pattern (the cross-host report's one per host) on the line and its legend entry.
    EXPECT_EQ(all(svg, "stroke-dasharray=\"(7 4)\"").size(), 2u);
}

TEST(Plot, EmptyPlotSaysSoAndStaysValid) {
    PlotSpec spec;
    spec.title = "nothing";
    spec.x_label = "threads";
    spec.y_label = "x";
    spec.series = {{"tas", series_colour(0), {}, {}}};
    const auto svg = render_plot(spec);
    EXPECT_TRUE(well_formed_xml(svg));
    EXPECT_NE(svg.find("no data"), std::string::npos);
    EXPECT_EQ(svg.find("<?xml"), std::string::npos) << "inline form has no prolog";
}

TEST(Plot, ManyThreadCountsGetPowerOfTwoTicks) {
    PlotSpec spec;
    PlotSeries s{"tas", series_colour(0), {}, {}};
    for (int x = 1; x <= 64; x += 3) s.points.push_back(pt(x, 1.0 * x));
    spec.series = {s};
    const auto ticks = all(render_plot(spec), "class=\"lp-xtick\"[^>]*>([^<]*)<");
    EXPECT_EQ(ticks, (std::vector<std::string>{"1", "2", "4", "8", "16", "32", "64"}));
}

TEST(Plot, LockColoursAreConsistentAcrossPlots) {
    workload::CellResult a, b, c;
    a.lock = "tas", a.threads = 1;
    b.lock = "cas", b.threads = 1;
    c.lock = "tas", c.threads = 2;
    for (auto* cell : {&a, &b, &c}) {
        workload::TrialResult t;
        t.wall_ns = 1000;
        t.threads.resize(cell->threads);
        for (auto& th : t.threads) th.acquires = 10, th.rmw_attempts = 20;
        cell->trials.push_back(t);
    }
    workload::RunResult run;
    run.cells = {a, b, c};
    const auto summaries = analysis::summarize(run);
    EXPECT_EQ(lock_order(summaries), (std::vector<std::string>{"tas", "cas"}));
    const auto throughput = scalability_plot(run, summaries);
    const auto rmw = figure_plot(
        summaries, [](const analysis::CellSummary& s) { return &s.rmw_per_acquire; }, "rmw",
        "rmw / acquire", "");
    ASSERT_EQ(throughput.series.size(), 2u);
    ASSERT_EQ(rmw.series.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(throughput.series[i].name, rmw.series[i].name);
        EXPECT_EQ(throughput.series[i].colour, rmw.series[i].colour);
    }
    EXPECT_NE(series_colour(0), series_colour(1));
    EXPECT_EQ(throughput.series[0].points.size(), 2u);
    EXPECT_DOUBLE_EQ(rmw.series[0].points[0].y, 2.0);
    EXPECT_FALSE(rmw.series[0].points[0].low) << "one trial: no error bar";
    EXPECT_NE(throughput.y_label.find("acquires/s"), std::string::npos);
}

}  // namespace
}  // namespace lockprof::report
