// `lockprof list-locks`: every runnable lock with its flavour, delay policies and description.
#include <iostream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/report/text_table.hpp"
#include "lockprof/workload/catalog.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

int list_locks_command(const std::vector<std::string>& args, const std::vector<std::string>&) {
    po::options_description options("list-locks options");
    options.add_options()("help,h", "show this help");
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(options).run(), vm);
    } catch (const po::error& e) {
        throw UsageError(fmt::format("list-locks: {}; see `lockprof list-locks --help`", e.what()));
    }
    if (vm.count("help")) {
        std::cout << "Usage: lockprof list-locks\n\n"
                     "Lists every lock lockprof can run: its name (with @flavour for ISA "
                     "variants on aarch64),\nthe spin-delay policies it accepts on this CPU "
                     "(first: the default) and what it does.\n\n"
                  << options;
        return 0;
    }
    report::TextTable table;
    using A = report::TextTable::Align;
    table.set_header({"lock", "delays (default first)", "description"}, {A::left, A::left, A::left});
    for (const auto& lock : workload::lock_catalog()) {
        std::string delays(arch::delay_name(lock.default_delay()));
        for (auto d : arch::kAllDelays)
            if (lock.accepts(d) && d != lock.default_delay()) delays += fmt::format(", {}", arch::delay_name(d));
        std::string description = lock.description;
        if (lock.needs_lse && !arch::cpu_has_lse()) description += " [needs LSE: not on this CPU]";
        table.add_row({lock.name, delays, description});
    }
    std::cout << table.render();
    std::cout << fmt::format(
        "\nDelay policies: none (tight loop), pause (x86 PAUSE), yield (aarch64 YIELD), isb "
        "(aarch64 ISB),\nwfe (aarch64: sleep on the lock word's exclusive monitor until it "
        "is written). Choose with --delay.\n");
    return 0;
}

}  // namespace lockprof::cli
