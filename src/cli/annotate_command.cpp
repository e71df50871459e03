// `lockprof annotate FILE`: re-renders the annotation and the explanation of a sampled run
// from its saved raw samples (--samples-out), without measuring again.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/sampling_options.hpp"
#include "cli/binary_copies.hpp"
#include "cli/cli.hpp"
#include "lockprof/analysis/explain.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/analysis/report_inputs.hpp"
#include "lockprof/report/annotation_report.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/results/result_reader.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

int annotate_command(const std::vector<std::string>& args, const std::vector<std::string>&) {
    const SamplingOptions sampling("", 3, " per cell");
    po::options_description o("Options");
    o.add_options()("help,h", "show this help");
    o.add(sampling.annotation_options());
    // clang-format off
    o.add_options()
        ("lock", po::value<std::string>(), "only these locks, comma-separated")
        ("threads", po::value<std::string>(), "only these thread counts")
        ("no-explain", po::bool_switch(), "do not print the diagnosis");
    // clang-format on
    add_binary_option(o);
    po::options_description operands;
    operands.add_options()("file", po::value<std::string>());
    po::positional_options_description positional;
    positional.add("file", 1);
    const auto vm = parse_arguments(args, o, "annotate", operands, positional);
    if (vm.count("help")) {
        std::cout << "Usage: lockprof annotate FILE [options]\n\n"
                     "Annotates the hottest functions of every cell of a sampled run, from a\n"
                     "result written with `lockprof --sample --samples-out FILE`, and explains\n"
                     "the differences between the locks. The binaries that ran must still be\n"
                     "there (lockprof warns when their build id changed), or be given as copies\n"
                     "with --binary: on a machine without binutils, keep the samples and copy\n"
                     "the lockprof binary to one that has them, then `lockprof annotate FILE\n"
                     "--binary ./lockprof`.\n\n"
                  << o;
        return 0;
    }
    if (!vm.count("file"))
        throw UsageError("annotate: which result? give the file written by --samples-out");
    const std::string file = vm["file"].as<std::string>();
    workload::RunResult run = results::read_result(file);
    use_binary_copies(vm, run);
    bool has_samples = false;
    for (const auto& cell : run.cells)
        for (const auto& trial : cell.trials)
            for (const auto& thread : trial.threads) has_samples |= !thread.samples.empty();
    if (!run.sampling || !has_samples)
        throw UsageError(fmt::format(
            "'{}' holds no raw samples; record them with `lockprof --sample --samples-out "
            "FILE` (--output leaves them out to keep result files small)",
            file));

    // Narrow to the cells asked for, keeping run order.
    std::vector<std::string> locks;
    std::vector<unsigned> threads;
    if (vm.count("lock")) locks = split_list(vm["lock"].as<std::string>(), "lock");
    if (vm.count("threads"))
        threads = parse_thread_list(vm["threads"].as<std::string>(), "threads");
    std::vector<workload::CellResult> kept;
    for (auto& cell : run.cells) {
        const bool lock_ok =
            locks.empty() || std::find(locks.begin(), locks.end(), cell.lock) != locks.end();
        const bool threads_ok = threads.empty() || std::find(threads.begin(), threads.end(),
                                                             cell.threads) != threads.end();
        if (lock_ok && threads_ok) kept.push_back(std::move(cell));
    }
    if (kept.empty())
        throw UsageError(fmt::format("annotate: no cell of '{}' matches --lock/--threads", file));
    run.cells = std::move(kept);

    // The explanation reads the hottest functions' instructions even without listings.
    const auto [listing_top, asked, options] = sampling.annotation(vm);
    (void)asked;  // annotate always prints whole listings: it is where they are read

    fmt::print("{} sampler, event {}, recorded {} by lockprof {}\n", run.sampling->sampler,
               run.sampling->event, run.provenance.timestamp_utc, run.provenance.lockprof_version);
    for (const auto& note : run.notes)
        if (note.rfind("sampling:", 0) == 0) fmt::print("note: {}\n", note);
    const auto attribution = attribution::attribute(run, options);
    std::cout << report::render_annotations(run, attribution, listing_top);
    if (!vm["no-explain"].as<bool>()) {
        const auto summaries = analysis::summarize(run);
        const std::string text = analysis::render_explanation(
            analysis::explain(analysis::gather_evidence(run, summaries, &attribution)));
        if (!text.empty()) std::cout << "\n" << text;
    }
    return 0;
}

}  // namespace lockprof::cli
