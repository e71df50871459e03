// A known chain of calls for the unwinder's tests: unwind_chain_outer() calls
// unwind_chain_middle(), which calls unwind_chain_inner(), which captures the registers and
// the stack (arch::capture_user_stack) as a sample taken there would hold them.
// unwind_chain.cpp is built with -O2 -fomit-frame-pointer (tests/CMakeLists.txt): no frame
// pointer links these frames, only their call frame information does.
#pragma once

#include <cstdint>
#include <vector>

namespace lockprof::test {

struct CapturedStack {
    std::vector<std::uint64_t> regs;
    std::vector<unsigned char> stack;
};

// Fills `out` (its stack copy sized by the caller) from inside unwind_chain_inner.
extern "C" int unwind_chain_outer(CapturedStack& out);

}  // namespace lockprof::test
