// The user registers a DWARF unwinder starts from (`--call-graph dwarf`): which ones to ask the
// kernel for in perf_event_attr::sample_regs_user, and how the kernel's numbering
// (asm/perf_regs.h: PERF_REG_X86_*, PERF_REG_ARM64_*) maps to the DWARF register numbers that
// .eh_frame's rules and libdwfl's dwfl_thread_state_registers() use. Both numberings are
// per architecture, so they live here; both tables are defined on every host so tests check
// the one the host does not run too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace lockprof::arch {

struct UnwindRegisters {
    std::string_view name;           // "x86-64", "aarch64"
    std::uint64_t sample_regs_user;  // mask of perf register numbers to sample
    std::size_t sampled;             // how many the mask selects (the sample's array size)
    // DWARF registers 0..dwarf_count-1, in order: each one's perf register number.
    std::size_t dwarf_count;
    int perf_of_dwarf[32];
    int perf_pc;  // the program counter's perf number
    // True where the PC is one of the DWARF registers above (x86-64: 16, the return address
    // column); false where it is set apart (aarch64: dwfl_thread_state_register_pc).
    bool pc_is_dwarf_register;
    int perf_sp;  // the stack pointer's perf number
};

const UnwindRegisters& unwind_registers_x86_64();
const UnwindRegisters& unwind_registers_aarch64();
// The table of the machine lockprof was built for.
const UnwindRegisters& unwind_registers();

// What an unwinder starts from, read from a sample's registers (`sampled`: the values the
// kernel wrote for sample_regs_user, in ascending perf register number). nullopt when the
// sample holds fewer registers than the mask selects (PERF_SAMPLE_REGS_ABI_NONE: a kernel
// thread, or an exited task).
struct InitialFrame {
    std::vector<std::uint64_t> dwarf;  // DWARF registers 0..dwarf_count-1
    std::uint64_t pc = 0;
    std::uint64_t sp = 0;
};
std::optional<InitialFrame> initial_frame(const UnwindRegisters& regs,
                                          std::span<const std::uint64_t> sampled);

// The registers of `to_mask` picked out of a sample's registers taken with `from_mask` (a
// superset; both in ascending perf register number): a uprobe entry sampled with the unwind
// mask read through the call ABI's. Registers `from_mask` lacks are 0; empty when `sampled` is
// shorter than `from_mask` selects.
std::vector<std::uint64_t> select_registers(std::uint64_t from_mask,
                                            std::span<const std::uint64_t> sampled,
                                            std::uint64_t to_mask);

// What a sample taken inside this function would hold, for tests of the unwinder without
// perf_event: `regs` (at least unwind_registers().sampled entries) gets the calling thread's
// registers of unwind_registers()'s mask, in the kernel's order, as of an instruction in this
// function, and `stack` a copy of the thread's stack from that instruction's stack pointer up,
// ending before `stack_end` (the stack's highest address, exclusive) if that comes first.
// Returns the bytes copied (0 when `regs` is too short). Never inlined: the captured PC is in
// a function of its own, its callers' frames above it on the copied stack, as a sampled
// thread's are.
std::size_t capture_user_stack(std::span<std::uint64_t> regs, std::span<unsigned char> stack,
                               std::uint64_t stack_end);

}  // namespace lockprof::arch
