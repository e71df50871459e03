// `lockprof fold`: `perf script` text -> folded stacks, bridging users' own perf recordings
// (`perf record -g ...; perf script | lockprof fold | lockprof flamegraph - -o out.svg`).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/cli.hpp"
#include "lockprof/common/output_file.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/export/perf_script.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

int fold_command(const std::vector<std::string>& args, const std::vector<std::string>&) {
    std::string input = "-", output = "-", root = "comm", weight = "samples", event;
    po::options_description options("fold options");
    options.add_options()("help,h", "show this help")(
        "output,o", po::value(&output),
        "folded file to write (default stdout; docs/reliability.md)")(
        "root", po::value(&root)->default_value("comm"),
        "root frame: comm (process name, as stackcollapse-perf.pl), comm-pid (name-ID as perf "
        "printed the ID) or none")(
        "event", po::value(&event),
        "fold only this event's samples (e.g. cpu-clock), or 'all'; default: the first event "
        "in the input")("weight", po::value(&weight)->default_value("samples"),
                        "samples (each sample counts 1) or period (each sample counts its period)")(
        "no-kernel-suffix", "do not mark kernel frames with _[k]")(
        "strict", "fail (exit 2) on the first unrecognised line instead of skipping it");
    po::options_description hidden;
    hidden.add_options()("input", po::value(&input));
    po::positional_options_description positional;
    positional.add("input", 1);
    const auto vm = parse_arguments(args, options, "fold", hidden, positional);
    if (vm.count("help")) {
        std::cout << "Usage: lockprof fold [PERF_SCRIPT.txt|-] [-o OUT.folded] [options]\n\n"
                     "Reads `perf script` text (with or without callchains, i.e. `perf record "
                     "-g` or not)\nand writes folded stacks: one 'comm;root;...;leaf COUNT' line "
                     "per unique stack,\nsorted. Offsets are stripped, kernel frames get _[k], "
                     "unknown symbols are named\nafter their module. Input defaults to stdin.\n\n"
                     "Example:\n  perf record -e cpu-clock -g -- ./prog && perf script | "
                     "lockprof fold -o prog.folded\n  lockprof flamegraph prog.folded -o "
                     "prog.svg\n\n"
                  << options;
        return 0;
    }
    exporting::PerfScriptOptions fold;
    if (root == "comm")
        fold.root = exporting::PerfScriptOptions::Root::comm;
    else if (root == "comm-pid")
        fold.root = exporting::PerfScriptOptions::Root::comm_pid;
    else if (root == "none")
        fold.root = exporting::PerfScriptOptions::Root::none;
    else
        throw UsageError(fmt::format("--root '{}' is not known; use comm, comm-pid or none", root));
    if (weight == "period")
        fold.weight_by_period = true;
    else if (weight != "samples")
        throw UsageError(fmt::format("--weight '{}' is not known; use samples or period", weight));
    fold.event = event;
    fold.annotate_kernel = vm.count("no-kernel-suffix") == 0;
    fold.strict = vm.count("strict") > 0;
    check_output(output, "output");

    exporting::PerfScriptReport report;
    exporting::FoldedStacks stacks;
    const std::string name = input == "-" ? "<stdin>" : input;
    if (input == "-") {
        stacks = exporting::fold_perf_script(std::cin, name, fold, report);
    } else {
        std::ifstream in(input, std::ios::binary);
        if (!in)
            throw UsageError(
                fmt::format("cannot read '{}': {}; check the path", input, std::strerror(errno)));
        stacks = exporting::fold_perf_script(in, name, fold, report);
    }

    for (std::size_t i = 0; i < report.problems.size() && i < 5; ++i)
        fmt::print(stderr, "lockprof: warning: {}\n", report.problems[i]);
    if (report.skipped > 0)
        fmt::print(stderr,
                   "lockprof: warning: skipped {} unrecognised line{} of {} in {}; use --strict "
                   "to fail on them instead\n",
                   report.skipped, report.skipped == 1 ? "" : "s", report.lines, name);
    if (report.other_event > 0)
        fmt::print(stderr,
                   "lockprof: note: folded {} samples of event '{}', left out {} of other events "
                   "({}); choose with --event NAME or --event all\n",
                   report.folded, report.event, report.other_event,
                   fmt::join(report.other_events, ", "));
    if (!event.empty() && event != "all" && report.folded == 0 && report.samples > 0)
        throw UsageError(
            fmt::format("--event {}: no samples of that event in {} (it has: {}); "
                        "pick one of those",
                        event, name, fmt::join(report.other_events, ", ")));
    if (report.samples == 0)
        fmt::print(stderr,
                   "lockprof: warning: no samples found in {}; is it `perf script` output?\n",
                   name);

    write_output(output, exporting::to_folded_text(stacks));
    return 0;
}

}  // namespace lockprof::cli
