// `lockprof fold`: `perf script` text -> folded stacks, bridging users' own perf recordings
// (`perf record -g ...; perf script | lockprof fold | lockprof flamegraph - -o out.svg`).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/cli.hpp"
#include "cli/perf_data_input.hpp"
#include "lockprof/common/output_file.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/export/perf_script.hpp"
#include "lockprof/perfdata/perf_data.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

namespace {

// --root, --weight, --event, --no-kernel-suffix and --strict as folding options.
exporting::PerfScriptOptions fold_options(const std::string& root, const std::string& weight,
                                          const std::string& event, const po::variables_map& vm) {
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
    return fold;
}

// Standard input, perf.data when it starts with the magic (`perf_data` then true).
exporting::FoldedStacks fold_stdin(const std::string& name,
                                   const exporting::PerfScriptOptions& fold,
                                   exporting::PerfScriptReport& report, bool& perf_data) {
    char head[8] = {};
    std::cin.read(head, sizeof head);
    const std::string start(head, static_cast<std::size_t>(std::cin.gcount()));
    perf_data = perfdata::looks_like_perf_data(start);
    if (perf_data) {
        std::string bytes = start;
        bytes.append(std::istreambuf_iterator<char>(std::cin), {});
        return perfdata::fold(perfdata::PerfData::from_bytes(std::move(bytes), name), fold, report);
    }
    // The bytes already read, then the rest of stdin, in blocks.
    struct Joined : std::streambuf {
        std::streambuf* rest;
        std::string buffer;
        Joined(std::string first, std::streambuf* r) : rest(r), buffer(std::move(first)) {
            setg(buffer.data(), buffer.data(), buffer.data() + buffer.size());
        }
        int_type underflow() override {
            buffer.resize(1 << 16);
            const auto n = rest->sgetn(buffer.data(), static_cast<std::streamsize>(buffer.size()));
            if (n <= 0) return traits_type::eof();
            setg(buffer.data(), buffer.data(), buffer.data() + n);
            return traits_type::to_int_type(buffer[0]);
        }
    } joined(start, std::cin.rdbuf());
    std::istream in(&joined);
    return exporting::fold_perf_script(in, name, fold, report);
}

// The file `input`, perf.data when it starts with the magic (`perf_data` then true).
exporting::FoldedStacks fold_file(const std::string& input,
                                  const exporting::PerfScriptOptions& fold,
                                  exporting::PerfScriptReport& report, bool& perf_data) {
    std::ifstream in(input, std::ios::binary);
    if (!in)
        throw UsageError(
            fmt::format("cannot read '{}': {}; check the path", input, std::strerror(errno)));
    char head[8] = {};
    in.read(head, sizeof head);
    perf_data = perfdata::looks_like_perf_data(
        std::string_view(head, static_cast<std::size_t>(in.gcount())));
    if (perf_data) {
        in.close();
        return perfdata::fold(perfdata::PerfData::open(input), fold, report);
    }
    in.clear();
    in.seekg(0);
    return exporting::fold_perf_script(in, input, fold, report);
}

}  // namespace

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
        std::cout << "Usage: lockprof fold [perf.data|PERF_SCRIPT.txt|-] [-o OUT.folded] "
                     "[options]\n\n"
                     "Reads a perf.data file directly, or `perf script` text (with or without "
                     "callchains,\ni.e. `perf record -g` or not), and writes folded stacks: one "
                     "'comm;root;...;leaf COUNT'\nline per unique stack, sorted. Offsets are "
                     "stripped, kernel frames get _[k], unknown\nsymbols are named after their "
                     "module. Input defaults to stdin.\n\n"
                     "A perf.data file folds as `perf script | lockprof fold` folds it "
                     "(docs/flamegraph.md).\n\n"
                     "Example:\n  perf record -e cpu-clock -g -- ./prog && lockprof fold "
                     "perf.data -o prog.folded\n  lockprof flamegraph prog.folded -o "
                     "prog.svg\n\n"
                  << options;
        return 0;
    }
    const exporting::PerfScriptOptions fold = fold_options(root, weight, event, vm);
    check_output(output, "output");

    exporting::PerfScriptReport report;
    const std::string name = input == "-" ? "<stdin>" : input;
    // perf.data (its PERFILE2 magic) is read directly; anything else is perf script text.
    bool perf_data = false;
    const exporting::FoldedStacks stacks = input == "-" ? fold_stdin(name, fold, report, perf_data)
                                                        : fold_file(input, fold, report, perf_data);

    print_fold_report(report, name, event, perf_data);

    write_output(output, exporting::to_folded_text(stacks));
    return 0;
}

}  // namespace lockprof::cli
