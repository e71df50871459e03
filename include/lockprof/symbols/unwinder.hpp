// Call stacks from a sample's user registers and its copy of the user stack (`--call-graph
// dwarf`: PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER), unwound with elfutils libdwfl from
// the call frame information of the process's files (.eh_frame, which stripped binaries and
// code built without frame pointers keep, or .debug_frame), as perf's unwind-libdw does. Where
// a file has no CFI for an address, libdwfl's architecture backend follows the frame pointer.
//
// An Unwinder is built once per process image (its file mappings) and unwinds any number of
// samples: libdwfl's modules, their ELF files and their parsed CFI are kept between samples.
// Every read is bounded: registers come from the sample, memory from its stack copy or, outside
// it, from the files mapped there; a frame outside every file ends the stack, and no stack is
// longer than a fixed number of frames. A sample is outside input: garbage registers or stack
// bytes give a short or empty chain, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lockprof/arch/unwind_registers.hpp"
#include "lockprof/measure/data.hpp"

namespace lockprof::symbols {

// The deepest stack kept, in callers: perf_event_max_stack's default, as the kernel's
// frame-pointer chains.
inline constexpr std::size_t kMaxUnwoundFrames = 127;

class Unwinder {
  public:
    // Unwinds samples of a process with these mappings (/proc/PID/maps form; `registers`: the
    // architecture the samples were taken on, the host's by default).
    explicit Unwinder(const std::vector<measure::MappedModule>& modules,
                      const arch::UnwindRegisters& registers = arch::unwind_registers());
    ~Unwinder();
    Unwinder(Unwinder&&) noexcept;
    Unwinder& operator=(Unwinder&&) noexcept;

    // The return addresses above the sampled frame, innermost caller first (what
    // RawSample::callchain holds; the sampled PC itself is not repeated). `sampled_registers`:
    // the sample's user registers (registers.sample_regs_user, ascending perf number);
    // `stack`: its copy of the user stack from the sampled stack pointer up. Empty when the
    // registers are short or not even one caller is found. Not thread-safe (one libdwfl state).
    std::vector<std::uint64_t> unwind(std::span<const std::uint64_t> sampled_registers,
                                      std::span<const unsigned char> stack,
                                      std::size_t max_frames = kMaxUnwoundFrames) const;

    // Why nothing can be unwound with these mappings ("" when samples can be): no file could
    // be opened to tell libdwfl the architecture.
    const std::string& problem() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// What unwinding a recording's samples did.
struct UnwindStats {
    std::uint64_t stacks = 0;           // samples unwound
    std::uint64_t without_callers = 0;  // of them, those where not one caller was found
    std::uint64_t frames = 0;           // callers found, over all of them
    double seconds = 0;                 // time spent unwinding
};

// Unwinders for the samples of many processes, one per process image: processes that map the
// same files at the same addresses (PostgreSQL's forked backends) share one, so their files
// are opened and their CFI parsed once. Not thread-safe.
class UnwinderCache {
  public:
    explicit UnwinderCache(const arch::UnwindRegisters& registers = arch::unwind_registers());
    ~UnwinderCache();

    // Unwinds `sample`'s stack copy (RawSample::user_regs, user_stack) into its call chain,
    // after the kernel's frames already there (kernel-mode samples with --kernel), and frees
    // the copy. `modules`: the mappings of the process it came from. A sample without a copy
    // is left as it is.
    void unwind(measure::RawSample& sample, const std::vector<measure::MappedModule>& modules);
    // The same for registers and a stack copy held elsewhere (a uprobe's entry record).
    std::vector<std::uint64_t> unwind(std::span<const std::uint64_t> sampled_registers,
                                      std::span<const unsigned char> stack,
                                      const std::vector<measure::MappedModule>& modules);

    const UnwindStats& stats() const { return stats_; }

  private:
    const Unwinder& unwinder_for(const std::vector<measure::MappedModule>& modules);

    const arch::UnwindRegisters& registers_;
    std::map<std::string, std::unique_ptr<Unwinder>> unwinders_;  // by image signature
    UnwindStats stats_;
};

}  // namespace lockprof::symbols
