// objdump output parsing (x86-64 and aarch64 text, so both are tested on any host) and
// disassembly of a function of this test binary by name.
#include "lockprof/symbols/disassembler.hpp"

#include <atomic>
#include <cstdint>
#include <filesystem>

#include <gtest/gtest.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/files.hpp"
#include "support/sanitizers.hpp"

namespace lockprof::symbols {
namespace {

// An exchange loop this test disassembles by name: it must contain an atomic exchange.
std::atomic<std::uint32_t> g_word{0};
extern "C" __attribute__((noinline)) std::uint32_t lockprof_disasm_probe_exchange() {
    std::uint32_t tries = 0;
    while (g_word.exchange(1, std::memory_order_acquire) != 0) ++tries;
    g_word.store(0, std::memory_order_release);
    return tries;
}

constexpr const char* kX86 =
    "\n/work/x:     file format elf64-x86-64\n\n\nDisassembly of section .text:\n\n"
    "00000000000642c0 <_Z1fv>:\n"
    "   642c0:\tf3 90                \tpause\n"
    "   642c8:\t44 87 2f             \txchg   %r13d,(%rdi)\n"
    "   642d2:\t75 ec                \tjne    642c0 <_Z1fv+0x50>\n"
    "   63914:\tf0 44 0f b1 0f       \tlock cmpxchg %r9d,(%rdi)\n"
    "   6392e:\t74 1f                \tje     6394f <_ZN8lockprof1gEv+0x7f>\n"
    "   63a00:\t48 8b 05 f9 0f 00 00 \tmov    0xff9(%rip),%rax        # 64a00 <g_word>\n"
    "   63a07:\tff e0                \tjmp    *%rax\n"
    "\t...\n";

constexpr const char* kAarch64 =
    "0000000000400540 <tas>:\n"
    "  400544:\t885f7e60 \tldxr\tw0, [x19]\n"
    "  400548:\t88017e75 \tstxr\tw1, w21, [x19]\n"
    "  40054c:\t35ffffc1 \tcbnz\tw1, 400544 <tas+0x4>\n"
    "  400550:\tb8e08261 \tswpal\tw0, w1, [x19]\n"
    "  400554:\t88dffe60 \tcasa\tw0, w1, [x19]\n"
    "  400558:\t54000061 \tb.ne\t400564 <tas+0x24>  // b.any\n"
    "  40055c:\t52800020 \tmov\tw0, #0x1                   \t// #1\n";

TEST(ParseObjdump, X86InstructionsPrefixesAndBranches) {
    const auto insns = parse_objdump(kX86);
    ASSERT_EQ(insns.size(), 7u);
    EXPECT_EQ(insns[0].address, 0x642c0u);
    EXPECT_EQ(insns[0].mnemonic, "pause");
    EXPECT_EQ(insns[0].bytes, (std::vector<std::uint8_t>{0xf3, 0x90}));
    EXPECT_EQ(insns[1].mnemonic, "xchg");
    EXPECT_EQ(insns[1].operands, "%r13d,(%rdi)");
    EXPECT_TRUE(insns[2].is_backward_branch());
    EXPECT_EQ(insns[2].branch_target, 0x642c0u);
    EXPECT_EQ(insns[2].reference, "_Z1fv+0x50");
    EXPECT_EQ(insns[3].mnemonic, "lock cmpxchg");
    EXPECT_EQ(insns[3].text(), "lock cmpxchg %r9d,(%rdi)");
    EXPECT_EQ(insns[3].bytes.size(), 5u);
    EXPECT_FALSE(insns[4].is_backward_branch());
    EXPECT_TRUE(insns[4].is_branch());
    EXPECT_EQ(insns[5].operands, "0xff9(%rip),%rax");
    EXPECT_EQ(insns[5].comment, "64a00 <g_word>");
    EXPECT_FALSE(insns[5].branch_target.has_value());
    EXPECT_FALSE(insns[6].branch_target.has_value());  // indirect
}

TEST(ParseObjdump, Aarch64LlscAndLse) {
    const auto insns = parse_objdump(kAarch64);
    ASSERT_EQ(insns.size(), 7u);
    EXPECT_EQ(insns[0].mnemonic, "ldxr");
    EXPECT_EQ(insns[0].operands, "w0, [x19]");
    EXPECT_EQ(insns[0].bytes, (std::vector<std::uint8_t>{0x88, 0x5f, 0x7e, 0x60}));
    EXPECT_EQ(insns[1].mnemonic, "stxr");
    EXPECT_TRUE(insns[2].is_backward_branch());
    EXPECT_EQ(insns[2].branch_target, 0x400544u);
    EXPECT_EQ(insns[3].mnemonic, "swpal");
    EXPECT_EQ(insns[4].mnemonic, "casa");
    EXPECT_EQ(insns[5].mnemonic, "b.ne");
    EXPECT_EQ(insns[5].comment, "b.any");
    EXPECT_EQ(insns[5].branch_target, 0x400564u);
    EXPECT_EQ(insns[6].operands, "w0, #0x1");
    EXPECT_EQ(insns[6].comment, "#1");
}

// Found by fuzz_objdump: a line shaped like an instruction whose encoding column is not hex
// ("zz") or whose address has more than 16 digits threw std::invalid_argument/out_of_range from
// stoul ("lockprof: internal error: stoul"), and one holding only a comment became an
// instruction without a mnemonic. Such lines are not instructions: skipped.
TEST(ParseObjdump, LinesThatOnlyLookLikeInstructionsAreSkipped) {
    const auto insns = parse_objdump(
        "   37ad0:\te9 zz 00 00 00       \tjmp    37ae0 <main>\n"
        "   37ad5:\t-1 \tnop\n"
        "  11112222333344445:\t90 \tnop\n"
        "  1445fc:\td65                 \t// #128\n"
        "  400544:\t885f7e60 \tldxr\tw0, [x19]\n");
    ASSERT_EQ(insns.size(), 1u);
    EXPECT_EQ(insns[0].mnemonic, "ldxr");
}

TEST(Disassembler, DefaultObjdumpFollowsTheElfMachine) {
    // An aarch64 build under qemu-user on an x86 host must use the cross objdump.
    const bool cross =
        lockprof::arch::kArchName == "aarch64" && program_exists("aarch64-linux-gnu-objdump");
    EXPECT_EQ(default_objdump("/proc/self/exe"), cross ? "aarch64-linux-gnu-objdump" : "objdump");
    EXPECT_TRUE(program_exists("objdump"));
    EXPECT_FALSE(program_exists("/nonexistent/objdump"));
}

TEST(Disassembler, DisassemblesAFunctionOfThisBinaryByName) {
#if defined(LOCKPROF_TEST_TSAN)
    GTEST_SKIP() << "TSan turns atomics into calls into its runtime: there is no xchg/cmpxchg "
                    "instruction to find. Runs in the other builds";
#endif
    ASSERT_EQ(lockprof_disasm_probe_exchange(), 0u);
    const Disassembler disassembler;
    const auto functions = disassembler.disassemble_functions(
        std::filesystem::read_symlink("/proc/self/exe"), "lockprof_disasm_probe_exchange");
    ASSERT_EQ(functions.size(), 1u);
    const auto& f = functions[0];
    EXPECT_EQ(f.name, "lockprof_disasm_probe_exchange");
    ASSERT_FALSE(f.instructions.empty());
    EXPECT_EQ(f.instructions.front().address, f.address);
    bool exchange = false, backward = false;
    for (const auto& i : f.instructions) {
        // x86: xchg; aarch64 LL/SC or LSE: ldaxr/stxr or swpa; outline: a call.
        exchange |= i.mnemonic == "xchg" || i.mnemonic.rfind("swp", 0) == 0 ||
                    i.mnemonic.rfind("stxr", 0) == 0 || i.mnemonic == "bl";
        backward |= i.is_backward_branch();
    }
    EXPECT_TRUE(exchange);
    EXPECT_TRUE(backward);
}

TEST(Disassembler, MissingObjdumpIsAnError) {
    const Disassembler disassembler("/nonexistent/objdump");
    EXPECT_THROW(disassembler.disassemble("/proc/self/exe", 0, 16), std::exception);
}

}  // namespace
}  // namespace lockprof::symbols
