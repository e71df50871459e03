// The arch primitives' code, read back from this binary with GNU objdump: what the optimiser
// kept of them at the build's -O level.
#include "lockprof/arch/cpu.hpp"

#include <cstdint>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "lockprof/common/files.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "support/sanitizers.hpp"

using namespace lockprof;
using symbols::Instruction;

// Out-of-line copies of the inline primitives, so the test can find them by name.
extern "C" [[gnu::noinline, gnu::used]] std::uint64_t lockprof_ticks_probe() {
    return arch::ticks();
}

// A plain (non-atomic) global: nothing but the compiler's view of burn() keeps its first store.
std::uint64_t g_burn_probe_word = 0;
extern "C" [[gnu::noinline, gnu::used]] void lockprof_burn_probe(std::uint64_t iterations) {
    g_burn_probe_word = 1;
    arch::burn(iterations);
    g_burn_probe_word = 2;
}

namespace {

std::vector<Instruction> code_of(const char* name) {
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    const symbols::Disassembler disassembler;
    const auto functions = disassembler.disassemble_functions(self, name);
    if (functions.size() != 1) {
        ADD_FAILURE() << "expected one function " << name << ", found " << functions.size();
        return {};
    }
    return functions[0].instructions;
}

std::string listing(const std::vector<Instruction>& code) {
    std::string out;
    for (const auto& i : code) out += "    " + i.text() + "\n";
    return out;
}

class ArchCode : public ::testing::Test {
  protected:
    void SetUp() override {
#if defined(LOCKPROF_TEST_TSAN) || defined(LOCKPROF_TEST_ASAN)
        GTEST_SKIP() << "sanitizers instrument every memory access; the code checked is the "
                        "release build's. Runs in the other builds";
#endif
        const auto objdump = symbols::default_objdump("/proc/self/exe");
        if (!lockprof::program_exists(objdump)) GTEST_SKIP() << objdump << " not found";
    }
};

// The counter read waits for earlier instructions: without a barrier the read after an acquire
// may execute before the acquiring atomic has completed (aarch64 `isb`, as lockhammer does;
// x86 `lfence`, since rdtsc is not serialising either).
TEST_F(ArchCode, TickReadWaitsForEarlierInstructions) {
    EXPECT_GT(lockprof_ticks_probe(), 0u);
    const auto code = code_of("lockprof_ticks_probe");
    const bool x86 = arch::kArchName == "x86_64";
    std::size_t read = code.size();
    for (std::size_t i = 0; i < code.size(); ++i)
        if (x86 ? code[i].mnemonic == "rdtsc"
                : code[i].mnemonic == "mrs" &&
                      code[i].operands.find("cntvct_el0") != std::string::npos)
            read = i;
    ASSERT_LT(read, code.size()) << "no counter read in arch::ticks():\n" << listing(code);
    ASSERT_GT(read, 0u) << listing(code);
    EXPECT_EQ(code[read - 1].mnemonic, x86 ? "lfence" : "isb")
        << "arch::ticks() reads the counter without waiting for earlier instructions:\n"
        << listing(code);
}

// burn() is a compiler barrier: memory accesses stay on their side of the busy work (the
// measured loop's data increments inside the critical section, stores before the release), and
// the loop itself survives optimisation.
TEST_F(ArchCode, BurnKeepsMemoryAccessesOnTheirSide) {
    lockprof_burn_probe(1000);
    EXPECT_EQ(g_burn_probe_word, 2u);
    const auto code = code_of("lockprof_burn_probe");
    const bool x86 = arch::kArchName == "x86_64";
    unsigned stores = 0, loops = 0;
    for (const auto& i : code) {
        // x86: a mov whose destination is the global; aarch64: a str of any kind.
        const bool store = x86 ? i.mnemonic.rfind("mov", 0) == 0 &&
                                     i.operands.find("(%rip)") != std::string::npos &&
                                     i.operands.find("(%rip)") + 6 == i.operands.size()
                               : i.mnemonic.rfind("str", 0) == 0;
        stores += store;
        loops += stores == 1 && i.is_backward_branch();
    }
    EXPECT_EQ(stores, 2u) << "burn() let the optimiser drop or move a store across it:\n"
                          << listing(code);
    EXPECT_GE(loops, 1u) << "no loop between the two stores: burn() was optimised away:\n"
                         << listing(code);
}

}  // namespace
