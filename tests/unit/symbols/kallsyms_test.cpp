// Kernel symbols chosen and sized as perf does (symbols/kallsyms.hpp), and C++ names as perf
// prints them (perf_symbol_name: libiberty without DMGL_PARAMS).
#include "lockprof/symbols/kallsyms.hpp"

#include <gtest/gtest.h>

#include "lockprof/symbols/resolver.hpp"

namespace lockprof::symbols {
namespace {

TEST(KernelSymbols, PerfsChoiceAmongAliasesAndItsSizes) {
    // perf sizes before it drops aliases, so the last alias listed at an address is the only
    // one with a size, and it wins whatever its binding or name.
    const auto k = KernelSymbols::parse(
        "ffffffff81000000 T _text\n"
        "ffffffff81000100 T __global_one\n"
        "ffffffff81000100 t local_one\n"  // last: beats an earlier global
        "ffffffff81000200 T __strong\n"
        "ffffffff81000200 W weak_one\n"  // last: beats an earlier strong one
        "ffffffff81000300 T b\n"
        "ffffffff81000300 T __a\n"  // last: more underscores do not matter
        "ffffffff81000400 T longer\n"
        "ffffffff81000400 T short\n"  // last: nor does the length
        "ffffffff81000500 r rodata_is_skipped\n"
        "0000000000000000 T hidden_by_kptr_restrict\n"
        "not a line\n"
        // Both sized (the kernel image's last symbol ends a page later, the module's is the
        // file's last): the other rules decide, the global over the local.
        "ffffffffc0000000 T image_end\n"
        "ffffffffc0000000 t mod_fn\t[nf_tables]\n");
    ASSERT_NE(k.find(0xffffffff81000150), nullptr);
    EXPECT_EQ(k.find(0xffffffff81000150)->name, "local_one");
    EXPECT_EQ(k.find(0xffffffff81000200)->name, "weak_one");
    EXPECT_EQ(k.find(0xffffffff81000300)->name, "__a");
    EXPECT_EQ(k.find(0xffffffff810003ff)->name, "__a");
    EXPECT_EQ(k.find(0xffffffff81000400)->name, "short");
    EXPECT_EQ(k.find(0xffffffff81000fff)->name, "short");  // ends where the next begins
    ASSERT_NE(k.find(0xffffffffc0000010), nullptr);
    EXPECT_EQ(k.find(0xffffffffc0000010)->name, "image_end");
    EXPECT_EQ(k.find(0xffffffffc0000fff)->name, "image_end");  // a page later
    EXPECT_EQ(k.find(0xffffffffc0001000), nullptr);
    EXPECT_EQ(k.find(0xffffffff80000000), nullptr);
    EXPECT_EQ(k.size(), 6u);
    EXPECT_TRUE(KernelSymbols::parse("").empty());
}

// Aliases as this machine's 6.1 kernel lists them, with the names perf 6.1's `perf script`
// printed for samples in them (the clean-clone CI failure of 409bc7b: lockprof said
// "memcpy" and "__pi___x86_indirect_thunk_r12").
TEST(KernelSymbols, ChoosesAsPerfScriptPrintedOnDebian12) {
    const auto k = KernelSymbols::parse(
        "ffffffff82244ea0 T memcpy\n"
        "ffffffff82244ea0 T __memcpy\n"
        "ffffffff82244ea0 T __pi_memcpy\n"
        "ffffffff82244fa0 T memmove\n"
        "ffffffff82253b00 T __pi___x86_indirect_thunk_r12\n"
        "ffffffff82253b00 T __x86_indirect_thunk_r12\n"
        "ffffffff82253b20 T __x86_indirect_thunk_r13\n");
    ASSERT_NE(k.find(0xffffffff82244eb0), nullptr);
    EXPECT_EQ(k.find(0xffffffff82244eb0)->name, "__pi_memcpy");
    ASSERT_NE(k.find(0xffffffff82253b04), nullptr);
    EXPECT_EQ(k.find(0xffffffff82253b04)->name, "__x86_indirect_thunk_r12");
}

TEST(PerfSymbolName, DemangledWithoutParametersAsPerfPrintsIt) {
    EXPECT_EQ(perf_symbol_name("_ZN2ns3BoxImE4spinEm"), "ns::Box<unsigned long>::spin");
    EXPECT_EQ(perf_symbol_name("_ZNK5outer5inner4GridImLi3EE4walkEm"),
              "outer::inner::Grid<unsigned long, 3>::walk");
    EXPECT_EQ(perf_symbol_name("_Z1fIiEvT_"), "f<int>");  // no return type
    EXPECT_EQ(perf_symbol_name("_ZN3AccpLEm"), "Acc::operator+=");
    EXPECT_EQ(perf_symbol_name("_ZN3AccclEv"), "Acc::operator()");
    EXPECT_EQ(perf_symbol_name("_Znwm"), "operator new");
    EXPECT_EQ(perf_symbol_name("_ZN12_GLOBAL__N_17anon_fnEi"), "(anonymous namespace)::anon_fn");
    EXPECT_EQ(perf_symbol_name("_ZN2ns3BoxImE4spinEm.isra.0"), "ns::Box<unsigned long>::spin");
    EXPECT_EQ(perf_symbol_name("_ZZ3runiENKUliE_clEi"), "run(int)::{lambda(int)#1}::operator()");
    EXPECT_EQ(perf_symbol_name("_ZTV3Acc"), "vtable for Acc");
    EXPECT_EQ(perf_symbol_name("cfree@GLIBC_2.2.5"), "cfree@GLIBC_2.2.5");
    EXPECT_EQ(perf_symbol_name("main"), "main");
    EXPECT_EQ(perf_symbol_name("_Znot_mangled"), "_Znot_mangled");
    // A PLT stub's name, as SymbolResolver gives it: the function it jumps to, demangled.
    EXPECT_EQ(perf_symbol_name("_ZN2ns3BoxImE4spinEm@plt"), "ns::Box<unsigned long>::spin@plt");
    EXPECT_EQ(perf_symbol_name("@plt"), "@plt");
}

TEST(PltStubs, OnePerPltRelocationInOrderInsideThePlt) {
    // This test binary calls the C library through its PLT.
    const auto stubs = plt_stubs("/proc/self/exe");
    ASSERT_FALSE(stubs.empty());
    for (std::size_t i = 0; i < stubs.size(); ++i) {
        EXPECT_GT(stubs[i].size, 0u);
        if (i > 0) {
            EXPECT_EQ(stubs[i].file_offset, stubs[i - 1].file_offset + stubs[i - 1].size);
        }
    }
    EXPECT_TRUE(plt_stubs("/nonexistent").empty());
}

}  // namespace
}  // namespace lockprof::symbols
