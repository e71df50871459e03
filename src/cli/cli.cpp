#include "cli/cli.hpp"

#include <cstdio>
#include <exception>
#include <optional>

#include <fmt/format.h>

#include "cli/interrupts.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/output_file.hpp"
#include "lockprof/common/parse.hpp"

namespace lockprof::cli {

const std::vector<Command>& commands() {
    static const std::vector<Command> all = {
        {"run", "run lock workloads across a thread sweep (the default command)", run_command,
         true},
        {"list-locks", "list the lock algorithms, their flavours and delay policies",
         list_locks_command},
        {"annotate", "re-render annotated disassembly and the explanation from saved samples",
         annotate_command},
        {"convert", "write saved samples as pprof, folded stacks or a flamegraph", convert_command},
        {"events", "list event aliases and what they count on this CPU", events_command},
        {"doctor", "explain why counters are (un)available here and what to do", doctor_command},
        {"flamegraph", "render folded stacks as an interactive SVG flamegraph (or --diff two)",
         flamegraph_command},
        {"fold", "fold `perf script` output into folded stacks", fold_command},
        {"report", "render a result file as a self-contained HTML report with plots",
         report_command},
        {"record", "count and sample real programs: -- CMD, --pid PID or --match NAME",
         record_command, true},
        {"compare", "compare result files cell by cell: ratio, interval, verdict, provenance",
         compare_command},
    };
    return all;
}

namespace {

// `lockprof SUBCOMMAND ...`; anything else (options or nothing) is a run, the first command.
struct Invocation {
    const Command& command;
    std::vector<std::string> args;  // after the subcommand's name
};

Invocation invocation_of(const std::vector<std::string>& args) {
    if (args.empty() || args[0].empty() || args[0][0] == '-') return {commands().front(), args};
    for (const auto& command : commands())
        if (args[0] == command.name) return {command, {args.begin() + 1, args.end()}};
    std::vector<std::string> names;
    for (const auto& command : commands()) names.emplace_back(command.name);
    const auto suggestion = did_you_mean(args[0], names);
    throw UsageError(
        fmt::format("unknown command '{}'{}; see `lockprof --help` for the commands", args[0],
                    suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", suggestion)));
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> argv_copy(argv, argv + argc);
    std::vector<std::string> args(argv_copy.begin() + (argc > 0 ? 1 : 0), argv_copy.end());
    std::optional<interrupts::CommandPolicy> signals;
    try {
        const Invocation invocation = invocation_of(args);
        // The signal policy holds from before the options are parsed: once lockprof catches
        // SIGINT, a run or record it ends still writes every output.
        signals.emplace(invocation.command.measures);
        const int status = signals->exit_code(invocation.command.run(invocation.args, argv_copy));
        // What the command printed must have reached stdout: a full disk is not exit 0.
        finish_standard_output();
        return status;
    } catch (const Error& e) {
        std::fflush(stdout);
        fmt::print(stderr, "lockprof: {}\n", e.what());
        return e.exit_code();
    } catch (const std::exception& e) {
        std::fflush(stdout);
        fmt::print(stderr, "lockprof: internal error: {}\n", e.what());
        return 1;
    }
}

}  // namespace lockprof::cli
