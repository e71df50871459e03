// `lockprof flamegraph`: folded stacks -> interactive SVG, or a differential SVG of two
// profiles (--diff BEFORE AFTER). Any folded file works (perf + stackcollapse, lockprof fold,
// inferno), so perf users can render with lockprof. See docs/flamegraph.md.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/cli.hpp"
#include "cli/perf_data_input.hpp"
#include "lockprof/common/output_file.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/export/flamegraph_svg.hpp"
#include "lockprof/export/folded.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

constexpr std::size_t kProblemsShown = 5;

struct FoldedInput {
    exporting::FoldedStacks stacks;
    std::string unit;  // what lockprof's unit comment says the counts are; "" when unknown
};

// Reads one folded input ("-" = stdin), or folds a perf.data file as `lockprof fold` would,
// printing skipped-line problems to stderr.
FoldedInput read_folded(const std::string& path, bool strict) {
    if (path != "-" && is_perf_data_file(path)) {
        exporting::PerfScriptOptions fold;
        fold.strict = strict;
        return {fold_perf_data_file(path, fold), ""};  // each sample counts 1: samples
    }
    exporting::ParseOptions options;
    options.strict = strict;
    exporting::ParseReport report;
    exporting::FoldedStacks stacks;
    const std::string name = path == "-" ? "<stdin>" : path;
    if (path == "-") {
        stacks = exporting::parse_folded(std::cin, name, options, report);
    } else {
        std::ifstream in(path, std::ios::binary);
        if (!in)
            throw UsageError(
                fmt::format("cannot read '{}': {}; check the path", path, std::strerror(errno)));
        stacks = exporting::parse_folded(in, name, options, report);
    }
    if (report.skipped > 0) {
        for (std::size_t i = 0; i < report.problems.size() && i < kProblemsShown; ++i)
            fmt::print(stderr, "lockprof: warning: {}\n", report.problems[i]);
        fmt::print(stderr,
                   "lockprof: warning: skipped {} malformed line{} of {} in {}{}; use --strict "
                   "to fail on them instead\n",
                   report.skipped, report.skipped == 1 ? "" : "s", report.lines, name,
                   report.skipped > kProblemsShown ? " (first ones shown)" : "");
    }
    return {std::move(stacks), report.unit};
}

// The unit of the graph: --unit when given, else what the inputs' unit comments say (lockprof
// wrote them: ns of CPU time for cpu-clock stacks), else samples. Two inputs that say
// different units cannot be compared.
std::string graph_unit(const boost::program_options::variables_map& vm,
                       const std::vector<std::string>& names,
                       const std::vector<const FoldedInput*>& inputs) {
    if (!vm["unit"].defaulted()) return vm["unit"].as<std::string>();
    std::string unit;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string& said = inputs[i]->unit;
        if (said.empty()) continue;
        if (!unit.empty() && said != unit)
            throw UsageError(fmt::format(
                "flamegraph --diff: {} counts {} and {} counts {}: a differential graph compares "
                "shares of one unit; record both with the same --sample-event, or give --unit "
                "to compare them anyway",
                names[0], inputs[0]->unit, names[1], said));
        unit = said;
    }
    return unit.empty() ? "samples" : unit;
}

}  // namespace

int flamegraph_command(const std::vector<std::string>& args, const std::vector<std::string>&) {
    exporting::SvgOptions svg;
    std::vector<std::string> inputs;
    std::string output, title, subtitle;
    po::options_description options("flamegraph options");
    options.add_options()("help,h", "show this help")(
        "output,o", po::value(&output), "SVG file to write ('-' = stdout; docs/reliability.md)")(
        "diff", "differential flamegraph of two inputs: BEFORE AFTER")(
        "title", po::value(&title),
        "title (default \"Flame Graph\", or \"Differential Flame "
        "Graph\" with --diff)")("subtitle", po::value(&subtitle),
                                "subtitle (default: input names and sample totals)")(
        "minwidth", po::value(&svg.min_width_px)->default_value(0.1),
        "leave out frames narrower than this many pixels")(
        "width", po::value(&svg.width)->default_value(1200), "image width in pixels")(
        "inverted", "icicle graph: root at the top, stacks growing down")(
        "unit", po::value<std::string>()->default_value("samples"),
        "what the counts are, for the tooltips and the subtitle. Default: what the inputs' "
        "first line says when lockprof wrote them (--folded of a run or record weighs each "
        "sample by its period and says so: ns of CPU time for cpu-clock, events for a hardware "
        "event), else samples")(
        "strict", "fail (exit 2) on the first malformed input line instead of skipping it");
    po::options_description hidden;
    hidden.add_options()("input", po::value(&inputs));
    po::positional_options_description positional;
    positional.add("input", -1);
    const auto vm = parse_arguments(args, options, "flamegraph", hidden, positional);
    if (vm.count("help")) {
        std::cout
            << "Usage: lockprof flamegraph IN.folded -o OUT.svg [options]\n"
               "       lockprof flamegraph --diff BEFORE.folded AFTER.folded -o DIFF.svg\n\n"
               "Renders folded stacks ('frame;frame;frame COUNT' lines, as written by `lockprof "
               "fold`,\n`lockprof --folded` or stackcollapse-perf.pl; a perf.data file is folded "
               "first,\nas `lockprof fold` folds it) as an interactive SVG: "
               "click to zoom,\nSearch (regex) to highlight, hover for samples and percent. "
               "'-' reads stdin.\nWith --diff, widths come from AFTER and colours show the change "
               "in each frame's\nshare of total samples (red grew, blue shrank); frames gone from "
               "AFTER are listed\nunder the graph. Malformed lines are skipped with a warning "
               "(--strict: exit 2).\nSee docs/flamegraph.md.\n\n"
            << options;
        return 0;
    }
    const bool diff = vm.count("diff") > 0;
    const std::size_t wanted = diff ? 2 : 1;
    if (inputs.size() != wanted)
        throw UsageError(fmt::format(
            "flamegraph: expected {} but got {} input file{}; {}",
            diff ? "BEFORE and AFTER" : "one", inputs.size(), inputs.size() == 1 ? "" : "s",
            diff ? "usage: lockprof flamegraph --diff BEFORE.folded AFTER.folded -o DIFF.svg"
                 : "usage: lockprof flamegraph IN.folded -o OUT.svg ('-' = stdin)"));
    if (diff && inputs[0] == "-" && inputs[1] == "-")
        throw UsageError(
            "flamegraph: BEFORE and AFTER cannot both be stdin; give at least one "
            "as a file");
    if (output.empty())
        throw UsageError("flamegraph: no output file; add -o OUT.svg (or -o - for stdout)");
    if (!std::isfinite(svg.min_width_px) || svg.min_width_px < 0)
        throw UsageError(fmt::format("--minwidth {}: must be a non-negative number of pixels",
                                     vm["minwidth"].as<double>()));
    check_output(output, "output");
    svg.inverted = vm.count("inverted") > 0;
    const bool strict = vm.count("strict") > 0;

    // File names only: full temporary paths would crowd the subtitle.
    const auto display = [](const std::string& p) {
        return p == "-" ? std::string("<stdin>") : std::filesystem::path(p).filename().string();
    };
    std::string rendered;
    if (diff) {
        const auto before = read_folded(inputs[0], strict);
        const auto after = read_folded(inputs[1], strict);
        svg.count_name =
            graph_unit(vm, {display(inputs[0]), display(inputs[1])}, {&before, &after});
        svg.title = vm.count("title") ? title : "Differential Flame Graph";
        svg.subtitle = vm.count("subtitle")
                           ? subtitle
                           : fmt::format("{} -> {}", display(inputs[0]), display(inputs[1]));
        rendered = exporting::render_diff_flamegraph_svg(before.stacks, after.stacks, svg);
    } else {
        const auto input = read_folded(inputs[0], strict);
        svg.count_name = graph_unit(vm, {display(inputs[0])}, {&input});
        svg.title = vm.count("title") ? title : "Flame Graph";
        svg.subtitle = vm.count("subtitle")
                           ? subtitle
                           : fmt::format("{}: {} {}, {} unique stacks", display(inputs[0]),
                                         input.stacks.total(), svg.count_name, input.stacks.size());
        rendered = exporting::render_flamegraph_svg(input.stacks, svg);
    }
    write_output(output, rendered);
    return 0;
}

}  // namespace lockprof::cli
