#include "lockprof/arch/context.hpp"

#include <ucontext.h>

#include "lockprof/arch/cpu.hpp"

namespace lockprof::arch {

std::uintptr_t pc_from_ucontext(const void* ucontext) {
    const auto* context = static_cast<const ucontext_t*>(ucontext);
#if defined(LOCKPROF_ARCH_X86)
    return static_cast<std::uintptr_t>(context->uc_mcontext.gregs[REG_RIP]);
#else
    return static_cast<std::uintptr_t>(context->uc_mcontext.pc);
#endif
}

std::uintptr_t frame_pointer_from_ucontext(const void* ucontext) {
    const auto* context = static_cast<const ucontext_t*>(ucontext);
#if defined(LOCKPROF_ARCH_X86)
    return static_cast<std::uintptr_t>(context->uc_mcontext.gregs[REG_RBP]);
#else
    return static_cast<std::uintptr_t>(context->uc_mcontext.regs[29]);
#endif
}

std::size_t walk_frame_pointers(std::uintptr_t frame_pointer, std::uintptr_t stack_low,
                                std::uintptr_t stack_high, std::uint64_t* out,
                                std::size_t max_frames) {
    // Both ABIs keep the same frame record: [fp] = caller's fp, [fp + 8] = return address
    // (x86-64 push rbp after call; AAPCS64 stp x29, x30).
    std::size_t n = 0;
    std::uintptr_t fp = frame_pointer;
    while (n < max_frames) {
        if (fp < stack_low || fp > stack_high - 2 * sizeof(std::uintptr_t) ||
            fp % sizeof(std::uintptr_t) != 0)
            break;
        const auto* record = reinterpret_cast<const std::uintptr_t*>(fp);
        const std::uintptr_t caller_fp = record[0];
        const std::uintptr_t return_address = record[1];
        if (return_address == 0) break;
        out[n++] = return_address;
        if (caller_fp <= fp) break;  // stacks grow down: callers' frames lie above
        fp = caller_fp;
    }
    return n;
}

}  // namespace lockprof::arch
