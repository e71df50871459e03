#include "lockprof/arch/call_abi.hpp"

#include <asm/perf_regs.h>

#include <bit>
#include <cstring>

#include "arch/sampled_registers.hpp"
#include "lockprof/arch/cpu.hpp"

namespace lockprof::arch {
namespace {

constexpr std::uint64_t bit(int reg) {
    return std::uint64_t{1} << reg;
}

#if defined(LOCKPROF_ARCH_X86)
constexpr std::uint64_t kMask = bit(PERF_REG_X86_DI) | bit(PERF_REG_X86_SI) | bit(PERF_REG_X86_DX) |
                                bit(PERF_REG_X86_CX) | bit(PERF_REG_X86_SP) | bit(PERF_REG_X86_IP);
constexpr CallAbi kAbi{
    .name = "x86-64 SysV",
    .sample_regs_user = kMask,
    .registers = static_cast<std::size_t>(std::popcount(kMask)),
    .argument_count = 4,
    .argument = {sampled_index(kMask, PERF_REG_X86_DI), sampled_index(kMask, PERF_REG_X86_SI),
                 sampled_index(kMask, PERF_REG_X86_DX), sampled_index(kMask, PERF_REG_X86_CX)},
    .argument_names = {"rdi", "rsi", "rdx", "rcx"},
    .stack_pointer = sampled_index(kMask, PERF_REG_X86_SP),
    .link = std::nullopt,
    .return_address_on_stack = true,
    .return_regs_user = bit(PERF_REG_X86_AX),
    .return_value_name = "rax",
};
#else
constexpr std::uint64_t kMask = bit(PERF_REG_ARM64_X0) | bit(PERF_REG_ARM64_X1) |
                                bit(PERF_REG_ARM64_X2) | bit(PERF_REG_ARM64_X3) |
                                bit(PERF_REG_ARM64_LR) | bit(PERF_REG_ARM64_SP) |
                                bit(PERF_REG_ARM64_PC);
constexpr CallAbi kAbi{
    .name = "AAPCS64",
    .sample_regs_user = kMask,
    .registers = static_cast<std::size_t>(std::popcount(kMask)),
    .argument_count = 4,
    .argument = {sampled_index(kMask, PERF_REG_ARM64_X0), sampled_index(kMask, PERF_REG_ARM64_X1),
                 sampled_index(kMask, PERF_REG_ARM64_X2), sampled_index(kMask, PERF_REG_ARM64_X3)},
    .argument_names = {"x0", "x1", "x2", "x3"},
    .stack_pointer = sampled_index(kMask, PERF_REG_ARM64_SP),
    .link = sampled_index(kMask, PERF_REG_ARM64_LR),
    .return_address_on_stack = false,
    .return_regs_user = bit(PERF_REG_ARM64_X0),
    .return_value_name = "x0",
};
#endif

}  // namespace

const CallAbi& call_abi() {
    return kAbi;
}

std::optional<std::uint64_t> argument(const CallAbi& abi, std::span<const std::uint64_t> regs,
                                      std::size_t n) {
    if (n >= abi.argument_count || abi.argument[n] >= regs.size()) return std::nullopt;
    return regs[abi.argument[n]];
}

std::optional<std::uint64_t> return_value(const CallAbi& abi, std::span<const std::uint64_t> regs) {
    // One register is sampled at a return: the array is that register.
    if (regs.size() != static_cast<std::size_t>(std::popcount(abi.return_regs_user)))
        return std::nullopt;
    return regs[0];
}

std::optional<std::uint64_t> return_address(const CallAbi& abi, std::span<const std::uint64_t> regs,
                                            std::span<const unsigned char> stack) {
    if (!abi.return_address_on_stack) {
        if (!abi.link || *abi.link >= regs.size()) return std::nullopt;
        return regs[*abi.link];
    }
    if (stack.size() < sizeof(std::uint64_t)) return std::nullopt;
    std::uint64_t word = 0;
    std::memcpy(&word, stack.data(), sizeof word);
    return word;
}

}  // namespace lockprof::arch
