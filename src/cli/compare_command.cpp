// `lockprof compare BASE.json NEW.json [...]`: the thread's "head vs patch" table. Every NEW is
// compared with BASE cell by cell; provenance differences are warned about above the table and
// never refused (a reviewer may still want to see the numbers). The outputs are
// report/compare_report's.
#include <iostream>
#include <string_view>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/cli.hpp"
#include "lockprof/analysis/compare.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/output_file.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/report/compare_report.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/results/result_reader.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

int compare_command(const std::vector<std::string>& args, const std::vector<std::string>&) {
    po::options_description o("Options");
    // clang-format off
    o.add_options()
        ("help,h", "show this help")
        ("format,f", po::value<std::string>()->default_value("table"),
         "table, markdown (for a mailing list or issue), json or csv")
        ("output,o", po::value<std::string>(), "write to this file instead of standard output")
        ("confidence", po::value<std::string>()->default_value("0.95"),
         "family-wise confidence of the intervals (Bonferroni over the cells), 0.5 to 0.999")
        ("equivalence", po::value<std::string>()->default_value("2%"),
         "equivalence band: ratios within 1 +- this are equivalent (2%, 5%, 0.05)");
    // clang-format on
    po::options_description operands;
    operands.add_options()("files", po::value<std::vector<std::string>>());
    // Removed with the bootstrap; still recognised, so the error can say why (below).
    operands.add_options()("resamples", po::value<std::string>())("seed", po::value<std::string>());
    po::positional_options_description positional;
    positional.add("files", -1);
    const auto vm = parse_arguments(args, o, "compare", operands, positional);
    if (vm.count("help")) {
        std::cout
            << "Usage: lockprof compare BASE.json NEW.json [NEW2.json ...] [options]\n\n"
               "Compares the throughput of result files (--output) cell by cell (lock,\n"
               "threads) with BASE: each run's median acquires/s and spread over trials,\n"
               "the ratio NEW/BASE (geometric means), its confidence interval and a verdict:\n"
               "faster or slower (interval outside the --equivalence band), equivalent\n"
               "(inside it) or inconclusive (with the trials that would likely settle it);\n"
               "fewer than 3 trials per side give no interval. Warns above the table when\n"
               "builds, CPUs or workloads differ, and a verdict from builds or machines that\n"
               "differ says it is not like-for-like. See docs/reports.md.\n\n"
            << o;
        return 0;
    }
    for (const char* removed : {"resamples", "seed"})
        if (vm.count(removed))
            throw UsageError(fmt::format(
                "compare: --{} was removed: verdicts no longer come from a bootstrap but from a "
                "Welch t interval on the trials' log acquires/s, which resamples nothing and "
                "gives the same answer every time (docs/reports.md); drop --{}{}",
                removed, removed,
                std::string_view(removed) == "resamples" ? ", and set the level with --confidence"
                                                         : ""));
    const auto files =
        vm.count("files") ? vm["files"].as<std::vector<std::string>>() : std::vector<std::string>{};
    if (files.size() < 2)
        throw UsageError(
            "compare: needs a base and at least one new result file: lockprof compare BASE.json "
            "NEW.json");
    const std::string format = vm["format"].as<std::string>();
    if (format != "table" && format != "markdown" && format != "json" && format != "csv")
        throw UsageError(fmt::format(
            "compare: --format '{}' is not a format; use table, markdown, json or csv", format));
    analysis::VerdictOptions options;
    const std::string confidence = vm["confidence"].as<std::string>();
    try {
        std::size_t used = 0;
        options.confidence = std::stod(confidence, &used);
        if (used != confidence.size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
        throw UsageError(fmt::format("--confidence: '{}' is not a number; try 0.95", confidence));
    }
    if (!(options.confidence >= 0.5 && options.confidence <= 0.999))
        throw UsageError("--confidence: must be between 0.5 and 0.999; try 0.95");
    options.equivalence = analysis::parse_equivalence(vm["equivalence"].as<std::string>());
    if (vm.count("output")) check_output(vm["output"].as<std::string>(), "output");

    // Read everything first: a bad file fails before any output.
    std::vector<report::ComparedFile> loaded;
    for (const auto& file : files) loaded.push_back({file, results::read_result(file)});
    std::vector<report::FileComparison> compared;
    for (std::size_t i = 1; i < loaded.size(); ++i)
        compared.push_back(
            {&loaded[i], analysis::compare_runs(loaded[0].run, loaded[i].run, options)});

    std::string text;
    if (format == "table") text = report::compare_table(loaded[0], compared);
    if (format == "markdown") text = report::compare_markdown(loaded[0], compared);
    if (format == "json") text = report::compare_json(loaded[0], compared, options);
    if (format == "csv") {
        text = report::compare_csv(compared);
        // CSV has no place for prose: warnings go to stderr so they are still seen.
        for (const auto& c : compared)
            for (const auto& w : c.comparison.warnings)
                fmt::print(stderr, "lockprof: warning: {}: {}\n", c.other->file, w.message);
    }
    if (vm.count("output"))
        write_output(vm["output"].as<std::string>(), text);
    else
        std::cout << text;
    return 0;
}

}  // namespace lockprof::cli
