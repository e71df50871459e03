// The call ABI's view of a uprobe sample: arguments and return address from the sampled
// registers, in the order the kernel writes them (ascending perf register number).
#include "lockprof/arch/call_abi.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <vector>

namespace lockprof::arch {
namespace {

TEST(CallAbi, MaskAndIndexesAgree) {
    const auto& abi = call_abi();
    EXPECT_EQ(abi.registers, static_cast<std::size_t>(std::popcount(abi.sample_regs_user)));
    ASSERT_EQ(abi.argument_count, 4u);
    std::vector<bool> used(abi.registers, false);
    for (std::size_t i = 0; i < abi.argument_count; ++i) {
        ASSERT_LT(abi.argument[i], abi.registers);
        EXPECT_FALSE(used[abi.argument[i]]) << "argument " << i;
        used[abi.argument[i]] = true;
    }
    EXPECT_LT(abi.stack_pointer, abi.registers);
    EXPECT_FALSE(used[abi.stack_pointer]);
    EXPECT_NE(abi.return_address_on_stack, abi.link.has_value());
}

TEST(CallAbi, ArgumentsComeFromTheirRegisters) {
    const auto& abi = call_abi();
    std::vector<std::uint64_t> regs(abi.registers, 0);
    for (std::size_t i = 0; i < 4; ++i) regs[abi.argument[i]] = 100 + i;
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(argument(abi, regs, i), 100 + i);
    EXPECT_EQ(argument(abi, regs, 4), std::nullopt);
    EXPECT_EQ(argument(abi, std::vector<std::uint64_t>{}, 0), std::nullopt);
}

TEST(CallAbi, ReturnAddressFromTheLinkRegisterOrTheStack) {
    const auto& abi = call_abi();
    std::vector<std::uint64_t> regs(abi.registers, 0);
    if (abi.link) regs[*abi.link] = 0x401234;
    unsigned char stack[16] = {};
    const std::uint64_t word = 0x401234;
    std::memcpy(stack, &word, sizeof word);
    EXPECT_EQ(return_address(abi, regs, stack), 0x401234u);
    if (abi.return_address_on_stack)
        EXPECT_EQ(return_address(abi, regs, {}), std::nullopt);
    else
        EXPECT_EQ(return_address(abi, {}, stack), std::nullopt);
}

TEST(CallAbi, ReturnValueIsTheOneRegisterSampledAtAReturn) {
    const auto& abi = call_abi();
    EXPECT_EQ(std::popcount(abi.return_regs_user), 1);
    EXPECT_EQ(return_value(abi, std::vector<std::uint64_t>{7}), 7u);
    EXPECT_EQ(return_value(abi, std::vector<std::uint64_t>{}), std::nullopt);
    // An entry sample's array is not a return sample's.
    EXPECT_EQ(return_value(abi, std::vector<std::uint64_t>(abi.registers, 1)), std::nullopt);
}

}  // namespace
}  // namespace lockprof::arch
