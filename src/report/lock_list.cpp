#include "lockprof/report/lock_list.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lockprof/report/text_table.hpp"

namespace lockprof::report {
namespace lock_list_detail {

// One function's instructions, atomics starred, branches inside it as offsets.
std::string render_instructions(const std::vector<symbols::Instruction>& instructions) {
    std::string out;
    if (instructions.empty()) return out;
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
        out += fmt::format("  {} {:>8x}:  {}\n", insn.is_atomic() ? "*" : " ", insn.address, text);
    }
    return out;
}

void add_atomics(const std::vector<symbols::Instruction>& instructions, std::string& atomics) {
    for (const auto& insn : instructions) {
        if (!insn.is_atomic()) continue;
        const std::string shown = insn.mnemonic == "bl" ? "bl " + insn.reference : insn.mnemonic;
        if ((", " + atomics + ", ").find(", " + shown + ", ") == std::string::npos)
            atomics += (atomics.empty() ? "" : ", ") + shown;
    }
}

}  // namespace lock_list_detail

std::string render_lock_list(const std::vector<workload::RunnableLock>& locks) {
    TextTable table;
    using A = TextTable::Align;
    table.set_header({"lock", "delays (default first)", "description"},
                     {A::left, A::left, A::left});
    const bool flavours = std::any_of(locks.begin(), locks.end(),
                                      [](const auto& lock) { return !lock.flavour.empty(); });
    for (const auto& lock : locks) {
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
    std::string out = table.render();
    if (arch::kArchName == "x86_64")
        out +=
            "\npg13-slock, pg15-slock, pg18-slock and pg-slock differ only on arm64: on "
            "x86_64 every PostgreSQL\nrelease builds the same spinlock "
            "(docs/pg-slock.md).\n";
    out +=
        "\nrw-cas and spin-rw have a shared mode: --read-fraction F takes that share of "
        "each worker's\nacquires shared (lock_shared); every other lock takes all "
        "acquires exclusive. lockref and\nrefcount are not locks: one \"acquire\" is a "
        "get (take a reference: lockref's CAS of its\nlock+count word, refcount's atomic "
        "increment) and its \"release\" the put; neither excludes.\n";
    out +=
        "\nDelay policies: none (tight loop), pause (x86 PAUSE), yield (aarch64 YIELD), isb "
        "(aarch64 ISB),\nwfe (aarch64: sleep on the lock word's exclusive monitor until it "
        "is written). Choose with --delay.\n";
    return out;
}

std::string render_acquire_code(const workload::RunnableLock& lock, arch::Delay delay,
                                const AcquireCode& code) {
    using namespace lock_list_detail;
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
            : fmt::format(" and {} in the {} lock function{} it calls", called, code.callees.size(),
                          code.callees.size() == 1 ? "" : "s");
    std::string out = fmt::format("{} (delay {}): acquire path, {} instructions{}; atomics: {}\n",
                                  lock.name, arch::delay_name(delay), code.instructions.size(),
                                  calls, atomics.empty() ? "none" : atomics);
    out += fmt::format("  {}\n", code.symbol);
    out += render_instructions(code.instructions);
    for (const auto& callee : code.callees) {
        out += fmt::format("  called: {}\n", callee.name);
        out += render_instructions(callee.instructions);
    }
    return out + "\n";
}

std::string render_delay_not_accepted(const workload::RunnableLock& lock, arch::Delay delay) {
    return fmt::format("{} (delay {}): not accepted by this lock\n\n", lock.name,
                       arch::delay_name(delay));
}

}  // namespace lockprof::report
