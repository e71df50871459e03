// What an instruction does as far as lock code is concerned, from its mnemonic as
// parse_objdump() spells it (x86-64 AT&T with prefixes joined, "lock cmpxchg"; aarch64). The one
// classification behind `list-locks --disasm`'s atomics and the explanation's reading of hot
// instructions (analysis/explain).
#pragma once

#include <string_view>

namespace lockprof::symbols {

enum class InstructionClass {
    store_exclusive,  // aarch64 stxr/stlxr/stxp/stlxp (and b/h): the LL/SC store that can fail
    load_exclusive,   // aarch64 ldxr/ldaxr/ldxp/ldaxp (and b/h)
    lse_atomic,       // aarch64 LSE: swp, cas, casp, ld<op>, st<op>, in every a/l/al/b/h form
    locked_rmw,       // x86 xchg, lock-prefixed instructions
    delay,            // pause, yield, isb, wfe: the instructions of arch::Delay's policies
    barrier,          // dmb, dsb, mfence, lfence, sfence (isb is a delay: lockprof spins on it)
    branch,           // direct jumps: x86 jmp/jcc/loop, aarch64 b, b.cond, bc.cond, cbz, tbz...
    other,
};

InstructionClass classify_mnemonic(std::string_view mnemonic);

// Exclusives, LSE atomics and locked read-modify-writes: the atomic instructions of a lock.
constexpr bool is_atomic(InstructionClass c) {
    return c == InstructionClass::store_exclusive || c == InstructionClass::load_exclusive ||
           c == InstructionClass::lse_atomic || c == InstructionClass::locked_rmw;
}

// Whether a call to `callee` (objdump's reference, "__aarch64_swp4_acq") is an atomic: libgcc's
// outline-atomics helpers (-moutline-atomics) hold the LL/SC or LSE sequence out of line.
bool is_outline_atomic_helper(std::string_view callee);

// The class as a sentence says it: "the store-exclusive", "an ordinary instruction".
std::string_view class_description(InstructionClass c);

}  // namespace lockprof::symbols
