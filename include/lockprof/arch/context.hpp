// Reading an interrupted context: the program counter and frame pointer a signal handler's
// ucontext holds, and a frame-pointer walk of the interrupted stack. Used by the timer-signal
// sampler; the register names differ per architecture, so they live here and nowhere else.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lockprof::arch {

// The interrupted program counter of `ucontext` (the third argument of an SA_SIGINFO handler).
// Async-signal-safe.
std::uintptr_t pc_from_ucontext(const void* ucontext);

// The interrupted frame pointer (rbp / x29). Async-signal-safe.
std::uintptr_t frame_pointer_from_ucontext(const void* ucontext);

// Follows the frame-pointer chain from `frame_pointer`, writing up to `max_frames` return
// addresses (innermost caller first) to `out`; returns how many. Only reads frame records that
// lie inside [stack_low, stack_high) and move strictly towards stack_high, so a garbage frame
// pointer (a function interrupted in its prologue, code built without frame pointers) ends the
// walk instead of faulting. Async-signal-safe: no allocation, no locks.
std::size_t walk_frame_pointers(std::uintptr_t frame_pointer, std::uintptr_t stack_low,
                                std::uintptr_t stack_high, std::uint64_t* out,
                                std::size_t max_frames);

}  // namespace lockprof::arch
