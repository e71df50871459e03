// Where a register is in a perf sample's user registers: the kernel writes the registers a
// sample_regs_user mask selects in ascending perf register number, so a register's index is the
// number of mask bits below its own. Private to arch/ (call_abi.cpp, unwind_registers.cpp).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace lockprof::arch {

constexpr std::size_t sampled_index(std::uint64_t mask, int reg) {
    return static_cast<std::size_t>(std::popcount(mask & ((std::uint64_t{1} << reg) - 1)));
}

}  // namespace lockprof::arch
