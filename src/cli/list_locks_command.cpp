// `lockprof list-locks`: every runnable lock with its flavour, delay policies and description;
// with --disasm, the machine code of each lock's acquire path per ISA flavour.
#include <link.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/cli.hpp"
#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/report/text_table.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/workload/catalog.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

// The load bias of the object holding `code` in this process (0 for a non-PIE executable), so a
// function pointer can be turned into the file address objdump and the symbol table use.
std::optional<std::uint64_t> load_bias_of(const void* code) {
    struct Search {
        std::uintptr_t address;
        std::optional<std::uint64_t> bias;
        bool main_program = false;
    } search{reinterpret_cast<std::uintptr_t>(code), std::nullopt};
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
            auto& s = *static_cast<Search*>(data);
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const auto& ph = info->dlpi_phdr[i];
                const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
                if (ph.p_type == PT_LOAD && s.address >= start && s.address < start + ph.p_memsz) {
                    s.bias = info->dlpi_addr;
                    s.main_program = info->dlpi_name == nullptr || info->dlpi_name[0] == '\0';
                    return 1;
                }
            }
            return 0;
        },
        &search);
    // The kernels are linked into the executable; anything else means a build we do not know.
    if (!search.main_program) return std::nullopt;
    return search.bias;
}

struct AcquireCode {
    std::string symbol;  // demangled
    std::vector<symbols::Instruction> instructions;
};

// The out-of-line acquire path (workload::acquire_probe, see workload/loop.hpp) of `lock` with
// `delay`, found through its measured_loop's symbol: the probe is the same lock type in the
// same flavour namespace, so no lock-name-to-type table is needed.
AcquireCode find_acquire_code(const workload::RunnableLock& lock, arch::Delay delay,
                              const std::filesystem::path& binary,
                              const std::vector<symbols::FunctionCode>& functions,
                              const symbols::Disassembler& disassembler) {
    const auto loop = lock.kernel(delay, false).run_loop;
    const void* code = reinterpret_cast<const void*>(loop);
    const auto bias = load_bias_of(code);
    if (!bias)
        throw Error(fmt::format("{}: its kernels are not in the main executable", lock.name));
    const std::uint64_t file_address = reinterpret_cast<std::uintptr_t>(code) - *bias;
    const auto loop_fn = std::find_if(functions.begin(), functions.end(), [&](const auto& f) {
        return file_address >= f.address && file_address < f.address + f.size;
    });
    constexpr std::string_view kLoop = "measured_loop<", kLoopEnd = ", false>(";
    const std::size_t at =
        loop_fn == functions.end() ? std::string::npos : loop_fn->name.find(kLoop);
    const std::size_t end = at == std::string::npos ? at : loop_fn->name.rfind(kLoopEnd);
    if (end == std::string::npos || end < at)
        throw Error(
            fmt::format("{}: no symbol for its measured loop in '{}'; was the binary stripped?",
                        lock.name, binary.string()));
    const std::string& loop_name = loop_fn->name;
    const std::string lock_type = loop_name.substr(at + kLoop.size(), end - at - kLoop.size());
    const std::string probe = loop_name.substr(0, at) + "acquire_probe<" + lock_type;
    for (const auto& f : functions) {
        if (f.name.compare(0, probe.size(), probe) != 0) continue;
        const std::string_view rest = std::string_view(f.name).substr(probe.size());
        if (rest.rfind(">(", 0) != 0 && rest.rfind(" >(", 0) != 0) continue;
        return {f.name, disassembler.disassemble(binary, f.address, f.address + f.size)};
    }
    throw Error(fmt::format("{}: no acquire_probe symbol for {} in '{}'", lock.name, lock_type,
                            binary.string()));
}

void print_disassembly(const std::vector<const workload::RunnableLock*>& locks,
                       std::optional<arch::Delay> delay, const std::string& objdump) {
    // The running executable: under qemu-user /proc/self/exe reads back as the guest binary.
    const std::filesystem::path binary = std::filesystem::read_symlink("/proc/self/exe");
    const auto functions = symbols::function_symbols(binary);
    const symbols::Disassembler disassembler(objdump);
    for (const auto* lock : locks) {
        const arch::Delay d = delay.value_or(lock->default_delay());
        if (!lock->accepts(d)) {
            std::cout << fmt::format("{} (delay {}): not accepted by this lock\n\n", lock->name,
                                     arch::delay_name(d));
            continue;
        }
        const AcquireCode code = find_acquire_code(*lock, d, binary, functions, disassembler);
        std::string atomics;
        for (const auto& insn : code.instructions) {
            if (!insn.is_atomic()) continue;
            const std::string shown =
                insn.mnemonic == "bl" ? "bl " + insn.reference : insn.mnemonic;
            if (atomics.find(shown) == std::string::npos)
                atomics += (atomics.empty() ? "" : ", ") + shown;
        }
        std::cout << fmt::format("{} (delay {}): acquire path, {} instructions; atomics: {}\n",
                                 lock->name, arch::delay_name(d), code.instructions.size(),
                                 atomics.empty() ? "none" : atomics);
        std::cout << fmt::format("  {}\n", code.symbol);
        for (const auto& insn : code.instructions) {
            std::string text = insn.text();
            // Branches inside the probe would repeat its long name; the offset says enough.
            const auto plus = insn.reference.rfind('+');
            const bool inside = insn.branch_target &&
                                *insn.branch_target >= code.instructions.front().address &&
                                *insn.branch_target <= code.instructions.back().address;
            if (inside && plus != std::string::npos)
                text += fmt::format(" <{}>", insn.reference.substr(plus));
            else if (!insn.reference.empty())
                text += fmt::format(" <{}>", insn.reference);
            std::cout << fmt::format("  {} {:>8x}:  {}\n", insn.is_atomic() ? "*" : " ",
                                     insn.address, text);
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
         "show the machine code of each lock's acquire path (all flavours, or LOCK: a name "
         "such as tas@llsc, or an algorithm such as tas for every flavour of it)")
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
        table.add_row({lock.name, delays, description});
    }
    std::cout << table.render();
    if (arch::kArchName == "x86_64")
        std::cout << "\npg13-slock, pg15-slock, pg18-slock and pg-slock differ only on arm64: on "
                     "x86_64 every PostgreSQL\nrelease builds the same spinlock "
                     "(docs/pg-slock.md).\n";
    std::cout << fmt::format(
        "\nDelay policies: none (tight loop), pause (x86 PAUSE), yield (aarch64 YIELD), isb "
        "(aarch64 ISB),\nwfe (aarch64: sleep on the lock word's exclusive monitor until it "
        "is written). Choose with --delay.\n");
    return 0;
}

}  // namespace lockprof::cli
