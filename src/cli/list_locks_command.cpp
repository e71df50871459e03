// `lockprof list-locks`: every runnable lock with its flavour, delay policies and description;
// with --disasm, the machine code of each lock's acquire path per ISA flavour, with the lock's own
// out-of-line functions it reaches.
#include <algorithm>
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
#include "lockprof/report/text_table.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/workload/runnable_locks.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

struct AcquireCode {
    std::string symbol;  // demangled
    std::vector<symbols::Instruction> instructions;
    // The lock's own functions the acquire path calls or jumps to, kept out of line by the
    // compiler or the lock (qspinlock's slow path, event-mutex's spin-then-wait): where the
    // contended acquire's atomics are. Each once, in the order first reached.
    std::vector<symbols::FunctionCode> callees;
};

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

// One function's instructions, atomics starred, branches inside it as offsets.
void print_instructions(const std::vector<symbols::Instruction>& instructions) {
    if (instructions.empty()) return;
    for (const auto& insn : instructions) {
        std::string text = insn.text();
        // Branches inside the function would repeat its long name; the offset says enough.
        const auto plus = insn.reference.rfind('+');
        const bool inside = insn.branch_target &&
                            *insn.branch_target >= instructions.front().address &&
                            *insn.branch_target <= instructions.back().address;
        if (inside && plus != std::string::npos)
            text += fmt::format(" <{}>", insn.reference.substr(plus));
        else if (!insn.reference.empty())
            text += fmt::format(" <{}>", insn.reference);
        std::cout << fmt::format("  {} {:>8x}:  {}\n", insn.is_atomic() ? "*" : " ", insn.address,
                                 text);
    }
}

void add_atomics(const std::vector<symbols::Instruction>& instructions, std::string& atomics) {
    for (const auto& insn : instructions) {
        if (!insn.is_atomic()) continue;
        const std::string shown = insn.mnemonic == "bl" ? "bl " + insn.reference : insn.mnemonic;
        if ((", " + atomics + ", ").find(", " + shown + ", ") == std::string::npos)
            atomics += (atomics.empty() ? "" : ", ") + shown;
    }
}

void print_disassembly(const std::vector<const workload::RunnableLock*>& locks,
                       std::optional<arch::Delay> delay, const std::string& objdump) {
    const auto resolver = symbols::SymbolResolver::for_process();
    const symbols::Disassembler disassembler(objdump);
    std::map<std::string, std::map<std::uint64_t, symbols::FunctionCode>> functions_of;
    for (const auto* lock : locks) {
        const arch::Delay d = delay.value_or(lock->default_delay());
        if (!lock->accepts(d)) {
            std::cout << fmt::format("{} (delay {}): not accepted by this lock\n\n", lock->name,
                                     arch::delay_name(d));
            continue;
        }
        const AcquireCode code = find_acquire_code(*lock, d, resolver, disassembler, functions_of);
        std::string atomics;
        add_atomics(code.instructions, atomics);
        std::size_t called = 0;
        for (const auto& callee : code.callees) {
            add_atomics(callee.instructions, atomics);
            called += callee.instructions.size();
        }
        const std::string calls =
            code.callees.empty()
                ? ""
                : fmt::format(" and {} in the {} lock function{} it calls", called,
                              code.callees.size(), code.callees.size() == 1 ? "" : "s");
        std::cout << fmt::format("{} (delay {}): acquire path, {} instructions{}; atomics: {}\n",
                                 lock->name, arch::delay_name(d), code.instructions.size(), calls,
                                 atomics.empty() ? "none" : atomics);
        std::cout << fmt::format("  {}\n", code.symbol);
        print_instructions(code.instructions);
        for (const auto& callee : code.callees) {
            std::cout << fmt::format("  called: {}\n", callee.name);
            print_instructions(callee.instructions);
        }
        std::cout << "\n";
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
    report::TextTable table;
    using A = report::TextTable::Align;
    table.set_header({"lock", "delays (default first)", "description"},
                     {A::left, A::left, A::left});
    const bool flavours =
        std::any_of(workload::lock_catalog().begin(), workload::lock_catalog().end(),
                    [](const auto& lock) { return !lock.flavour.empty(); });
    for (const auto& lock : workload::lock_catalog()) {
        std::string delays(arch::delay_name(lock.default_delay()));
        for (auto d : arch::kAllDelays)
            if (lock.accepts(d) && d != lock.default_delay())
                delays += fmt::format(", {}", arch::delay_name(d));
        std::string description = lock.description;
        if (lock.needs_lse && !arch::cpu_has_lse()) description += " [needs LSE: not on this CPU]";
        if (flavours && lock.flavour_independent) description += " [the same in every flavour]";
        if (lock.shared) description += " [shared mode: --read-fraction]";
        table.add_row({lock.name, delays, description});
    }
    std::cout << table.render();
    if (arch::kArchName == "x86_64")
        std::cout << "\npg13-slock, pg15-slock, pg18-slock and pg-slock differ only on arm64: on "
                     "x86_64 every PostgreSQL\nrelease builds the same spinlock "
                     "(docs/pg-slock.md).\n";
    std::cout << "\nrw-cas and spin-rw have a shared mode: --read-fraction F takes that share of "
                 "each worker's\nacquires shared (lock_shared); every other lock takes all "
                 "acquires exclusive. lockref and\nrefcount are not locks: one \"acquire\" is a "
                 "get (take a reference: lockref's CAS of its\nlock+count word, refcount's atomic "
                 "increment) and its \"release\" the put; neither excludes.\n";
    std::cout << fmt::format(
        "\nDelay policies: none (tight loop), pause (x86 PAUSE), yield (aarch64 YIELD), isb "
        "(aarch64 ISB),\nwfe (aarch64: sleep on the lock word's exclusive monitor until it "
        "is written). Choose with --delay.\n");
    return 0;
}

}  // namespace lockprof::cli
