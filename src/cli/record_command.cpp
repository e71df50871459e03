// `lockprof record`: profile real programs with the same events, sampling, annotation and
// flamegraphs as lockprof's own runs (docs/record.md). Three phases, one function each: the
// command line becomes a RecordPlan (parse_record), the plan is recorded (run_recording), the
// recording is analysed and written (write_outputs). The options it shares with `run` are
// run's own objects: PmuOptions, SamplingOptions, StackOutputs.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/cli.hpp"
#include "cli/interrupts.hpp"
#include "cli/pmu_options.hpp"
#include "cli/sampling_options.hpp"
#include "cli/stack_outputs.hpp"
#include "lockprof/common/output_file.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/common/signal_name.hpp"
#include "lockprof/export/flamegraph_svg.hpp"
#include "lockprof/record/recording_pprof.hpp"
#include "lockprof/record/analysis.hpp"
#include "lockprof/record/recorder.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/report/record_report.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

constexpr const char* kUsage =
    "Usage:\n"
    "  lockprof record [options] -- CMD [ARGS...]     run CMD and record it until it exits\n"
    "  lockprof record [options] --pid PID[,PID...]   attach to running processes\n"
    "  lockprof record [options] --match NAME         attach to every process named NAME\n\n"
    "Counts events (the same aliases as runs: `lockprof events`) and, with --sample, samples\n"
    "where the recorded threads spend their time: the hottest symbols of every DSO, the\n"
    "hottest functions annotated instruction by instruction, and the spin-lock view (the\n"
    "share of samples in functions matching --lock-pattern, or inlined into their callers as\n"
    "DWARF says, as perf --inline finds them, and their hottest instructions).\n"
    "A command is counted with everything it starts (inherited counters) and lockprof exits\n"
    "with its exit status. Attached processes are counted per thread; threads (and, with\n"
    "--match, processes) that appear later are picked up by polling every 100 ms. SIGINT,\n"
    "SIGTERM or --duration ends the recording; lockprof detaches (a command is passed SIGTERM,\n"
    "then SIGKILL if it is still running 2 s later), writes everything it has and exits 130\n"
    "(SIGINT) or 143 (SIGTERM). A second signal does not stop the write-out; a third aborts.\n"
    "Code of stripped binaries shows as [no symbol] with its module; their debug symbols\n"
    "(a -dbgsym package, or a .debug file next to the binary) bring the names back.\n\n"
    "Examples:\n"
    "  lockprof record --match postgres --duration 10s --sample --flamegraph pg.svg\n"
    "  lockprof record --pid 4242 --event cycles,cache_misses --duration 5s --output r.json\n"
    "  lockprof record --sample --report r.html -- ./my_benchmark --threads 8\n"
    "  lockprof record --spin s_lock --match postgres --duration 10s   # contention per call "
    "site\n"
    "  lockprof record --sample --call-graph dwarf --flamegraph pg.svg --match postgres "
    "--duration 5s\n"
    "                  # whole stacks through code without frame pointers (glibc, -O2 builds)\n\n";

// The options record shares with `run`, as record words them.
SamplingOptions record_sampling() {
    return {"sample the recorded threads (perf_event)", 2, "", false,
            "--sample, or --spin (one probed entry in 64 then copies its stack too, for "
            "--spin-folded/--spin-flamegraph)"};
}
StackOutputs record_stacks() {
    return {"the process names", "sym+0x1c pause"};
}

// Everything a record command line asks for, checked before anything is started or attached.
struct RecordPlan {
    record::RecordSpec spec;
    std::string target;  // the command line, --match pattern or --pid list: the graph's title
    record::AnalysisOptions profile;
    unsigned listed = 0;  // --annotate-top: functions the report lists instruction by instruction
    std::string output;   // --output JSON, "" for none
    std::string spin_folded, spin_flamegraph;  // --spin-folded, --spin-flamegraph, "" for none
    std::string report;                        // --report HTML, "" for none
    bool quiet = false;
    StackOutputs stacks = record_stacks();
};

po::options_description record_options(const SamplingOptions& sampling,
                                       const StackOutputs& stacks) {
    po::options_description target("Target");
    // clang-format off
    target.add_options()
        ("pid,p", po::value<std::string>(), "attach to these processes and all their threads")
        ("match,m", po::value<std::string>(),
         "attach to every process whose name (/proc/PID/comm) is NAME, or matches it when "
         "NAME is a regex such as 'postgres|pgbench'")
        ("duration,d", po::value<std::string>(),
         "stop attaching after this long (10s, 500ms); default: until SIGINT or every target "
         "exits. A command is recorded until it exits");
    po::options_description spin("Spin slow paths (uprobes)");
    spin.add_options()
        ("spin", po::value<std::string>()->implicit_value(""),
         "FUNC[,FUNC]: count every entry of these functions per call site with uprobes, with "
         "the time from entry to return and the lock (first argument); without a value, the "
         "known slow paths found in the target (PostgreSQL's s_lock, glibc's "
         "pthread_spin_lock and __lll_lock_wait). Needs root or CAP_PERFMON")
        ("spin-folded", po::value<std::string>(),
         "write the time in the slow paths per call site as folded stacks, CALLER;FUNCTION at "
         "SITE weighted by nanoseconds from entry to return; implies --spin")
        ("spin-flamegraph", po::value<std::string>(),
         "the same as an SVG flamegraph: which call sites waited longest; implies --spin");
    po::options_description sampled("Sampling and annotation");
    add_options_of(sampled, sampling.options());
    sampled.add_options()
        ("lock-pattern", po::value<std::string>()->default_value(record::kDefaultLockPattern),
         "regex naming the spin-lock functions of the spin-lock view")
        ("top", po::value<std::string>()->default_value("15"), "hottest symbols listed");
    po::options_description outputs("Outputs");
    outputs.add_options()
        ("output,o", po::value<std::string>(),
         "write everything as JSON (schema lockprof.record, docs/record.md)")
        ("report", po::value<std::string>(),
         "write the HTML report: targets, counters, hottest symbols, annotation, the spin-lock "
         "view (docs/reports.md); `lockprof report` of --output's file writes the same page");
    add_options_of(outputs, stacks.options());
    outputs.add_options()
        ("quiet,q", po::bool_switch(), "print nothing on stdout (use with --output)")
        ("help,h", "show this help");
    // clang-format on
    po::options_description all;
    all.add(target).add(spin).add(PmuOptions{}.options()).add(sampled).add(outputs);
    return all;
}

// What is recorded: -- CMD, --pid or --match (exactly one), and for how long.
void read_target(const po::variables_map& vm, const std::vector<std::string>& command,
                 RecordPlan& plan) {
    record::RecordSpec& spec = plan.spec;
    const int targets =
        (vm.count("pid") ? 1 : 0) + (vm.count("match") ? 1 : 0) + (command.empty() ? 0 : 1);
    if (targets != 1)
        throw UsageError(targets == 0
                             ? "record: nothing to record; give -- CMD ARGS, --pid PID or --match "
                               "NAME (see `lockprof record --help`)"
                             : "record: give one target: -- CMD, --pid or --match, not several");
    if (!command.empty()) {
        spec.mode = record::Mode::command;
        spec.command = command;
        plan.target = fmt::format("{}", fmt::join(command, " "));
        if (vm.count("duration"))
            throw UsageError(
                "--duration applies to --pid and --match; a command is recorded until it "
                "exits (stop it with Ctrl-C)");
    } else if (vm.count("pid")) {
        spec.mode = record::Mode::pid;
        plan.target = vm["pid"].as<std::string>();
        spec.pids = record::parse_pid_list(plan.target, "pid");
    } else {
        spec.mode = record::Mode::match;
        spec.match = plan.target = vm["match"].as<std::string>();
        record::NameMatcher check(spec.match);  // refuses bad patterns now
    }
    if (vm.count("spin")) {
        const auto& value = vm["spin"].as<std::string>();
        spec.spin = value.empty() ? std::vector<std::string>{} : split_list(value, "spin");
    }
    if (vm.count("duration")) {
        spec.duration_ns = parse_duration_ns(vm["duration"].as<std::string>(), "duration");
        if (*spec.duration_ns == 0) throw UsageError("--duration must be longer than 0");
    }
}

// What the recording is analysed for and written to, and whether it is sampled.
void read_outputs(const po::variables_map& vm, const SamplingOptions& sampling, RecordPlan& plan) {
    plan.profile.lock_pattern = vm["lock-pattern"].as<std::string>();
    record::lock_regex(plan.profile.lock_pattern);  // refuses bad patterns now
    plan.profile.top_symbols = parse_count(vm["top"].as<std::string>(), "top");
    const auto annotation = sampling.annotation(vm);
    plan.listed = annotation.listed;
    plan.profile.annotate = annotation.options;
    if (vm.count("output")) {
        plan.output = vm["output"].as<std::string>();
        check_output(plan.output, "output");
    }
    for (auto [name, path] : {std::pair{"spin-folded", &plan.spin_folded},
                              std::pair{"spin-flamegraph", &plan.spin_flamegraph}})
        if (vm.count(name)) {
            *path = vm[name].as<std::string>();
            check_output(*path, name);
            if (!plan.spec.spin) plan.spec.spin.emplace();  // the known slow paths
        }
    if (vm.count("report")) {
        plan.report = vm["report"].as<std::string>();
        check_output(plan.report, "report");
    }
    plan.stacks.read(vm);
    plan.quiet = vm["quiet"].as<bool>();
    const auto graph = sampling.call_graph(vm, sampling.requested(vm) || plan.spec.spin.has_value(),
                                           "--sample or --spin");
    if (plan.spec.spin && graph.method == CallGraphRequest::Method::dwarf)
        plan.spec.spin_stack = graph.stack_size;
    if (sampling.requested(vm)) {
        sampling::SamplerRequest request;
        request.kind = sampling::SamplerKind::perf;
        sampling.read_request(vm, request);
        request.include_kernel = vm["kernel"].as<bool>();
        plan.spec.sampling = request;
    }
}

// The command line as a plan; nullopt when it asked for --help (printed).
std::optional<RecordPlan> parse_record(const std::vector<std::string>& all_args) {
    // Everything after `--` is the command, untouched by option parsing.
    std::vector<std::string> args = all_args, command;
    if (auto it = std::find(args.begin(), args.end(), "--"); it != args.end()) {
        command.assign(it + 1, args.end());
        args.erase(it, args.end());
    }
    // `--spin FUNC`: the value may be the next word (an implicit value is otherwise only
    // taken as --spin=FUNC); `--spin` before another option or at the end takes none.
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == "--spin" && !args[i + 1].starts_with('-')) {
            args[i] += "=" + args[i + 1];
            args.erase(args.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        }
    const SamplingOptions sampling = record_sampling();
    RecordPlan plan;
    const auto options = record_options(sampling, plan.stacks);
    const auto vm = parse_arguments(args, options, "record");
    if (vm.count("help")) {
        std::cout << kUsage << options
                  << "\nSee docs/record.md for permissions, outputs and symbols.\n";
        return std::nullopt;
    }
    read_target(vm, command, plan);
    read_outputs(vm, sampling, plan);
    if (auto counting = PmuOptions{}.plan(vm)) plan.spec.counting = std::move(*counting);
    return plan;
}

// Records until the command exits, every target is gone, --duration passes or a signal
// (interrupts.hpp); each step taken to stop a command is said on stderr as it is taken.
record::RecordResult run_recording(const RecordPlan& plan, const std::vector<std::string>& argv) {
    record::RecordSpec spec = plan.spec;
    spec.on_stop_step = [](const std::string& step) {
        std::fflush(stdout);
        fmt::print(stderr, "lockprof: {}\n", step);
        std::fflush(stderr);
    };
    record::RecordResult result = record::record(spec, argv, interrupts::stop_signal());
    for (const auto& note : plan.spec.counting.notes)
        result.notes.insert(result.notes.begin(), note);
    return result;
}

// Analyses the recording and writes what the plan asks for: the report on stdout, --output,
// the stack outputs.
void write_outputs(const RecordPlan& plan, const record::RecordResult& result) {
    const record::Images images(result);
    const record::RecordAnalysis profile = record::analyse(result, images, plan.profile);
    if (!plan.quiet)
        std::cout << report::render_record(result, profile, plan.profile.top_symbols, plan.listed)
                  << std::flush;
    if (!plan.output.empty())
        write_output(plan.output, report::json_text(report::record_to_json(result, profile), 1));
    if (profile.spin_calls && !(plan.spin_folded.empty() && plan.spin_flamegraph.empty())) {
        const auto folded = record::spin_folded(*profile.spin_calls);
        constexpr const char* kUnit = "ns in the slow path";
        if (!plan.spin_folded.empty())
            write_output(plan.spin_folded, exporting::to_folded_text(folded, kUnit));
        if (!plan.spin_flamegraph.empty()) {
            exporting::SvgOptions labels;
            labels.title = "lockprof record --spin: " + plan.target;
            labels.subtitle = fmt::format("{} slow-path entries, time from entry to return",
                                          profile.spin_calls->entries);
            labels.count_name = kUnit;
            write_output(plan.spin_flamegraph, exporting::render_flamegraph_svg(folded, labels));
        }
    }
    if (!plan.report.empty())
        write_output(plan.report, report::render_record_html(result, profile, "lockprof report"));
    plan.stacks.write([&] {
        const std::string event = result.sampling ? result.sampling->event : "";
        return SampledStacks{
            record::folded_stacks(result, images, profile, plan.stacks.instruction_leaf()),
            exporting::sampled_flamegraph_options(
                "lockprof record", plan.target,
                fmt::format("{} samples of {}", profile.samples, event), event),
            [&] { return record::recording_pprof(result, images); }};
    });
}

}  // namespace

int record_command(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
    const auto plan = parse_record(args);
    if (!plan) return 0;  // --help
    // SIGINT/SIGTERM (held by cli::main since the start, interrupts.hpp): end the recording,
    // then write what it holds.
    const record::RecordResult result = run_recording(*plan, argv);
    interrupts::writing_outputs();
    write_outputs(*plan, result);
    if (const int interrupted = interrupts::exit_code()) {
        fmt::print(stderr, "lockprof: {}; every output was written{}\n",
                   result.interrupted
                       ? "recording interrupted by " + result.interrupted_by
                       : signal_name(interrupts::stop_signal().load()) + " after the recording",
                   interrupts::signals_received() > 1
                       ? fmt::format(" ({} signals: the later ones did not stop the write-out)",
                                     interrupts::signals_received())
                       : "");
        return interrupted;
    }
    if (result.exit_status) return *result.exit_status;
    return 0;
}

}  // namespace lockprof::cli
