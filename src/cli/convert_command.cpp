// `lockprof convert SAMPLES --pprof FILE` (and --folded, --flamegraph): a saved sampled run's
// raw samples (`--samples-out`) written in the stack-output formats a live run writes, through
// the same table (stack_outputs.hpp), so a file converted later is the file the run would have
// written.
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/binary_copies.hpp"
#include "cli/cli.hpp"
#include "cli/perf_data_input.hpp"
#include "lockprof/perfdata/perf_data.hpp"
#include "cli/stack_outputs.hpp"
#include "lockprof/attribution/run_attribution.hpp"
#include "lockprof/attribution/pprof_builder.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/export/flamegraph_svg.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/results/result_reader.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

namespace {

// A perf.data file: its samples folded as `lockprof fold` folds them (the process name as root
// frame, the first event), written through the same table.
int convert_perf_data(const std::string& file, const StackOutputs& outputs) {
    if (outputs.instruction_leaf())
        throw UsageError(fmt::format(
            "convert: --leaf instruction needs lockprof's own samples; '{}' is a perf.data "
            "file, whose stacks end in functions (drop --leaf)",
            file));
    outputs.write([&] {
        auto stacks = fold_perf_data_file(file, {});
        exporting::SvgOptions labels;
        labels.title = "perf.data";
        labels.subtitle =
            fmt::format("{}: {} samples, {} unique stacks", file, stacks.total(), stacks.size());
        return SampledStacks{std::move(stacks), labels, [&] {
                                 return perfdata::perf_data_pprof(perfdata::PerfData::open(file));
                             }};
    });
    return 0;
}

}  // namespace

int convert_command(const std::vector<std::string>& args, const std::vector<std::string>&) {
    StackOutputs outputs("one per cell (tas/2t)", "sym+0x1c xchg", /*implies_sample=*/false,
                         /*loop_phases=*/true);
    po::options_description o("Options");
    o.add_options()("help,h", "show this help");
    o.add(outputs.options());
    add_binary_option(o);
    po::options_description operands;
    operands.add_options()("file", po::value<std::string>());
    po::positional_options_description positional;
    positional.add("file", 1);
    const auto vm = parse_arguments(args, o, "convert", operands, positional);
    if (vm.count("help")) {
        std::cout << "Usage: lockprof convert SAMPLES [--pprof FILE] [--folded FILE] "
                     "[--flamegraph FILE]\n\n"
                     "Writes the raw samples of a sampled run, saved with `lockprof --sample\n"
                     "--samples-out SAMPLES`, as a pprof profile (`go tool pprof FILE`), folded\n"
                     "stacks or an SVG flamegraph: the same files the run writes with the same\n"
                     "options. The binaries that ran must still be there, or be given as copies\n"
                     "with --binary. A perf.data file (perf record) converts too: its samples\n"
                     "folded as `lockprof fold` folds them, or as a pprof profile (--pprof).\n\n"
                  << o;
        return 0;
    }
    if (!vm.count("file"))
        throw UsageError("convert: which samples? give the file written by --samples-out");
    outputs.read(vm);
    if (!outputs.any())
        throw UsageError(
            "convert: nothing to write; give --pprof FILE, --folded FILE or --flamegraph FILE");
    const std::string file = vm["file"].as<std::string>();
    if (is_perf_data_file(file)) return convert_perf_data(file, outputs);
    workload::RunResult run = results::read_result(file);
    use_binary_copies(vm, run);
    if (!run.sampling || !attribution::has_raw_samples(run))
        throw UsageError(fmt::format(
            "'{}' holds no raw samples; record them with `lockprof --sample --samples-out "
            "FILE` (--output leaves them out to keep result files small)",
            file));
    // Phase and instruction leaves name the sampled instruction and the acquire loop, which
    // take the annotation's disassembly; function leaves and pprof resolve symbols only.
    attribution::RunAttribution attribution;
    if (outputs.leaf() != attribution::Leaf::function)
        attribution = attribution::attribute(run, {});
    for (const auto& w : attribution.warnings) fmt::print(stderr, "warning: {}\n", w);
    for (const auto& n : attribution.notes) fmt::print(stderr, "note: {}\n", n);
    outputs.write([&] {
        return SampledStacks{attribution::folded_stacks(run, attribution, outputs.leaf()),
                             attribution::flamegraph_options(run),
                             [&] { return attribution::run_pprof(run); }};
    });
    return 0;
}

}  // namespace lockprof::cli
