#include "lockprof/arch/call_abi.hpp"

#include <asm/perf_regs.h>

#include <bit>
#include <cstring>

#include "lockprof/arch/cpu.hpp"

namespace lockprof::arch {
namespace {

constexpr std::uint64_t bit(int reg) {
    return std::uint64_t{1} << reg;
}

// The kernel writes the sampled registers in ascending register-number order: an index is the
// number of mask bits below the register's own.
constexpr std::size_t index_of(std::uint64_t mask, int reg) {
    return static_cast<std::size_t>(std::popcount(mask & (bit(reg) - 1)));
}

#if defined(LOCKPROF_ARCH_X86)
constexpr std::uint64_t kMask = bit(PERF_REG_X86_DI) | bit(PERF_REG_X86_SI) | bit(PERF_REG_X86_DX) |
                                bit(PERF_REG_X86_CX) | bit(PERF_REG_X86_SP) | bit(PERF_REG_X86_IP);
constexpr CallAbi kAbi{
    .name = "x86-64 SysV",
    .sample_regs_user = kMask,
    .registers = static_cast<std::size_t>(std::popcount(kMask)),
    .argument_count = 4,
    .argument = {index_of(kMask, PERF_REG_X86_DI), index_of(kMask, PERF_REG_X86_SI),
                 index_of(kMask, PERF_REG_X86_DX), index_of(kMask, PERF_REG_X86_CX)},
    .argument_names = {"rdi", "rsi", "rdx", "rcx"},
    .stack_pointer = index_of(kMask, PERF_REG_X86_SP),
    .link = std::nullopt,
    .return_address_on_stack = true,
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
    .argument = {index_of(kMask, PERF_REG_ARM64_X0), index_of(kMask, PERF_REG_ARM64_X1),
                 index_of(kMask, PERF_REG_ARM64_X2), index_of(kMask, PERF_REG_ARM64_X3)},
    .argument_names = {"x0", "x1", "x2", "x3"},
    .stack_pointer = index_of(kMask, PERF_REG_ARM64_SP),
    .link = index_of(kMask, PERF_REG_ARM64_LR),
    .return_address_on_stack = false,
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
