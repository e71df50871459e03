// The one mnemonic classifier (x86-64 and aarch64 spellings as parse_objdump gives them), which
// list-locks --disasm and the explanation share.
#include "lockprof/symbols/mnemonics.hpp"

#include <gtest/gtest.h>

#include "lockprof/symbols/disassembler.hpp"

namespace lockprof::symbols {

// gtest names the class in failures ("the LSE atomic") instead of printing its bytes.
void PrintTo(InstructionClass c, std::ostream* os) {
    *os << class_description(c);
}

namespace {

using C = InstructionClass;

void expect_class(std::initializer_list<std::string_view> mnemonics, C expected) {
    for (auto m : mnemonics)
        EXPECT_EQ(classify_mnemonic(m), expected) << m << ": " << class_description(expected);
}

TEST(Mnemonics, AarchExclusives) {
    expect_class({"ldxr", "ldxrb", "ldxrh", "ldaxr", "ldaxrb", "ldaxrh", "ldxp", "ldaxp"},
                 C::load_exclusive);
    expect_class({"stxr", "stxrb", "stxrh", "stlxr", "stlxrb", "stlxrh", "stxp", "stlxp"},
                 C::store_exclusive);
}

TEST(Mnemonics, LseAtomicsInEveryForm) {
    expect_class({"cas", "casa", "casl", "casal", "casb", "casah", "casalb", "casp", "caspal"},
                 C::lse_atomic);
    expect_class({"swp", "swpa", "swpl", "swpal", "swpb", "swpalh"}, C::lse_atomic);
    for (std::string op : {"add", "clr", "eor", "set", "smax", "smin", "umax", "umin"}) {
        // ld<op> returns the old value and has acquire forms.
        for (std::string suffix : {"", "a", "l", "al", "b", "h", "ab", "alh"})
            EXPECT_EQ(classify_mnemonic("ld" + op + suffix), C::lse_atomic) << "ld" + op + suffix;
        // st<op> is objdump's name for ld<op> into the zero register: release forms only.
        for (std::string suffix : {"", "l", "b", "h", "lb", "lh"})
            EXPECT_EQ(classify_mnemonic("st" + op + suffix), C::lse_atomic) << "st" + op + suffix;
    }
}

TEST(Mnemonics, X86LockedReadModifyWrites) {
    expect_class({"lock cmpxchg", "lock xadd", "lock addl", "lock orq", "lock btsl",
                  "lock cmpxchg16b", "xacquire lock cmpxchg", "xchg", "xchgl", "xchgq"},
                 C::locked_rmw);
    // Without the prefix a compare-exchange is not atomic.
    expect_class({"cmpxchg", "xadd", "addl"}, C::other);
}

TEST(Mnemonics, DelaysAndBarriers) {
    // The instructions of arch::Delay's policies; isb is one (lockprof's arm64 spin delay).
    expect_class({"pause", "yield", "isb", "wfe"}, C::delay);
    expect_class({"dmb", "dsb", "mfence", "lfence", "sfence"}, C::barrier);
    expect_class({"nop", "mov", "ldr", "ldar", "ldapr", "stlr", "str", "movl", "cmpl"}, C::other);
}

TEST(Mnemonics, Branches) {
    expect_class({"jne", "je", "jmp", "jmpq", "bnd jmp", "notrack jmp", "loop", "b", "b.ne", "b.eq",
                  "bc.ne", "cbz", "cbnz", "tbz", "tbnz"},
                 C::branch);
    expect_class({"bl", "call", "ret", "br", "blr"}, C::other);  // calls, returns, indirect
}

// The assertions explain_test made before the classifier moved here.
TEST(Mnemonics, ClassifiesX86AndArmInstructions) {
    EXPECT_EQ(classify_mnemonic("stlxr"), InstructionClass::store_exclusive);
    EXPECT_EQ(classify_mnemonic("ldaxr"), InstructionClass::load_exclusive);
    EXPECT_EQ(classify_mnemonic("swpal"), InstructionClass::lse_atomic);
    EXPECT_EQ(classify_mnemonic("casa"), InstructionClass::lse_atomic);
    EXPECT_EQ(classify_mnemonic("lock cmpxchg"), InstructionClass::locked_rmw);
    EXPECT_EQ(classify_mnemonic("xchg"), InstructionClass::locked_rmw);
    EXPECT_EQ(classify_mnemonic("pause"), InstructionClass::delay);
    EXPECT_EQ(classify_mnemonic("b.ne"), InstructionClass::branch);
    EXPECT_EQ(classify_mnemonic("jne"), InstructionClass::branch);
    EXPECT_EQ(classify_mnemonic("mov"), InstructionClass::other);
    EXPECT_EQ(classify_mnemonic(""), InstructionClass::other);
}

TEST(Mnemonics, AtomicInstructionsIncludeOutlineHelperCalls) {
    auto insn = [](std::string mnemonic, std::string reference = "") {
        Instruction i;
        i.mnemonic = std::move(mnemonic);
        i.reference = std::move(reference);
        return i;
    };
    for (const char* m : {"ldaxr", "stxr", "swpa", "casal", "ldadda", "staddl", "stsetl", "stclrb",
                          "steorh", "lock cmpxchg"})
        EXPECT_TRUE(insn(m).is_atomic()) << m;
    // x86 xchg is atomic on memory only; `xchg %ax,%ax` is the two-byte nop (osq's padding).
    auto xchg = insn("xchg");
    xchg.operands = "%r10d,(%r14)";
    EXPECT_TRUE(xchg.is_atomic());
    xchg.operands = "%ax,%ax";
    EXPECT_FALSE(xchg.is_atomic());
    xchg.operands = "%eax,%edx";
    EXPECT_FALSE(xchg.is_atomic());
    EXPECT_TRUE(insn("bl", "__aarch64_swp4_acq").is_atomic());
    EXPECT_TRUE(insn("bl", "__aarch64_cas4_acq_rel").is_atomic());
    EXPECT_FALSE(insn("bl", "pthread_spin_lock@plt").is_atomic());
    for (const char* m : {"dmb", "isb", "pause", "mfence", "cbnz", "ldar", "stlr", "mov"})
        EXPECT_FALSE(insn(m).is_atomic()) << m;
}

}  // namespace
}  // namespace lockprof::symbols
