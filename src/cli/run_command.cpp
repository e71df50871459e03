// The default command: options -> RunSpec -> plan -> sweep -> summaries -> table/JSON/CSV.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/arguments.hpp"
#include "cli/cli.hpp"
#include "cli/interrupts.hpp"
#include "cli/process_runner.hpp"
#include "cli/profile.hpp"
#include "cli/run_extension.hpp"
#include "cli/sweep_progress.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/common/output_file.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/git_revision.hpp"
#include "lockprof/common/output_registry.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/common/signal_name.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/report/run_report.hpp"
#include "lockprof/workload/cpu_order.hpp"
#include "lockprof/workload/sched.hpp"
#include "lockprof/workload/sweep.hpp"
#include "lockprof_build_info.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

std::string default_threads() {
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    std::string list;
    for (unsigned n = 1; n < cpus; n *= 2) list += fmt::format("{},", n);
    return list + std::to_string(cpus);
}

// The workload's placement, scheduling, trials and safety options.
void add_schedule_options(po::options_description& o) {
    // clang-format off
    o.add_options()
        ("pin", po::value<std::string>()->default_value("none"),
         "thread placement: none, compact (CPUs in order), scatter (spread over packages and "
         "cores first), or a CPU list such as 0,2,4-7")
        ("cpu-order", po::value<std::string>(),
         "pin worker i to the i-th CPU a text file lists (numbers separated by spaces, commas "
         "or newlines, # comments), as lockhammer's -C: a machine's order of CPUs, kept in a "
         "file and shared between runs. The file must list every CPU once, online, and at "
         "least as many as the largest --threads count. Instead of --pin (it is a --pin list "
         "read from a file, recorded as pin mode list with the file's name)")
        ("sched", po::value<std::string>()->default_value("other"),
         "the workers' scheduling policy: other (SCHED_OTHER, the default) or fifo "
         "(SCHED_FIFO priority 1, so nothing of normal priority preempts a lock holder; needs "
         "root or CAP_SYS_NICE, refused before any trial otherwise). FIFO spinners starve "
         "other work on their CPUs: lockprof warns on a machine in use, and refuses more "
         "threads than CPUs without --force")
        ("force", po::bool_switch(),
         "with --sched fifo: run more threads than CPUs anyway (a spinning FIFO waiter keeps "
         "the holder off its CPU, so the lock livelocks until real-time throttling intervenes)")
        ("warmup", po::value<std::string>()->default_value("0"),
         "how long each cell's verification trial runs (e.g. 200ms): every cell first runs "
         "one trial with the exclusion check on every acquire, unrecorded among the measured "
         "trials, which also warms it up; without --warmup (or with the default 0, which needs "
         "no unit) it lasts as long as a trial, at most 200 ms. A lock that claims no "
         "exclusion (empty) only warms up, with --warmup")
        ("trials", po::value<std::string>()->default_value("3"),
         "repetitions of each cell; figures are medians with the trials' spread, and "
         "comparisons with the first lock get a 95% interval and a verdict (3 or more; "
         "5 or more for useful intervals). `auto` (with --max-time): at least 3 per cell, "
         "then more, round-robin over the cells still unsettled, until each cell's own "
         "interval on its acquires/s lies within the --equivalence band or the budget is "
         "spent; cells the budget stopped are listed under the table as inconclusive")
        ("max-time", po::value<std::string>(),
         "with --trials auto: the time budget of the whole sweep, warm-up included (30s, 600s); "
         "the first 3 trials of every cell always run, later ones start only within it")
        ("equivalence", po::value<std::string>()->default_value("2%"),
         "equivalence band of the verdicts: a ratio whose interval lies within 1 +- this is "
         "`equivalent` (2%, 5%, 0.05)")
        ("processes", po::value<std::string>()->default_value("1"),
         "run the whole sweep N times, each in a fresh lockprof process, --trials trials of "
         "every cell in each, so lock placement, page colouring and scheduling differ between "
         "them; from 3 processes on the verdicts resample over processes (each one's trials "
         "pooled into its geometric mean), below that over all trials, and the notes under "
         "the table say which. Not with --trials auto or --sample")
        ("seed", po::value<std::string>()->default_value("1"), "seed for randomised work")
        ("latency", po::bool_switch(),
         "record each acquire's latency with the tick counter (p50, p99, p99.9, max)")
        ("watchdog", po::value<std::string>()->default_value("10s"),
         "end the run with an error if no acquire completes for this long")
        ("no-perturbation-check", po::bool_switch(),
         "with --sample (or any stack output) or --event: do not measure the observer effect. "
         "By default such a run pairs every measured trial with the same trial run without "
         "instruments, in alternating order, which doubles the measured trials' time; the "
         "table's instr/plain column then says whether the instruments raised or lowered "
         "throughput, and acquires/s and vs first come from the plain trials");
    // clang-format on
}

po::options_description workload_options() {
    po::options_description o("Workload");
    // clang-format off
    o.add_options()
        ("lock,l", po::value<std::string>()->default_value("tas,ttas,cas"),
         "locks to compare, comma-separated; the first is the baseline of the `vs first` "
         "column. `lockprof list-locks` shows them all")
        ("threads,t", po::value<std::string>()->default_value(default_threads()),
         "thread counts to sweep: 1,2,4,8 or ranges 1-4 (default: powers of two up to the "
         "number of CPUs). More threads than CPUs is allowed: that is oversubscription")
        ("duration,d", po::value<std::string>()->default_value("500ms"),
         "how long each trial runs: 2s, 500ms, 250us. Every duration option needs its unit "
         "(ns, us, ms, s, m): a bare 100 is refused, not taken as 100 s; only 0 may go without")
        ("acquires,n", po::value<std::string>(),
         "instead of --duration, stop each thread after this many acquires (50000, 50k)")
        ("critical-ns", po::value<std::string>()->default_value("0"),
         "busy work inside the critical section, in nanoseconds; each worker calibrates it "
         "after pinning, all at once, and the table's workload line shows what it measured")
        ("parallel-ns", po::value<std::string>()->default_value("0"),
         "busy work outside the lock between acquires, in nanoseconds")
        ("critical-ins", po::value<std::string>(),
         "instead of --critical-ns: the critical section's busy work as a count of "
         "instructions, N/2 trips of a two-instruction loop (a decrement and a branch, as "
         "lockhammer's -c Nin), with nothing to calibrate: for machines whose timer is too "
         "coarse to time short work (a 25 MHz generic timer ticks every 40 ns). N must be even; "
         "the table's workload line shows what the instructions took here")
        ("parallel-ins", po::value<std::string>(),
         "instead of --parallel-ns: the busy work between acquires as a count of instructions "
         "of the same loop (as lockhammer's -p Nin)")
        ("shared-lines", po::value<std::string>()->default_value("1"),
         "shared cache lines the critical section increments, so the lock's data moves "
         "between cores like a real critical section's. 0: none, as lockhammer's default "
         "(the verification trial then checks exclusion with a word next to the lock, on its "
         "own cache line; measured trials touch nothing there). "
         "With the default 1 line every handoff moves the data's line as well as the lock's, "
         "while lockhammer's default critical section touches no data: compare with it at "
         "--shared-lines 0 (README, reading the table, has a measured example)")
        ("data", po::value<std::string>()->default_value("separate"),
         "where the first shared line's datum sits: separate (default: every line apart "
         "from the lock, so the figures show the lock's own line traffic with the data's "
         "added, and stay comparable with earlier runs) or same-line (right after the lock "
         "word, on the lock's cache line, as PostgreSQL keeps the fields a spinlock "
         "protects next to its slock_t: a handoff then moves one line)")
        ("read-fraction", po::value<std::string>()->default_value("0"),
         "share of acquires each worker takes shared, 0 to 1 (0.9: nine reads in ten), "
         "for the reader-writer locks (rw-cas, spin-rw); each worker draws its mix from its "
         "own generator seeded from --seed, recorded in the result file. Readers only load "
         "the shared lines. Locks without a shared mode take every acquire exclusive, and "
         "the table says so; with F > 0 the table splits acquires into reads and writes")
        ("delay", po::value<std::string>(),
         "spin-delay policy for every lock: none, pause (x86), yield, isb, wfe (aarch64). "
         "Default: each lock's platform default (pause on x86, isb on aarch64)")
        ("lock-page", po::value<std::string>()->default_value("normal"),
         "memory the lock and its shared lines live in: normal (the heap, the default) or "
         "huge (one hugetlb page of the kernel's default huge page size, MAP_HUGETLB, as "
         "lockhammer's -M). A freed huge page goes back to the kernel's pool, so the next run, "
         "in another process, usually gets the same physical page, and so the same cache "
         "lines and home nodes; run as root and the result records the page's physical "
         "address to check. Needs huge pages reserved (sysctl -w vm.nr_hugepages=16), and is "
         "refused before any trial when none is free");
    // clang-format on
    add_schedule_options(o);
    return o;
}

po::options_description output_options() {
    po::options_description o("Output");
    // clang-format off
    o.add_options()
        ("output,o", po::value<std::string>(),
         "write the full result as JSON (schema: docs/result-schema.md)")
        ("csv", po::value<std::string>(), "write one CSV row per lock and thread count")
        ("quiet,q", po::bool_switch(),
         "do not print the table (the files written are still named on stderr, one line each)")
        ("verbose,v", po::bool_switch(),
         "print everything: every table column (ns/acq, ticks/acq, event columns of zeros), "
         "the full legend and verdict method, each cell's own notes and each pair's whole "
         "explanation. By default a run prints one note per kind for all the cells it applies "
         "to and one line per conclusion; --output JSON and `lockprof report` keep everything "
         "either way")
        ("profile,p", po::value<std::string>(),
         "read options from an INI profile (profiles/*.ini); the command line wins");
    // clang-format on
    return o;
}

std::string usage_text(const po::options_description& visible) {
    std::string out = fmt::format(
        "lockprof {} - why is this lock slow on this CPU?\n\n"
        "Runs spinlock algorithms side by side across thread counts and reports throughput,\n"
        "per-acquire cost, atomic attempts, fairness and (with --latency) acquire latency,\n"
        "each as the median of several trials with its spread.\n\n"
        "Usage:\n"
        "  lockprof [run] [options]          run lock workloads (the default command)\n"
        "  lockprof COMMAND [options]        see `lockprof COMMAND --help`\n\n"
        "Commands:\n",
        LOCKPROF_VERSION);
    for (const auto& command : commands())
        out += fmt::format("  {:<14} {}\n", command.name, command.summary);
    out +=
        "\nExamples:\n"
        "  lockprof --lock=tas,ttas,cas --threads=1,2,4,8        compare three locks\n"
        "  lockprof --profile profiles/tas-vs-cas.ini            the 2020 PostgreSQL thread's "
        "shape\n"
        "  lockprof --lock=ticket,mcs --threads=4 --latency      FIFO locks with latency "
        "percentiles\n"
        "  lockprof --lock=tas --acquires=50000 --threads=1,2,4  fixed work per thread\n"
        "  lockprof --output run.json --csv run.csv              keep results for scripts\n"
        "  lockprof --trials auto --max-time 120s                trials until each cell's "
        "interval\n"
        "                                                        is within --equivalence\n\n";
    std::ostringstream options;
    options << visible;
    out += options.str();
    out +=
        "\nWhat a measured trial executes per acquire, and nothing else: the lock's acquire\n"
        "path; the critical section (an increment of each --shared-lines line, then the busy\n"
        "work); the release; the busy work outside (--parallel-ns); then counting the acquire\n"
        "in a register and loading one flag from the thread's own cache line, which the\n"
        "watcher sets every 5 ms to ask for the count (the watchdog's) and to stop the trial.\n"
        "The lock's attempt and spin counts (rmw/acq, spins/acq) stay in registers. Exclusion\n"
        "is proven per cell by a verification trial run first (the same loop with a check\n"
        "word loaded on entry, loaded again and stored at exit) and, with shared lines, by\n"
        "comparing line 0's count with the acquires after every trial; either failure prints\n"
        "MUTUAL EXCLUSION FAILED.\n"
        "\nExit status: 0 success, 1 failure, 2 bad usage or input, 3 a lock stopped making\n"
        "progress (watchdog), 130 interrupted by SIGINT, 143 by SIGTERM (the trials that\n"
        "finished are still printed and written; the one running is dropped; a second signal\n"
        "does not stop the write-out, a third aborts it, saying what is lost).\n";
    return out;
}

unsigned to_unsigned(std::uint64_t value, const char* option) {
    if (value > 1'000'000) throw UsageError(fmt::format("--{}: {} is too large", option, value));
    return static_cast<unsigned>(value);
}

// One section's work (`critical` or `parallel`): --SECTION-ns, or --SECTION-ins instead. Where
// a profile sets one and the command line the other, the command line's wins (as it does over
// a profile everywhere); both in the same place is a usage error.
void work_amount(const po::variables_map& vm, const std::set<std::string>& from_command_line,
                 const std::string& section, std::uint64_t& ns,
                 std::optional<std::uint64_t>& instructions) {
    const std::string ns_key = section + "-ns", ins_key = section + "-ins";
    bool use_ins = vm.count(ins_key) > 0;
    if (use_ins && !vm[ns_key].defaulted()) {
        const bool ns_here = from_command_line.count(ns_key) > 0;
        const bool ins_here = from_command_line.count(ins_key) > 0;
        if (ns_here == ins_here)
            throw UsageError(
                fmt::format("--{}: not with --{} (the work is counted in instructions or timed in "
                            "nanoseconds, not both); drop one",
                            ins_key, ns_key));
        use_ins = ins_here;
    }
    ns = use_ins ? 0 : parse_count(vm[ns_key].as<std::string>(), ns_key);
    if (use_ins) instructions = parse_count(vm[ins_key].as<std::string>(), ins_key);
}

// --data, --lock-page, --delay, --pin and --cpu-order: where the lock, its data and the workers
// sit (spec.threads already set).
void placement_from(const po::variables_map& vm, workload::RunSpec& spec) {
    const std::string data = vm["data"].as<std::string>();
    if (data == "same-line")
        spec.work.data = workload::DataPlacement::same_line;
    else if (data != "separate")
        throw UsageError(
            fmt::format("--data: unknown placement '{}'; choose same-line or separate", data));
    spec.work.read_fraction =
        parse_fraction(vm["read-fraction"].as<std::string>(), "read-fraction");
    const std::string lock_page = vm["lock-page"].as<std::string>();
    if (lock_page == "huge")
        spec.work.lock_page = workload::LockPage::huge;
    else if (lock_page != "normal")
        throw UsageError(fmt::format(
            "--lock-page: unknown placement '{}'; choose normal (the default) or huge", lock_page));
    if (vm.count("delay")) spec.delay = arch::parse_delay(vm["delay"].as<std::string>(), "--delay");
    const std::string pin = vm["pin"].as<std::string>();
    if (pin == "none")
        spec.pin.mode = workload::PinMode::none;
    else if (pin == "compact")
        spec.pin.mode = workload::PinMode::compact;
    else if (pin == "scatter")
        spec.pin.mode = workload::PinMode::scatter;
    else {
        spec.pin.mode = workload::PinMode::list;
        spec.pin.cpus = parse_cpu_list(pin, "pin");
    }
    if (vm.count("cpu-order")) {
        if (!vm["pin"].defaulted())
            throw UsageError(
                "--cpu-order: not with --pin (both say where each worker runs); drop one");
        spec.pin.mode = workload::PinMode::list;
        spec.pin.cpu_order_file = vm["cpu-order"].as<std::string>();
        spec.pin.cpus = workload::read_cpu_order(
            spec.pin.cpu_order_file, *std::max_element(spec.threads.begin(), spec.threads.end()));
    }
}

// --trials (a count, or auto with --max-time) and --processes.
void trials_from(const po::variables_map& vm, workload::RunSpec& spec) {
    const std::string trials = vm["trials"].as<std::string>();
    if (trials == "auto") {
        if (!vm.count("max-time"))
            throw UsageError(
                "--trials auto: needs --max-time, the budget for the whole sweep, or a cell that "
                "never settles would run forever; add e.g. --max-time 30s");
        spec.trials = static_cast<unsigned>(analysis::kMinTrials);
        spec.max_time_ns = parse_duration_ns(vm["max-time"].as<std::string>(), "max-time");
        if (*spec.max_time_ns == 0)
            throw UsageError(
                "--max-time: must be longer than 0, or no trial beyond the first 3 "
                "could run; try --max-time 30s");
    } else {
        if (vm.count("max-time"))
            throw UsageError(fmt::format(
                "--max-time: only with --trials auto (it is the budget of the adaptive trials, "
                "and --trials {} runs exactly {}); add --trials auto or drop --max-time",
                trials, trials));
        try {
            spec.trials = to_unsigned(parse_count(trials, "trials"), "trials");
        } catch (const UsageError& e) {
            throw UsageError(
                fmt::format("{}; --trials takes a count (5) or auto (with --max-time)", e.what()));
        }
    }
    spec.processes =
        to_unsigned(parse_count(vm["processes"].as<std::string>(), "processes"), "processes");
    if (spec.processes == 0)
        throw UsageError("--processes: must be at least 1 (1: the trials run in this process)");
    if (spec.processes > 1 && spec.max_time_ns)
        throw UsageError(
            "--processes: not with --trials auto (the budget and the stopping rule are one "
            "process's); give a count, --trials 5 --processes 3, or drop --processes");
}

workload::RunSpec spec_from(const po::variables_map& vm,
                            const std::set<std::string>& from_command_line) {
    workload::RunSpec spec;
    spec.locks = split_list(vm["lock"].as<std::string>(), "lock");
    spec.threads = parse_thread_list(vm["threads"].as<std::string>(), "threads");
    if (vm.count("acquires")) {
        spec.acquires_per_thread = parse_count(vm["acquires"].as<std::string>(), "acquires");
        if (*spec.acquires_per_thread == 0) throw UsageError("--acquires: must be at least 1");
    } else {
        spec.duration_ns = parse_duration_ns(vm["duration"].as<std::string>(), "duration");
        if (*spec.duration_ns == 0)
            throw UsageError("--duration: must be longer than 0; try --duration=1s");
    }
    work_amount(vm, from_command_line, "critical", spec.work.critical_ns,
                spec.work.critical_instructions);
    work_amount(vm, from_command_line, "parallel", spec.work.parallel_ns,
                spec.work.parallel_instructions);
    workload::check_instruction_work(spec.work);
    spec.work.shared_lines = to_unsigned(
        parse_count(vm["shared-lines"].as<std::string>(), "shared-lines"), "shared-lines");
    placement_from(vm, spec);
    const std::string sched = vm["sched"].as<std::string>();
    if (sched == "fifo")
        spec.sched = workload::SchedPolicy::fifo;
    else if (sched != "other")
        throw UsageError(
            fmt::format("--sched: unknown policy '{}'; choose other (the default) or fifo", sched));
    spec.force = vm["force"].as<bool>();
    if (spec.force && spec.sched != workload::SchedPolicy::fifo)
        throw UsageError("--force: only with --sched fifo (it allows more threads than CPUs)");
    spec.warmup_ns = parse_duration_ns(vm["warmup"].as<std::string>(), "warmup");
    trials_from(vm, spec);
    spec.seed = parse_count(vm["seed"].as<std::string>(), "seed");
    spec.latency = vm["latency"].as<bool>();
    spec.watchdog_ns = parse_duration_ns(vm["watchdog"].as<std::string>(), "watchdog");
    if (spec.watchdog_ns < 100'000'000)
        throw UsageError("--watchdog: at least 100ms, or every slow handoff looks like a stall");
    return spec;
}

analysis::Detail output_detail(const po::variables_map& vm) {
    return vm.count("verbose") && vm["verbose"].as<bool>() ? analysis::Detail::full
                                                           : analysis::Detail::brief;
}

void write_outputs(const po::variables_map& vm, const workload::RunResult& run,
                   const std::vector<analysis::CellSummary>& summaries,
                   const std::vector<std::unique_ptr<RunExtension>>& extensions) {
    if (vm.count(kChildResultOption)) {  // one of --processes N: the result for the parent only
        write_output(vm[kChildResultOption].as<std::string>(),
                     report::json_text(report::to_json(run, summaries, report::RawSamples::omit)));
        return;
    }
    if (!vm["quiet"].as<bool>()) {
        std::cout << report::render_table(run, summaries, output_detail(vm));
        std::cout.flush();
    }
    for (const auto& extension : extensions) extension->write_outputs(run, summaries, std::cout);
    std::cout.flush();
    if (vm.count("output"))
        write_output(
            vm["output"].as<std::string>(),
            report::json_text(report::to_json(run, summaries, report::RawSamples::omit), 2));
    if (vm.count("csv"))
        write_output(vm["csv"].as<std::string>(), report::render_csv(run, summaries));
}

// "lockprof: wrote run.json", one line per file the run wrote, its own outputs and its
// extensions' (plots, HTML report, flamegraph, folded, pprof, samples), in the order written,
// once, after all of them: the output registry records every file write_output() puts in place
// (common/output_registry.hpp). On stderr, not stdout: stdout carries the table and what the
// extensions print, which `lockprof ... > table.txt` or a pipe should read unchanged, and stderr
// is where lockprof says what it did (warnings, interruptions). --quiet keeps its meaning, no
// table; the files are still named. Standard output ("-") is not a file and is not named; nor
// are --processes' children's result files, which are their parent's business.
void name_files_written() {
    for (const auto& file : outputs::written_files())
        fmt::print(stderr, "lockprof: wrote {}\n", file);
    std::fflush(stderr);
}

// write_outputs(), then the files written named, even when a later output failed (its error
// follows them).
void write_and_name_outputs(const po::variables_map& vm, const workload::RunResult& run,
                            const std::vector<analysis::CellSummary>& summaries,
                            const std::vector<std::unique_ptr<RunExtension>>& extensions) {
    const bool child = vm.count(kChildResultOption) > 0;
    try {
        write_outputs(vm, run, summaries, extensions);
    } catch (...) {
        if (!child) name_files_written();
        throw;
    }
    if (!child) name_files_written();
}

// The run's options: the workload's and the outputs', then each extension's, then general.
struct RunOptions {
    po::options_description visible;       // what --help shows
    po::options_description profile_keys;  // what a profile may set
    po::options_description hidden;        // --child-result
};

RunOptions declare_options(const std::vector<std::unique_ptr<RunExtension>>& extensions) {
    po::options_description general("General");
    general.add_options()("help,h", "show this help")("version", "show version and build");
    RunOptions o;
    // --processes' children: where each writes its result.
    o.hidden.add_options()(kChildResultOption, po::value<std::string>());
    const auto workload = workload_options();
    const auto output = output_options();
    o.visible.add(workload).add(output);
    o.profile_keys.add(workload).add(output);
    for (const auto& extension : extensions) {
        const auto options = extension->options();
        o.visible.add(options);
        o.profile_keys.add(options);
    }
    o.visible.add(general);
    return o;
}

void print_version() {
    fmt::print("lockprof {} ({})\nbuilt with {} ({}, {})\nflags: {}\n", LOCKPROF_VERSION,
               git_revision(), LOCKPROF_COMPILER, LOCKPROF_BUILD_TYPE,
#ifdef NDEBUG
               "assertions off",
#else
               "assertions ON",
#endif
               LOCKPROF_COMPILER_FLAGS);
}

// The parsed options, and which of them the command line gave (not a profile, not a default).
struct ParsedRun {
    po::variables_map vm;
    std::set<std::string> from_command_line;
};

// The command line, then the --profile it names (the command line's values stay: they came
// first), notified and checked. nullopt after --help or --version.
std::optional<ParsedRun> parse_run(const std::vector<std::string>& args,
                                   const RunOptions& options) {
    ParsedRun parsed;
    po::variables_map& vm = parsed.vm;
    vm = parse_arguments(args, options.visible, "", options.hidden, {}, Notify::later);
    if (vm.count("help")) {
        std::cout << usage_text(options.visible);
        return std::nullopt;
    }
    if (vm.count("version")) {
        print_version();
        return std::nullopt;
    }
    for (const auto& [key, value] : vm)
        if (!value.defaulted()) parsed.from_command_line.insert(key);
    if (vm.count("profile"))
        load_profile(vm["profile"].as<std::string>(), options.profile_keys, vm);
    try {
        po::notify(vm);
    } catch (const po::error& e) {
        throw UsageError(boost_message(e));
    }
    return parsed;
}

// --sched fifo: refused before any trial where the kernel does not allow it; where the machine
// is in use, a warning on stderr (not from --processes' children: their parent warned) and
// among the run's notes.
void add_fifo_warnings(const workload::Plan& plan, bool child, workload::RunResult& run) {
    workload::check_fifo_allowed();
    const unsigned threads = *std::max_element(plan.spec.threads.begin(), plan.spec.threads.end());
    const auto load = workload::read_machine_load(static_cast<unsigned>(plan.cpus.size()));
    for (const auto& warning : workload::fifo_warnings(load, threads)) {
        if (!child) fmt::print(stderr, "lockprof: warning: {}\n", warning);
        run.notes.push_back(warning);
    }
}

// "[3/12, about 1m 20s left] tas with 2 threads, trial 1/3" on a terminal's stderr, one line
// rewritten in place ("[3, up to 40s left]" with --trials auto, whose count is not known ahead;
// the time left only for a sweep of more than a few seconds: cli/sweep_progress.hpp); nothing
// when stderr is not a terminal, so pipes, logs and JSON never see it.
workload::SweepHooks progress_hooks(const workload::Plan& plan, bool show) {
    workload::SweepHooks hooks;
    if (!show) return hooks;
    auto progress = std::make_shared<SweepProgress>(sweep_shape(plan), SweepProgress::Clock::now());
    hooks.progress = [progress](const std::string& what) {
        std::string line = progress->line(what, SweepProgress::Clock::now());
        // A line wider than the terminal would wrap, and "\r" rewrites only its last row.
        winsize size{};
        if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 1 &&
            line.size() >= size.ws_col)
            line.resize(size.ws_col - 1u);
        fmt::print(stderr, "\r\033[K{}", line);
        std::fflush(stderr);
    };
    return hooks;
}

std::size_t finished_trials(const workload::RunResult& run) {
    std::size_t n = 0;
    for (const auto& c : run.cells) n += c.trials.size();
    return n;
}

// The last line on stderr after SIGINT or SIGTERM, and the exit status: 128 + the signal.
int interrupted_exit(const workload::RunResult& run) {
    const int signals = interrupts::signals_received();
    const std::string later =
        signals > 1
            ? fmt::format(" ({} signals: the later ones did not stop the write-out)", signals)
            : "";
    if (run.interrupted)
        fmt::print(stderr, "lockprof: interrupted by {}; wrote the {} finished trial(s){}\n",
                   signal_name(interrupts::stop_signal().load()), finished_trials(run), later);
    else
        fmt::print(stderr,
                   "lockprof: {} after the last trial: the run is complete and every output was "
                   "written{}\n",
                   signal_name(interrupts::stop_signal().load()), later);
    return interrupts::exit_code();
}

}  // namespace

int run_command(const std::vector<std::string>& args, const std::vector<std::string>& argv) {
    auto extensions = make_run_extensions();
    const auto parsed = parse_run(args, declare_options(extensions));
    if (!parsed) return 0;
    const po::variables_map& vm = parsed->vm;
    // SIGINT/SIGTERM (held by cli::main since the start, interrupts.hpp): stop the sweep,
    // then write what finished.

    // Plan: the spec, the outputs checked before anything runs, what each extension adds.
    workload::RunSpec spec = spec_from(vm, parsed->from_command_line);
    const bool child = vm.count(kChildResultOption) > 0;
    if (child) spec.processes = 1;  // a child runs its share here, whatever the profile says
    analysis::VerdictOptions verdict;
    verdict.equivalence = analysis::parse_equivalence(vm["equivalence"].as<std::string>());
    for (const char* option : {"output", "csv"})
        if (vm.count(option)) check_output(vm[option].as<std::string>(), option);
    workload::RunResult run;
    run.provenance = workload::collect_provenance(argv);
    for (const auto& extension : extensions) extension->configure(vm, spec, run);
    if (spec.processes > 1 && run.sampling)
        throw UsageError(
            "--processes: not with --sample or its outputs (samples are addresses in one "
            "process); drop --processes, or sample a one-process run");
    workload::RunControl control;
    control.interrupted = &interrupts::stop_requested();
    for (const auto& extension : extensions)
        if (auto* instrumentation = extension->instrumentation())
            control.instruments.push_back(instrumentation);
    // The observer effect (docs/sampling.md, "The observer effect"): measured where the
    // instruments go beyond the default counters, which count without interrupting the loop.
    spec.perturbation_check = !vm["no-perturbation-check"].as<bool>() &&
                              !control.instruments.empty() &&
                              (run.sampling.has_value() || vm.count("event") > 0);
    const workload::Plan plan = workload::make_plan(spec, workload::calibrate());
    if (spec.sched == workload::SchedPolicy::fifo) add_fifo_warnings(plan, child, run);

    // Run.
    const bool show_progress = isatty(STDERR_FILENO) != 0 && spec.processes == 1;
    try {
        workload::SweepHooks hooks = progress_hooks(plan, show_progress);
        // --trials auto's stopping rule: the engine's interval on the cell's own acquires/s,
        // Bonferroni over every cell, inside the --equivalence band (docs/reports.md).
        hooks.settled = [&verdict, cells = plan.cells.size()](const workload::CellResult& cell) {
            return analysis::cell_precision(cell, verdict, cells).narrow;
        };
        if (spec.processes > 1) {
            run.spec = spec;
            run_in_processes(args, spec.processes, run);
        } else {
            run = workload::run_sweep(plan, control, hooks, &run);
        }
    } catch (const StallError& e) {
        if (show_progress) fmt::print(stderr, "\r\033[K");
        run.interrupted = true;
        run.interrupted_by = "watchdog";
        run.notes.push_back(std::string("STALLED: ") + e.what());
        interrupts::writing_outputs();
        for (const auto& extension : extensions) extension->finish(run);
        write_and_name_outputs(vm, run, analysis::summarize(run, verdict), extensions);
        std::fflush(stdout);
        fmt::print(stderr, "lockprof: {}\n", e.what());
        std::fflush(stderr);
        std::_Exit(e.exit_code());  // stalled threads cannot be joined
    }
    if (show_progress) fmt::print(stderr, "\r\033[K");
    interrupts::writing_outputs();
    if (run.interrupted) run.interrupted_by = signal_name(interrupts::stop_signal().load());

    // Results, analysis, outputs.
    for (const auto& extension : extensions) extension->finish(run);
    write_and_name_outputs(vm, run, analysis::summarize(run, verdict), extensions);
    if (interrupts::exit_code() != 0) return interrupted_exit(run);
    return 0;
}

}  // namespace lockprof::cli
