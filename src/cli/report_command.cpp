// `lockprof report RESULT.json -o FILE.html [--plot FILE.svg]`: the HTML report (and the
// standalone scalability plot) from a saved result, without measuring again. A result written
// with --samples-out also gets hot instructions and the flamegraph. Without either output, the
// run's table and explanation as the run printed them (--verbose: in full).
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/binary_copies.hpp"
#include "cli/cli.hpp"
#include "lockprof/common/output_file.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/report/hosts_report.hpp"
#include "lockprof/report/html_report.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/report/plot.hpp"
#include "lockprof/report/record_document.hpp"
#include "lockprof/report/record_report.hpp"
#include "lockprof/report/run_report.hpp"
#include "lockprof/analysis/hosts.hpp"
#include "lockprof/analysis/report_inputs.hpp"
#include "lockprof/analysis/explain.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/results/result_reader.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

namespace {

po::options_description report_options() {
    po::options_description o("Options");
    // clang-format off
    o.add_options()
        ("help,h", "show this help")
        ("output,o", po::value<std::string>(), "the HTML report to write")
        ("plot", po::value<std::string>(),
         "also (or only) write the scalability plot as a standalone SVG")
        ("threads", po::value<unsigned>(),
         "thread count whose hot instructions are listed (default: the largest sampled)")
        ("title", po::value<std::string>()->default_value("lockprof report"), "report heading")
        ("verbose,v", po::bool_switch(),
         "without -o or --plot: the table and explanation in full, as `lockprof run --verbose` "
         "prints them")
        ("equivalence", po::value<std::string>()->default_value("2%"),
         "equivalence band of the `vs first` verdicts and the explanation (2%, 5%, 0.05)")
        ("objdump", po::value<std::string>(),
         "objdump to disassemble sampled code with (default: objdump, or "
         "aarch64-linux-gnu-objdump for aarch64 binaries)");
    // clang-format on
    return o;
}

// A recording has one output, its HTML report.
void write_recording_report(const nlohmann::json& recording, const po::variables_map& vm,
                            bool text) {
    if (text)
        throw UsageError(
            "report: nothing to write for a recording; give -o REPORT.html for its report");
    if (vm.count("plot"))
        throw UsageError(
            "--plot: a recording has no thread counts to plot; give -o REPORT.html for its "
            "report");
    write_output(vm["output"].as<std::string>(),
                 report::render_record_html(report::record_document_from_json(recording),
                                            vm["title"].as<std::string>()));
}

// The table and the explanation on stdout, as the run printed them.
void print_run_text(const workload::RunResult& run,
                    const std::vector<analysis::CellSummary>& summaries,
                    const po::variables_map& vm) {
    // What the run printed: the table, then the explanation from its counted evidence.
    const auto detail = vm["verbose"].as<bool>() ? analysis::Detail::full : analysis::Detail::brief;
    std::cout << report::render_table(run, summaries, detail);
    analysis::ExplainThresholds thresholds;
    thresholds.verdict = analysis::verdict_options(summaries);
    const std::string explanation = analysis::render_explanation(
        analysis::explain(analysis::gather_evidence(run, summaries, nullptr), thresholds), detail);
    // As a run decides (sampling_extension.cpp): an explanation where something was counted.
    const bool counted = std::any_of(summaries.begin(), summaries.end(),
                                     [](const auto& s) { return !s.events.empty(); });
    if (counted && !explanation.empty()) std::cout << "\n" << explanation;
}

// --plot's SVG and -o's HTML report of a run result.
void write_run_report(const workload::RunResult& run,
                      const std::vector<analysis::CellSummary>& summaries,
                      const po::variables_map& vm, const std::string& file,
                      const attribution::AnnotateOptions& annotate) {
    if (vm.count("plot")) {
        auto spec = report::scalability_plot(run, summaries);
        spec.standalone = true;
        write_output(vm["plot"].as<std::string>(), report::render_plot(spec));
    }
    if (vm.count("output")) {
        report::HtmlReportOptions options;
        options.title = vm["title"].as<std::string>();
        options.source = file;
        if (vm.count("threads")) options.annotate_threads = vm["threads"].as<unsigned>();
        write_output(vm["output"].as<std::string>(),
                     report::render_html_report(
                         run, summaries,
                         report::with_flamegraph(
                             analysis::gather_report_inputs(run, summaries, annotate), run),
                         options));
    }
}

// `name=FILE` or FILE: a path that exists is a file whatever it holds; otherwise the text
// before the first '=' names the host.
analysis::HostInput host_input(const std::string& argument) {
    analysis::HostInput in;
    in.file = argument;
    const auto eq = argument.find('=');
    if (eq != std::string::npos && eq > 0 && !std::filesystem::exists(argument)) {
        in.name = argument.substr(0, eq);
        in.file = argument.substr(eq + 1);
        if (in.file.empty())
            throw UsageError(
                fmt::format("report: '{}' names a host but no file; write NAME=FILE", argument));
    }
    if (report::read_recording(in.file))
        throw UsageError(fmt::format(
            "report: {} is a `lockprof record` recording; a cross-host report reads run "
            "results (`lockprof run --output`); report a recording on its own",
            in.file));
    in.run = results::read_result(in.file);
    return in;
}

// Several result files: the cross-host report, as text or -o HTML (--plot: its throughput plot).
int write_hosts_report(const std::vector<std::string>& files, const po::variables_map& vm,
                       const analysis::VerdictOptions& verdict) {
    for (const char* single : {"threads", "objdump", "binary"})
        if (vm.count(single))
            throw UsageError(fmt::format(
                "--{}: applies to one result's report, not to a report of several hosts; drop it",
                single));
    if (vm["verbose"].as<bool>())
        throw UsageError(
            "--verbose: applies to one result's table, not to a report of several hosts; drop it");
    // Read everything first: a bad file fails before any output.
    std::vector<analysis::HostInput> inputs;
    for (const auto& f : files) inputs.push_back(host_input(f));
    const auto hosts = analysis::compare_hosts(inputs, verdict);
    if (vm.count("plot")) {
        auto spec = report::hosts_plot(hosts, false);
        spec.standalone = true;
        write_output(vm["plot"].as<std::string>(), report::render_plot(spec));
    }
    if (vm.count("output"))
        write_output(vm["output"].as<std::string>(),
                     report::hosts_html(hosts, vm["title"].as<std::string>()));
    if (!vm.count("output") && !vm.count("plot")) std::cout << report::hosts_text(hosts);
    return 0;
}

}  // namespace

int report_command(const std::vector<std::string>& args, const std::vector<std::string>&) {
    po::options_description o = report_options();
    add_binary_option(o);
    po::options_description operands;
    operands.add_options()("file", po::value<std::vector<std::string>>());
    po::positional_options_description positional;
    positional.add("file", -1);
    const auto vm = parse_arguments(args, o, "report", operands, positional);
    if (vm.count("help")) {
        std::cout << "Usage: lockprof report RESULT.json -o REPORT.html [--plot PLOT.svg]\n"
                     "       lockprof report RESULT.json [--verbose]   the table, on stdout\n"
                     "       lockprof report RECORDING.json -o REPORT.html\n"
                     "       lockprof report [NAME=]A.json [NAME=]B.json ... [-o HOSTS.html]\n\n"
                     "Renders a result file (--output, or --samples-out for hot instructions\n"
                     "and the flamegraph) as one self-contained HTML page with plots that\n"
                     "opens offline and prints. A `lockprof record --output` recording is\n"
                     "rendered too: its targets, counters, hottest symbols and annotation, the\n"
                     "spin-lock view and --spin's call sites, the same page `record --report`\n"
                     "writes.\n\n"
                     "Several result files, from different machines, make one cross-host\n"
                     "report: for each lock pair every file has, each host's verdict per\n"
                     "thread count and where the conclusion holds; throughput plots with a\n"
                     "line per host; the hosts' provenance side by side with the differences\n"
                     "that can explain a result marked (assertions, LSE, flags); what each\n"
                     "host's PMU counted. Hosts are named from their files (hostname, CPU)\n"
                     "or as NAME=FILE. Text on stdout, or HTML with -o. See docs/reports.md.\n\n"
                  << o;
        return 0;
    }
    if (!vm.count("file"))
        throw UsageError(
            "report: which result? give the JSON written by --output or --samples-out");
    const auto files = vm["file"].as<std::vector<std::string>>();
    for (const char* option : {"output", "plot"})
        if (vm.count(option)) check_output(vm[option].as<std::string>(), option);
    attribution::AnnotateOptions annotate;
    if (vm.count("objdump")) {
        annotate.objdump = vm["objdump"].as<std::string>();
        if (!program_exists(annotate.objdump))
            throw UsageError(fmt::format(
                "--objdump: '{}' is not an executable program; install binutils or give the "
                "path of one",
                annotate.objdump));
    }

    analysis::VerdictOptions verdict;
    verdict.equivalence = analysis::parse_equivalence(vm["equivalence"].as<std::string>());
    if (files.size() > 1) return write_hosts_report(files, vm, verdict);
    const std::string file = files[0];
    const bool text = !vm.count("output") && !vm.count("plot");
    if (auto recording = report::read_recording(file)) {
        write_recording_report(*recording, vm, text);
        return 0;
    }
    workload::RunResult run = results::read_result(file);
    use_binary_copies(vm, run);
    const auto summaries = analysis::summarize(run, verdict);
    if (text) {
        print_run_text(run, summaries, vm);
        return 0;
    }
    write_run_report(run, summaries, vm, file, annotate);
    return 0;
}

}  // namespace lockprof::cli
