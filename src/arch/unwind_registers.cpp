#include "lockprof/arch/unwind_registers.hpp"

#include <algorithm>
#include <bit>

#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif

#include "arch/sampled_registers.hpp"

namespace lockprof::arch {
namespace {

// The kernel's perf register numbers, written out so both tables build on either host; on the
// host's own architecture they are checked against asm/perf_regs.h below.
namespace x86 {
constexpr int ax = 0, bx = 1, cx = 2, dx = 3, si = 4, di = 5, bp = 6, sp = 7, ip = 8;
constexpr int r8 = 16, r9 = 17, r10 = 18, r11 = 19, r12 = 20, r13 = 21, r14 = 22, r15 = 23;
}  // namespace x86
namespace a64 {
constexpr int x0 = 0, lr = 30, sp = 31, pc = 32;
}  // namespace a64

#if defined(__x86_64__)
static_assert(x86::ax == int{PERF_REG_X86_AX} && x86::di == int{PERF_REG_X86_DI} &&
              x86::sp == int{PERF_REG_X86_SP} && x86::ip == int{PERF_REG_X86_IP} &&
              x86::r8 == int{PERF_REG_X86_R8} && x86::r15 == int{PERF_REG_X86_R15});
#elif defined(__aarch64__)
static_assert(a64::x0 == int{PERF_REG_ARM64_X0} && a64::lr == int{PERF_REG_ARM64_LR} &&
              a64::sp == int{PERF_REG_ARM64_SP} && a64::pc == int{PERF_REG_ARM64_PC});
#endif

// A table from its DWARF order (perf numbers) and where the PC and SP are; the mask selects
// every register named.
constexpr UnwindRegisters make_table(std::string_view name, const int* perf_of_dwarf,
                                     std::size_t count, int pc, bool pc_in_dwarf, int sp) {
    UnwindRegisters r{};
    r.name = name;
    r.sample_regs_user = std::uint64_t{1} << pc;
    for (std::size_t i = 0; i < count; ++i) {
        r.perf_of_dwarf[i] = perf_of_dwarf[i];
        r.sample_regs_user |= std::uint64_t{1} << perf_of_dwarf[i];
    }
    r.dwarf_count = count;
    r.perf_pc = pc;
    r.pc_is_dwarf_register = pc_in_dwarf;
    r.perf_sp = sp;
    r.sampled = static_cast<std::size_t>(std::popcount(r.sample_regs_user));
    return r;
}

// DWARF for x86-64 (System V psABI, figure 3.36): rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then
// 16, the return address column, which holds the PC at the sampled frame (as perf's
// unwind-libdw and elfutils' x86_64 backend do).
constexpr UnwindRegisters make_x86() {
    const int order[17] = {x86::ax,  x86::dx,  x86::cx,  x86::bx,  x86::si,  x86::di,
                           x86::bp,  x86::sp,  x86::r8,  x86::r9,  x86::r10, x86::r11,
                           x86::r12, x86::r13, x86::r14, x86::r15, x86::ip};
    return make_table("x86-64", order, 17, x86::ip, true, x86::sp);
}

// DWARF for AArch64 (AADWARF64): x0..x30 are 0..30, sp is 31; the PC has no DWARF column and
// is passed to libdwfl apart.
constexpr UnwindRegisters make_aarch64() {
    int order[32] = {};
    for (int i = 0; i <= a64::lr; ++i) order[i] = a64::x0 + i;
    order[31] = a64::sp;
    return make_table("aarch64", order, 32, a64::pc, false, a64::sp);
}

constexpr UnwindRegisters kX86 = make_x86();
constexpr UnwindRegisters kAarch64 = make_aarch64();

// Copies live stack bytes as the kernel's PERF_SAMPLE_STACK_USER does: every byte from the
// stack pointer up, locals and padding alike. Not instrumented, and not memcpy (which
// AddressSanitizer intercepts and checks): under ASan the frames between hold poisoned
// redzones, and reading them is the point here, not a bug.
[[gnu::noinline]] __attribute__((no_sanitize("address"))) void copy_raw_stack(unsigned char* to,
                                                                              std::uint64_t from,
                                                                              std::size_t bytes) {
    const auto* source = reinterpret_cast<const volatile unsigned char*>(from);
    for (std::size_t i = 0; i < bytes; ++i) to[i] = source[i];
}

}  // namespace

const UnwindRegisters& unwind_registers_x86_64() {
    return kX86;
}

const UnwindRegisters& unwind_registers_aarch64() {
    return kAarch64;
}

const UnwindRegisters& unwind_registers() {
#if defined(__aarch64__)
    return kAarch64;
#else
    return kX86;
#endif
}

std::optional<InitialFrame> initial_frame(const UnwindRegisters& regs,
                                          std::span<const std::uint64_t> sampled) {
    if (sampled.size() < regs.sampled) return std::nullopt;
    InitialFrame frame;
    frame.dwarf.reserve(regs.dwarf_count);
    for (std::size_t i = 0; i < regs.dwarf_count; ++i)
        frame.dwarf.push_back(sampled[sampled_index(regs.sample_regs_user, regs.perf_of_dwarf[i])]);
    frame.pc = sampled[sampled_index(regs.sample_regs_user, regs.perf_pc)];
    frame.sp = sampled[sampled_index(regs.sample_regs_user, regs.perf_sp)];
    return frame;
}

std::vector<std::uint64_t> select_registers(std::uint64_t from_mask,
                                            std::span<const std::uint64_t> sampled,
                                            std::uint64_t to_mask) {
    std::vector<std::uint64_t> out;
    if (sampled.size() < static_cast<std::size_t>(std::popcount(from_mask))) return out;
    for (int reg = 0; reg < 64; ++reg) {
        const std::uint64_t bit = std::uint64_t{1} << reg;
        if (!(to_mask & bit)) continue;
        out.push_back((from_mask & bit) ? sampled[sampled_index(from_mask, reg)] : 0);
    }
    return out;
}

// The registers are stored by perf number into `by_perf` (33 words: x86-64 uses 0..23,
// aarch64 0..32) from inline asm, so what is captured is the registers as they are at that
// instruction, the compiler's own uses included, exactly what an interrupt would find there.
[[gnu::noinline]] std::size_t capture_user_stack(std::span<std::uint64_t> regs,
                                                 std::span<unsigned char> stack,
                                                 std::uint64_t stack_end) {
    const UnwindRegisters& table = unwind_registers();
    if (regs.size() < table.sampled) return 0;
    std::uint64_t by_perf[33] = {};
#if defined(__x86_64__)
    // perf: ax bx cx dx si di bp sp ip = 0..8 (8 bytes each), r8..r15 = 16..23 (offset 128).
    asm volatile(
        "movq %%rax, 0(%0)\n\t"
        "movq %%rbx, 8(%0)\n\t"
        "movq %%rcx, 16(%0)\n\t"
        "movq %%rdx, 24(%0)\n\t"
        "movq %%rsi, 32(%0)\n\t"
        "movq %%rdi, 40(%0)\n\t"
        "movq %%rbp, 48(%0)\n\t"
        "movq %%rsp, 56(%0)\n\t"
        "movq %%r8, 128(%0)\n\t"
        "movq %%r9, 136(%0)\n\t"
        "movq %%r10, 144(%0)\n\t"
        "movq %%r11, 152(%0)\n\t"
        "movq %%r12, 160(%0)\n\t"
        "movq %%r13, 168(%0)\n\t"
        "movq %%r14, 176(%0)\n\t"
        "movq %%r15, 184(%0)\n\t"
        "leaq 0(%%rip), %%rax\n\t"
        "movq %%rax, 64(%0)\n\t"
        :
        : "r"(by_perf)
        : "rax", "memory");
#elif defined(__aarch64__)
    // perf: x0..x30 = 0..30, sp = 31, pc = 32.
    asm volatile(
        "stp x0, x1, [%0, #0]\n\t"
        "stp x2, x3, [%0, #16]\n\t"
        "stp x4, x5, [%0, #32]\n\t"
        "stp x6, x7, [%0, #48]\n\t"
        "stp x8, x9, [%0, #64]\n\t"
        "stp x10, x11, [%0, #80]\n\t"
        "stp x12, x13, [%0, #96]\n\t"
        "stp x14, x15, [%0, #112]\n\t"
        "stp x16, x17, [%0, #128]\n\t"
        "stp x18, x19, [%0, #144]\n\t"
        "stp x20, x21, [%0, #160]\n\t"
        "stp x22, x23, [%0, #176]\n\t"
        "stp x24, x25, [%0, #192]\n\t"
        "stp x26, x27, [%0, #208]\n\t"
        "stp x28, x29, [%0, #224]\n\t"
        "str x30, [%0, #240]\n\t"
        "mov x16, sp\n\t"
        "str x16, [%0, #248]\n\t"
        "adr x16, .\n\t"
        "str x16, [%0, #256]\n\t"
        :
        : "r"(by_perf)
        : "x16", "memory");
#endif
    std::size_t n = 0;
    for (int reg = 0; reg < 64; ++reg)
        if (table.sample_regs_user & (std::uint64_t{1} << reg)) regs[n++] = by_perf[reg];
    const std::uint64_t sp = by_perf[table.perf_sp];
    if (sp == 0 || stack_end <= sp) return 0;
    // Everything from the captured stack pointer up is this function's frame and its callers';
    // the copy's own call (if the compiler makes one) writes below it.
    const std::size_t bytes =
        static_cast<std::size_t>(std::min<std::uint64_t>(stack.size(), stack_end - sp));
    copy_raw_stack(stack.data(), sp, bytes);
    return bytes;
}

}  // namespace lockprof::arch
