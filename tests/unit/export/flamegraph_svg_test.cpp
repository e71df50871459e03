#include "lockprof/export/flamegraph_svg.hpp"

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"
#include "svg_test_support.hpp"

using namespace lockprof::exporting;
using lockprof::test::parse_rgb;
using lockprof::test::parse_svg;

namespace {
FoldedStacks stacks_of(std::initializer_list<std::pair<const char*, std::uint64_t>> lines) {
    FoldedStacks s;
    for (const auto& [stack, weight] : lines) s.add_line(stack, weight);
    return s;
}
constexpr double kFull = 1200 - 2 * 10;  // default width minus the padding on both sides
}  // namespace

TEST(FlamegraphSvg, WidthsAreProportionalToCounts) {
    const auto svg = render_flamegraph_svg(stacks_of({{"a;b", 30}, {"a;c", 10}, {"d", 60}}), {});
    const auto doc = parse_svg(svg);
    ASSERT_TRUE(doc.well_formed) << doc.error;
    ASSERT_EQ(doc.frames.size(), 5u);  // all, a, b, c, d
    const auto* all = doc.frame("all");
    ASSERT_NE(all, nullptr);
    EXPECT_NEAR(all->width, kFull, 0.01);
    EXPECT_NEAR(doc.frame("d")->width, kFull * 0.6, 0.01);
    EXPECT_NEAR(doc.frame("a")->width, kFull * 0.4, 0.01);
    EXPECT_NEAR(doc.frame("b")->width, kFull * 0.3, 0.01);
    EXPECT_NEAR(doc.frame("c")->width, kFull * 0.1, 0.01);
    EXPECT_EQ(doc.frame("b")->title, "b (30 samples, 30.00%)");
    EXPECT_EQ(all->title, "all (100 samples, 100.00%)");
}

TEST(FlamegraphSvg, ChildrenSitOnTheirParentsInsideTheirSpan) {
    const auto doc =
        parse_svg(render_flamegraph_svg(stacks_of({{"m;x;y", 5}, {"m;z", 5}, {"n", 10}}), {}));
    ASSERT_TRUE(doc.well_formed) << doc.error;
    const auto *all = doc.frame("all"), *m = doc.frame("m"), *x = doc.frame("x"),
               *y = doc.frame("y"), *z = doc.frame("z"), *n = doc.frame("n");
    ASSERT_TRUE(all && m && x && y && z && n);
    // Root at the bottom, each level one frame height (16) higher.
    EXPECT_NEAR(m->y, all->y - 16, 1e-6);
    EXPECT_NEAR(x->y, m->y - 16, 1e-6);
    EXPECT_NEAR(y->y, x->y - 16, 1e-6);
    EXPECT_NEAR(z->y, x->y, 1e-6);
    EXPECT_NEAR(n->y, m->y, 1e-6);
    for (auto [child, parent] : {std::pair{x, m}, {y, x}, {z, m}, {m, all}}) {
        EXPECT_GE(child->x, parent->x - 1e-6) << child->name;
        EXPECT_LE(child->x + child->width, parent->x + parent->width + 1e-6) << child->name;
    }
    // Siblings sorted by name and side by side: m then n; x then z.
    EXPECT_NEAR(n->x, m->x + m->width, 0.01);
    EXPECT_NEAR(z->x, x->x + x->width, 0.01);
}

TEST(FlamegraphSvg, InvertedGrowsDown) {
    SvgOptions o;
    o.inverted = true;
    const auto doc = parse_svg(render_flamegraph_svg(stacks_of({{"m;x", 5}}), o));
    ASSERT_TRUE(doc.well_formed) << doc.error;
    EXPECT_NEAR(doc.frame("m")->y, doc.frame("all")->y + 16, 1e-6);
    EXPECT_NEAR(doc.frame("x")->y, doc.frame("m")->y + 16, 1e-6);
}

TEST(FlamegraphSvg, HostileNamesStayWellFormedXml) {
    FoldedStacks s;
    s.add({"<script>alert(1)</script>", "a&b \"q\" 'p'", "]]>",
           "ctl\x01"
           "char"},
          2);
    s.add_line(
        "raw\xff"
        "bytes;tab\there",
        1);  // add_line trusts its caller; the SVG must not
    SvgOptions o;
    o.title = "T <&> \"x\"";
    o.subtitle = "sub ]]> &amp;";
    const auto svg = render_flamegraph_svg(s, o);
    const auto doc = parse_svg(svg);
    ASSERT_TRUE(doc.well_formed) << doc.error;
    EXPECT_NE(doc.frame("<script>alert(1)</script>"), nullptr);
    EXPECT_NE(doc.frame("a&b \"q\" 'p'"), nullptr);
    EXPECT_NE(doc.frame("]]>"), nullptr);
    EXPECT_NE(doc.frame("raw\xEF\xBF\xBD"
                        "bytes"),
              nullptr);
    EXPECT_NE(doc.all_text.find("T <&> \"x\""), std::string::npos);
    EXPECT_NE(doc.all_text.find("sub ]]> &amp;"), std::string::npos);
    EXPECT_EQ(svg.find("<script>alert"), std::string::npos);
}

TEST(FlamegraphSvg, InteractiveScriptIsEmbedded) {
    const auto svg = render_flamegraph_svg(stacks_of({{"a", 1}}), {});
    for (const char* needle : {"onload=\"init(evt)\"", "function zoom(", "function unzoom(",
                               "function search(", "new RegExp(term)", "Matched: ",
                               ">Reset Zoom</text>", ">Search</text>", "id=\"details\""})
        EXPECT_NE(svg.find(needle), std::string::npos) << needle;
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_EQ(svg.find("http://"), svg.find("http://www.w3.org/2000/svg"))
        << "the SVG must be self-contained: no external references";
}

TEST(FlamegraphSvg, MinWidthDropsNarrowFramesAndTheirChildren) {
    const auto stacks = stacks_of({{"big", 100000}, {"tiny;child", 1}});
    SvgOptions o;
    o.min_width_px = 0.1;  // tiny is 0.0118 px wide
    auto doc = parse_svg(render_flamegraph_svg(stacks, o));
    EXPECT_EQ(doc.frame("tiny"), nullptr);
    EXPECT_EQ(doc.frame("child"), nullptr);
    EXPECT_NE(doc.frame("big"), nullptr);
    o.min_width_px = 0;
    doc = parse_svg(render_flamegraph_svg(stacks, o));
    EXPECT_NE(doc.frame("tiny"), nullptr);
    EXPECT_NE(doc.frame("child"), nullptr);
}

TEST(FlamegraphSvg, EmptyInputSaysNoSamples) {
    const auto doc = parse_svg(render_flamegraph_svg(FoldedStacks{}, {}));
    ASSERT_TRUE(doc.well_formed) << doc.error;
    EXPECT_TRUE(doc.frames.empty());
    EXPECT_NE(doc.all_text.find("no samples"), std::string::npos);
}

TEST(FlamegraphSvg, ColoursAreStablePerNameAndFamiliesDiffer) {
    const auto one = parse_svg(render_flamegraph_svg(stacks_of({{"main;s_lock", 3}}), {}));
    const auto two = parse_svg(render_flamegraph_svg(
        stacks_of({{"other;s_lock", 9}, {"x;y;z;s_lock", 1}, {"main", 4}}), {}));
    EXPECT_EQ(one.frame("s_lock")->fill, two.frame("s_lock")->fill);
    EXPECT_EQ(one.frame("main")->fill, two.frame("main")->fill);
    EXPECT_NE(one.frame("main")->fill, one.frame("s_lock")->fill);

    const auto doc = parse_svg(render_flamegraph_svg(
        stacks_of({{"main;do_syscall_64_[k]", 1}, {"main;s_lock;s_lock+0x1c stxr", 1}}), {}));
    const auto kernel = parse_rgb(doc.frame("do_syscall_64_[k]")->fill);
    EXPECT_GE(kernel.r, 190);  // orange: strong red, medium green, almost no blue
    EXPECT_GE(kernel.g, 90);
    EXPECT_LE(kernel.b, 20);
    const auto insn = parse_rgb(doc.frame("s_lock+0x1c stxr")->fill);
    EXPECT_GE(insn.b, 200);  // purple: blue strongest
    EXPECT_GT(insn.b, insn.g);
    const auto user = parse_rgb(doc.frame("main")->fill);
    EXPECT_GE(user.r, 205);  // warm: red strongest, little blue
    EXPECT_LE(user.b, 55);
}

TEST(FlamegraphSvg, RefusesUnusableOptions) {
    SvgOptions o;
    o.width = 10;
    EXPECT_THROW(render_flamegraph_svg(FoldedStacks{}, o), lockprof::UsageError);
    o = {};
    o.min_width_px = -1;
    EXPECT_THROW(render_flamegraph_svg(FoldedStacks{}, o), lockprof::UsageError);
}

TEST(DiffFlamegraphSvg, ColoursGrownShrunkNewAndListsVanished) {
    const auto before =
        stacks_of({{"m;grow", 10}, {"m;shrink", 50}, {"m;same", 20}, {"m;gone;deep", 20}});
    const auto after = stacks_of({{"m;grow", 40}, {"m;shrink", 10}, {"m;same", 20}, {"m;new", 30}});
    const auto doc = parse_svg(render_diff_flamegraph_svg(before, after, {}));
    ASSERT_TRUE(doc.well_formed) << doc.error;

    const auto grow = parse_rgb(doc.frame("grow")->fill);
    EXPECT_EQ(grow.r, 255);
    EXPECT_LT(grow.g, 100);  // +30 points, near the largest change
    EXPECT_EQ(grow.g, grow.b);
    const auto shrink = parse_rgb(doc.frame("shrink")->fill);
    EXPECT_EQ(shrink.b, 255);  // -40 points: the largest change, deepest blue
    EXPECT_EQ(shrink.r, 0);
    const auto same = parse_rgb(doc.frame("same")->fill);
    EXPECT_EQ(same.r, same.b);
    EXPECT_EQ(same.r, same.g);
    const auto* added = doc.frame("new");
    ASSERT_NE(added, nullptr);
    EXPECT_EQ(added->cls, "new");
    EXPECT_EQ(parse_rgb(added->fill).r, 255);
    EXPECT_GT(parse_rgb(added->fill).r, parse_rgb(added->fill).b);
    EXPECT_NE(added->title.find("new in AFTER"), std::string::npos);

    // Widths from AFTER.
    EXPECT_NEAR(doc.frame("grow")->width, kFull * 0.4, 0.01);
    // Vanished frames have no width in AFTER: listed once, at their top-most frame.
    EXPECT_EQ(doc.frame("gone"), nullptr);
    ASSERT_EQ(doc.vanished.size(), 1u);
    EXPECT_EQ(doc.vanished[0], "m;gone [before: 20 samples, 20.00%]");
    EXPECT_NE(doc.all_text.find("Vanished (in BEFORE, not in AFTER): 1 frame\n"),
              std::string::npos);

    // Tooltips: absolute and normalised, before and after.
    EXPECT_EQ(doc.frame("grow")->title,
              "grow (after: 40 samples, 40.00%; before: 10 samples, 10.00%; change +30.00 "
              "percentage points of total)");
}

TEST(DiffFlamegraphSvg, NormalisesByTotalSoLongerRunsCompareFairly) {
    // AFTER ran 10x longer with the same profile shape: nothing changed.
    const auto doc = parse_svg(render_diff_flamegraph_svg(
        stacks_of({{"a;x", 10}, {"a;y", 30}}), stacks_of({{"a;x", 100}, {"a;y", 300}}), {}));
    ASSERT_TRUE(doc.well_formed) << doc.error;
    for (const char* name : {"x", "y", "a"}) {
        const auto c = parse_rgb(doc.frame(name)->fill);
        EXPECT_TRUE(c.r == c.g && c.g == c.b) << name << " " << doc.frame(name)->fill;
    }
    EXPECT_NE(doc.all_text.find("share of total"), std::string::npos);
}

TEST(DiffFlamegraphSvg, EmptyAfterListsEverythingAsVanished) {
    const auto doc = parse_svg(render_diff_flamegraph_svg(stacks_of({{"a;x", 1}}), {}, {}));
    ASSERT_TRUE(doc.well_formed) << doc.error;
    EXPECT_NE(doc.all_text.find("no samples in AFTER"), std::string::npos);
    ASSERT_EQ(doc.vanished.size(), 1u);
    EXPECT_EQ(doc.vanished[0].rfind("a [before: 1 samples", 0), 0u);
}

// Every flamegraph of lockprof's own samples is labelled by one function.
TEST(SampledFlamegraphOptions, TitleNamesToolAndSubject) {
    const auto o =
        sampled_flamegraph_options("lockprof record", "postgres", "12 samples", "cycles");
    EXPECT_EQ(o.title, "lockprof record: postgres");
    EXPECT_EQ(o.subtitle, "12 samples");
    EXPECT_EQ(o.count_name, "cycles");
}

TEST(SampledFlamegraphOptions, CpuClockCountsNanosecondsAndNoEventCountsSamples) {
    EXPECT_EQ(sampled_flamegraph_options("lockprof", "tas", "", "cpu-clock").count_name,
              "ns of CPU time");
    EXPECT_EQ(sampled_flamegraph_options("lockprof", "tas", "", "").count_name, "samples");
    // The labels only: the rest is the renderer's defaults.
    EXPECT_EQ(sampled_flamegraph_options("lockprof", "tas", "", "cycles").width,
              SvgOptions{}.width);
}
