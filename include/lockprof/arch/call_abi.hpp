// What a uprobe sample's user registers say at a function's entry, per architecture: which
// registers to ask the kernel for (perf_event_attr::sample_regs_user), where the integer
// arguments, the stack pointer and the return address are in the sampled array, and whether
// the return address has to be read from the stack (x86-64: [rsp] at entry; aarch64: x30).
// The register numbering is the kernel's (asm/perf_regs.h), which differs per architecture, so
// it lives here and nowhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace lockprof::arch {

struct CallAbi {
    const char* name;                 // "x86-64 SysV", "AAPCS64"
    std::uint64_t sample_regs_user;   // mask of perf register numbers to sample
    std::size_t registers;            // how many the mask selects (the sample's array size)
    std::size_t argument_count;       // integer argument registers described below
    std::size_t argument[4];          // index in the sampled array of argument 0..3
    const char* argument_names[4];    // "rdi", "rsi", "rdx", "rcx" / "x0".."x3"
    std::size_t stack_pointer;        // index of the stack pointer
    std::optional<std::size_t> link;  // index of the link register (aarch64), if any
    bool return_address_on_stack;     // x86-64: the return address is the word at [sp]
    // At a function's return (a uretprobe sample): the mask that samples the integer return
    // value register alone (rax / x0), so the sampled array is that one register.
    std::uint64_t return_regs_user;
    const char* return_value_name;  // "rax" / "x0"
};

// The ABI of the machine lockprof was built for.
const CallAbi& call_abi();

// Argument `n` (0-based, < argument_count) from a sample's registers; nullopt when the sample
// holds too few registers.
std::optional<std::uint64_t> argument(const CallAbi& abi, std::span<const std::uint64_t> regs,
                                      std::size_t n);

// The integer return value from a return sample's registers (sampled with return_regs_user);
// nullopt when the sample holds none.
std::optional<std::uint64_t> return_value(const CallAbi& abi, std::span<const std::uint64_t> regs);

// The return address at a function's entry: the link register, or the first word of the
// sampled user stack (`stack`: the bytes from the stack pointer up). nullopt when missing.
std::optional<std::uint64_t> return_address(const CallAbi& abi, std::span<const std::uint64_t> regs,
                                            std::span<const unsigned char> stack);

}  // namespace lockprof::arch
