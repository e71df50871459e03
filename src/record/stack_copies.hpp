// --call-graph dwarf during a recording: the stack copies of samples and of --spin entries held
// until they are unwound into call stacks. Copies of processes whose mappings are known are
// unwound once those held pass a budget, rather than all at the end; the rest wait until the
// end, when unknown processes give empty stacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "lockprof/measure/data.hpp"
#include "lockprof/record/spin.hpp"
#include "lockprof/symbols/unwinder.hpp"

namespace lockprof::record {

// 64 MiB is ~8,000 samples of 8 KiB: 8 s of one busy thread at the default rate.
inline constexpr std::size_t kHeldStackBytes = std::size_t{64} << 20;

class StackCopies {
  public:
    // A process's mappings as last read; nullptr when it was never seen alive.
    using ModulesOf = std::function<const std::vector<measure::MappedModule>*(std::uint32_t)>;

    // Unwinds `samples` and the kept stacks of `spin`'s hits in place.
    StackCopies(std::vector<measure::RawSample>& samples, std::optional<SpinRecording>& spin,
                ModulesOf modules_of, std::size_t budget = kHeldStackBytes);

    // A sample's copy was added to `samples`.
    void hold_sample(std::size_t bytes) { held_bytes_ += bytes; }
    // An entry's stack was kept as spin hit `hit`.
    void hold_spin_stack(std::size_t hit, std::size_t bytes);
    // Kept spin hit `hit` (of `old_bytes` of stack, unwound already or not) is replaced by a
    // new stack of `new_bytes`.
    void replace_spin_stack(std::size_t hit, std::size_t old_bytes, std::size_t new_bytes,
                            bool was_unwound);

    // Unwinds the copies held so far: those of processes with known mappings, or with `all`
    // (at the end) every one.
    void unwind(bool all);
    // Unwinds when the copies held pass the budget; those of processes not known yet stay
    // held, and the next unwinding waits until another budget's worth has come in.
    void unwind_if_over_budget();

    std::size_t held_bytes() const { return held_bytes_; }
    const symbols::UnwindStats& sample_stats() const { return unwinder_.stats(); }
    const symbols::UnwindStats& spin_stats() const { return spin_unwinder_.stats(); }

  private:
    std::size_t unwind_samples(bool all);
    std::size_t unwind_spin_stacks(bool all);

    std::vector<measure::RawSample>& samples_;
    std::optional<SpinRecording>& spin_;
    ModulesOf modules_of_;
    const std::size_t budget_;
    symbols::UnwinderCache unwinder_, spin_unwinder_;
    std::size_t held_bytes_ = 0;
    std::size_t threshold_;
    std::size_t first_unwound_ = 0;                 // samples before it are unwound
    std::vector<std::size_t> pending_spin_stacks_;  // kept spin hits not unwound yet
};

}  // namespace lockprof::record
