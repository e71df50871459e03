#include "lockprof/symbols/mnemonics.hpp"

#include "lockprof/arch/cpu.hpp"

namespace lockprof::symbols {
namespace {

// Every suffix form (acquire a, release l, both al, byte b, halfword h, pair p) starts with the
// base mnemonic, so prefixes cover them: "ldaxrb", "casal", "ldaddalh", "staddl".
constexpr std::string_view kLoadExclusive[] = {"ldxr", "ldaxr", "ldxp", "ldaxp"};
constexpr std::string_view kStoreExclusive[] = {"stxr", "stlxr", "stxp", "stlxp"};
// ARMv8.1 LSE. objdump prints an ld<op> whose result goes to the zero register as st<op>.
constexpr std::string_view kLse[] = {"swp",    "cas",    "ldadd",  "ldclr",  "ldeor",  "ldset",
                                     "ldsmax", "ldsmin", "ldumax", "ldumin", "stadd",  "stclr",
                                     "steor",  "stset",  "stsmax", "stsmin", "stumax", "stumin"};
constexpr std::string_view kBarrier[] = {"dmb", "dsb", "mfence", "lfence", "sfence"};

template <std::size_t N>
bool starts_with_any(std::string_view s, const std::string_view (&prefixes)[N]) {
    for (auto p : prefixes)
        if (s.starts_with(p)) return true;
    return false;
}

bool is_delay(std::string_view m) {
    for (auto d : arch::kAllDelays)
        if (d != arch::Delay::none && arch::delay_name(d) == m) return true;
    return m.starts_with("isb");  // "isb sy" where objdump spells the option out
}

bool is_branch(std::string_view m) {
    // x86: jmp, jcc, loop*; aarch64: b, b.cond, bc.cond, cbz/cbnz, tbz/tbnz (bl is a call).
    return m[0] == 'j' || m.starts_with("loop") || m == "b" || m.starts_with("b.") ||
           m.starts_with("bc.") || m == "cbz" || m == "cbnz" || m == "tbz" || m == "tbnz";
}

}  // namespace

InstructionClass classify_mnemonic(std::string_view mnemonic) {
    // x86 prefixes come first, joined by spaces: "lock cmpxchg", "xacquire lock xchg",
    // "bnd jmp", "notrack jmp", "rep stos". A lock prefix anywhere makes the RMW atomic.
    std::string_view m = mnemonic;
    bool locked = false;
    for (std::size_t space; (space = m.find(' ')) != std::string_view::npos;) {
        locked |= m.substr(0, space) == "lock";
        m.remove_prefix(space + 1);
    }
    if (locked || m.starts_with("xchg")) return InstructionClass::locked_rmw;
    if (m.empty()) return InstructionClass::other;
    if (starts_with_any(m, kLoadExclusive)) return InstructionClass::load_exclusive;
    if (starts_with_any(m, kStoreExclusive)) return InstructionClass::store_exclusive;
    if (starts_with_any(m, kLse)) return InstructionClass::lse_atomic;
    if (is_delay(m)) return InstructionClass::delay;
    for (auto b : kBarrier)
        if (m == b) return InstructionClass::barrier;
    if (is_branch(m)) return InstructionClass::branch;
    return InstructionClass::other;
}

bool is_outline_atomic_helper(std::string_view callee) {
    return callee.starts_with("__aarch64_");
}

std::string_view class_description(InstructionClass c) {
    switch (c) {
        case InstructionClass::store_exclusive:
            return "the store-exclusive";
        case InstructionClass::load_exclusive:
            return "the load-exclusive";
        case InstructionClass::lse_atomic:
            return "the LSE atomic";
        case InstructionClass::locked_rmw:
            return "the locked read-modify-write";
        case InstructionClass::delay:
            return "the spin-delay instruction";
        case InstructionClass::barrier:
            return "the memory barrier";
        case InstructionClass::branch:
            return "the branch";
        case InstructionClass::other:
            return "an ordinary instruction";
    }
    return "";
}

}  // namespace lockprof::symbols
