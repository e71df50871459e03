// The registers a DWARF unwind starts from: perf's numbering (the order the kernel writes a
// sample's registers in) mapped to DWARF's, for both architectures on any host.
#include "lockprof/arch/unwind_registers.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <vector>

namespace lockprof::arch {
namespace {

// A sample whose every register holds 1000 + its perf number, in ascending perf order.
std::vector<std::uint64_t> numbered_sample(const UnwindRegisters& r) {
    std::vector<std::uint64_t> values;
    for (int reg = 0; reg < 64; ++reg)
        if (r.sample_regs_user & (std::uint64_t{1} << reg)) values.push_back(1000 + reg);
    return values;
}

TEST(UnwindRegisters, X86DwarfOrderIsRaxRdxRcxRbxThenRip) {
    const auto& r = unwind_registers_x86_64();
    // perf: ax=0 bx=1 cx=2 dx=3 si=4 di=5 bp=6 sp=7 ip=8, r8..r15 = 16..23.
    EXPECT_EQ(r.sample_regs_user, 0xff01ffu);
    EXPECT_EQ(r.sampled, 17u);
    const auto frame = initial_frame(r, numbered_sample(r));
    ASSERT_TRUE(frame);
    const std::vector<std::uint64_t> expected = {1000, 1003, 1002, 1001, 1004, 1005,
                                                 1006, 1007, 1016, 1017, 1018, 1019,
                                                 1020, 1021, 1022, 1023, 1008};
    EXPECT_EQ(frame->dwarf, expected);
    EXPECT_EQ(frame->pc, 1008u);
    EXPECT_EQ(frame->sp, 1007u);
    EXPECT_TRUE(r.pc_is_dwarf_register);
}

TEST(UnwindRegisters, Aarch64DwarfIsX0ToX30ThenSpWithThePcApart) {
    const auto& r = unwind_registers_aarch64();
    // perf: x0..x30 = 0..30, sp = 31, pc = 32.
    EXPECT_EQ(r.sample_regs_user, 0x1ffffffffu);
    EXPECT_EQ(r.sampled, 33u);
    const auto frame = initial_frame(r, numbered_sample(r));
    ASSERT_TRUE(frame);
    ASSERT_EQ(frame->dwarf.size(), 32u);
    for (std::size_t i = 0; i < 32; ++i) EXPECT_EQ(frame->dwarf[i], 1000 + i) << "x" << i;
    EXPECT_EQ(frame->pc, 1032u);
    EXPECT_EQ(frame->sp, 1031u);
    EXPECT_FALSE(r.pc_is_dwarf_register);
}

TEST(UnwindRegisters, ShortSampleHasNoInitialFrame) {
    for (const auto* r : {&unwind_registers_x86_64(), &unwind_registers_aarch64()}) {
        auto values = numbered_sample(*r);
        values.pop_back();
        EXPECT_FALSE(initial_frame(*r, values)) << r->name;
        EXPECT_FALSE(initial_frame(*r, {})) << r->name;
    }
}

TEST(UnwindRegisters, TheHostsTableIsOneOfTheTwo) {
    const auto& host = unwind_registers();
    EXPECT_TRUE(&host == &unwind_registers_x86_64() || &host == &unwind_registers_aarch64());
    EXPECT_EQ(host.sampled, static_cast<std::size_t>(std::popcount(host.sample_regs_user)));
}

TEST(UnwindRegisters, SelectPicksTheCallAbisRegistersOutOfTheUnwindSet) {
    // from {0,2,5}, to {2,5,7}: 7 is not sampled and reads 0.
    const std::vector<std::uint64_t> sampled = {10, 12, 15};
    const auto picked = select_registers(0b100101, sampled, (1u << 2) | (1u << 5) | (1u << 7));
    EXPECT_EQ(picked, (std::vector<std::uint64_t>{12, 15, 0}));
    EXPECT_TRUE(select_registers(0b100101, std::vector<std::uint64_t>{1}, 0b100).empty());
}

}  // namespace
}  // namespace lockprof::arch
