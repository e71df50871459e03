// `lockprof list-locks`: every runnable lock with its flavour, delay policies and description;
// with --disasm, the machine code of each lock's acquire path per ISA flavour, with the lock's own
// out-of-line functions it reaches (found here, rendered by report/lock_list).
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/cli.hpp"
#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/report/lock_list.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/workload/runnable_locks.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

using report::AcquireCode;

// Lock code is in namespace lockprof::locks (every flavour's inline namespace inside it).
constexpr std::string_view kLockCode = "_ZN8lockprof5locks";

// The lock functions `code` reaches by a call or a jump out of [start, end).
std::vector<std::uint64_t> lock_calls(const std::vector<symbols::Instruction>& code,
                                      std::uint64_t start, std::uint64_t end) {
    std::vector<std::uint64_t> targets;
    for (const auto& insn : code)
        if (insn.branch_target && (*insn.branch_target < start || *insn.branch_target >= end) &&
            insn.reference.starts_with(kLockCode))
            targets.push_back(*insn.branch_target);
    return targets;
}

// The out-of-line acquire path (workload::acquire_probe, see workload/loop.hpp) of `lock` with
// `delay`: the kernel keeps its address, the resolver names its symbol, module and extent. Then
// the lock functions it reaches, and those they reach, up to kMaxCallees.
AcquireCode find_acquire_code(
    const workload::RunnableLock& lock, arch::Delay delay, const symbols::SymbolResolver& resolver,
    const symbols::Disassembler& disassembler,
    std::map<std::string, std::map<std::uint64_t, symbols::FunctionCode>>& functions_of) {
    constexpr std::size_t kMaxCallees = 8;
    const auto address = reinterpret_cast<std::uintptr_t>(lock.kernel(delay, false).acquire_probe);
    const symbols::Location at = resolver.resolve(address);
    if (!at.has_symbol() || at.symbol_size == 0)
        throw Error(
            fmt::format("{}: no symbol for its acquire path in '{}'; was the binary stripped?",
                        lock.name, at.module.empty() ? "this process" : at.module));
    const std::uint64_t start = at.file_address(at.symbol_start);
    AcquireCode code{
        at.symbol, disassembler.disassemble(at.module, start, start + at.symbol_size), {}};
    std::vector<std::uint64_t> pending =
        lock_calls(code.instructions, start, start + at.symbol_size);
    std::set<std::uint64_t> seen{start};
    for (std::size_t next = 0; next < pending.size() && code.callees.size() < kMaxCallees; ++next) {
        if (!seen.insert(pending[next]).second) continue;
        auto& functions = functions_of[at.module];
        if (functions.empty())
            for (auto& f : symbols::function_symbols(at.module))
                functions.emplace(f.address, std::move(f));
        const auto found = functions.find(pending[next]);
        if (found == functions.end() || found->second.size == 0) continue;
        symbols::FunctionCode callee = found->second;
        callee.instructions =
            disassembler.disassemble(at.module, callee.address, callee.address + callee.size);
        for (const auto target :
             lock_calls(callee.instructions, callee.address, callee.address + callee.size))
            pending.push_back(target);
        code.callees.push_back(std::move(callee));
    }
    return code;
}

void print_disassembly(const std::vector<const workload::RunnableLock*>& locks,
                       std::optional<arch::Delay> delay, const std::string& objdump) {
    const auto resolver = symbols::SymbolResolver::for_process();
    const symbols::Disassembler disassembler(objdump);
    std::map<std::string, std::map<std::uint64_t, symbols::FunctionCode>> functions_of;
    for (const auto* lock : locks) {
        const arch::Delay d = delay.value_or(lock->default_delay());
        if (!lock->accepts(d)) {
            std::cout << report::render_delay_not_accepted(*lock, d);
            continue;
        }
        const AcquireCode code = find_acquire_code(*lock, d, resolver, disassembler, functions_of);
        std::cout << report::render_acquire_code(*lock, d, code);
    }
}

}  // namespace

int list_locks_command(const std::vector<std::string>& args, const std::vector<std::string>&) {
    po::options_description options("list-locks options");
    // clang-format off
    options.add_options()
        ("help,h", "show this help")
        ("disasm", po::bool_switch(),
         "show the machine code of each lock's acquire path, and of the lock's own functions "
         "it calls (a slow path kept out of line, as qspinlock's), atomics starred (all "
         "flavours, or LOCK: a name such as tas@llsc, or an algorithm such as tas for every "
         "flavour of it)")
        ("delay", po::value<std::string>(),
         "with --disasm: the delay policy whose acquire path to show (default: the lock's)")
        ("objdump", po::value<std::string>(),
         "with --disasm: objdump to run (default: aarch64-linux-gnu-objdump on aarch64 when "
         "installed, else objdump)");
    // clang-format on
    po::options_description hidden;
    hidden.add_options()("lock", po::value<std::string>());
    po::positional_options_description positional;
    positional.add("lock", 1);
    const auto vm = parse_arguments(args, options, "list-locks", hidden, positional);
    if (vm.count("help")) {
        std::cout << "Usage: lockprof list-locks [--disasm [LOCK]]\n\n"
                     "Lists every lock lockprof can run: its name (with @flavour for ISA "
                     "variants on aarch64),\nthe spin-delay policies it accepts on this CPU "
                     "(first: the default) and what it does.\n\n"
                  << options;
        return 0;
    }
    if (vm.count("lock") && !vm["disasm"].as<bool>())
        throw UsageError(
            "list-locks: a LOCK argument needs --disasm; see `lockprof list-locks --help`");
    if (vm["disasm"].as<bool>()) {
        std::vector<const workload::RunnableLock*> selected;
        const std::string wanted = vm.count("lock") ? vm["lock"].as<std::string>() : "";
        // "pthread-spin@lse": the same usage error as a run gets.
        if (wanted.find('@') != std::string::npos) static_cast<void>(workload::find_lock(wanted));
        for (const auto& lock : workload::lock_catalog())
            if (wanted.empty() || lock.name == wanted || lock.algorithm == wanted)
                selected.push_back(&lock);
        if (selected.empty())
            throw UsageError(fmt::format(
                "list-locks: unknown lock '{}'; `lockprof list-locks` lists them", wanted));
        std::optional<arch::Delay> delay;
        if (vm.count("delay"))
            delay = arch::parse_delay(vm["delay"].as<std::string>(), "list-locks --delay");
        std::string objdump = vm.count("objdump") ? vm["objdump"].as<std::string>() : "";
        // Under qemu-user, plain `objdump` is the host's and cannot read aarch64 code; on an
        // arm64 Debian host the triplet-named one is the native objdump anyway.
        if (objdump.empty() && arch::kArchName == "aarch64" &&
            program_exists("aarch64-linux-gnu-objdump"))
            objdump = "aarch64-linux-gnu-objdump";
        print_disassembly(selected, delay, objdump);
        return 0;
    }
    std::cout << report::render_lock_list(workload::lock_catalog());
    return 0;
}

}  // namespace lockprof::cli
