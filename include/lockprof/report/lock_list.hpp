// What `lockprof list-locks` prints: the table of every runnable lock with its delay policies
// and description, and, with --disasm, each lock's acquire path instruction by instruction
// (cli/list_locks_command.cpp finds the code and prints these).
#pragma once

#include <string>
#include <vector>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/workload/runnable_locks.hpp"

namespace lockprof::report {

// The table of `locks` (name, delays with the default first, description and what it needs),
// then the notes below it.
std::string render_lock_list(const std::vector<workload::RunnableLock>& locks);

// A lock's out-of-line acquire path (workload::acquire_probe) as disassembled.
struct AcquireCode {
    std::string symbol;  // demangled
    std::vector<symbols::Instruction> instructions;
    // The lock's own functions the acquire path calls or jumps to, kept out of line by the
    // compiler or the lock (qspinlock's slow path, event-mutex's spin-then-wait): where the
    // contended acquire's atomics are. Each once, in the order first reached.
    std::vector<symbols::FunctionCode> callees;
};

// `lock`'s acquire path with `delay`: a heading with its instruction count and atomics, then
// each function's instructions, atomics starred, and an empty line.
std::string render_acquire_code(const workload::RunnableLock& lock, arch::Delay delay,
                                const AcquireCode& code);

// What --disasm says of a lock that does not take `delay`.
std::string render_delay_not_accepted(const workload::RunnableLock& lock, arch::Delay delay);

}  // namespace lockprof::report
