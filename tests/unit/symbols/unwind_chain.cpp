// See unwind_chain.hpp. Each function does something after its call, so the compiler makes a
// real call, not a tail jump that would take the caller's frame off the stack.
#include "unit/symbols/unwind_chain.hpp"

#include <pthread.h>

#include "lockprof/arch/unwind_registers.hpp"

namespace lockprof::test {
namespace {

// The highest address of the calling thread's stack (exclusive).
std::uint64_t stack_end() {
    pthread_attr_t attr;
    void* base = nullptr;
    std::size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
    pthread_attr_getstack(&attr, &base, &size);
    pthread_attr_destroy(&attr);
    return reinterpret_cast<std::uint64_t>(base) + size;
}

}  // namespace

extern "C" [[gnu::noinline]] int unwind_chain_inner(CapturedStack& out) {
    out.regs.assign(arch::unwind_registers().sampled, 0);
    const std::uint64_t end = stack_end();
    const std::size_t copied = arch::capture_user_stack(out.regs, out.stack, end);
    out.stack.resize(copied);
    asm volatile("" ::: "memory");
    return static_cast<int>(copied % 7) + 1;
}

extern "C" [[gnu::noinline]] int unwind_chain_middle(CapturedStack& out) {
    const int r = unwind_chain_inner(out);
    asm volatile("" ::: "memory");
    return r * 3 + 1;
}

extern "C" [[gnu::noinline]] int unwind_chain_outer(CapturedStack& out) {
    const int r = unwind_chain_middle(out);
    asm volatile("" ::: "memory");
    return r * 5 + 2;
}

}  // namespace lockprof::test
