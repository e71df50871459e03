// Folded-stack frames for raw samples, shared by sampled runs (attribution::folded_stacks) and
// `lockprof record` (record::folded_stacks): the same names for the same code, resolved once per
// address.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lockprof/attribution/annotate.hpp"
#include "lockprof/attribution/phases.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/measure/data.hpp"

namespace lockprof::attribution {

// (module path, file address) -> mnemonic, for the instructions of annotated functions.
using MnemonicMap = std::map<std::pair<std::string, std::uint64_t>, std::string>;
MnemonicMap mnemonics_of(const std::vector<HotFunction>& functions);

// The phases of the annotated instructions of measured loops (phases.hpp).
PhaseMap phases_of(const std::vector<HotFunction>& functions);

// What a stack ends in (--leaf):
//   function     the sampled function;
//   phase        in lockprof's measured loop, the loop phase under the loop's frame and the
//                sampled instruction under it, without the function it is in, which is two
//                frames up ("measured_loop<...>;acquire loop;+0x58 xchg"); elsewhere the
//                function. A call the loop
//                makes (pthread_mutex_lock) sits under the phase of its call site;
//   instruction  every stack ends in the sampled instruction, loop phases as with phase.
enum class Leaf { function, phase, instruction };

// A function frame's name: the short name ("TasLock<(Delay)1>::lock"); "[postgres]", the file
// name in brackets, for code of a module no symbol covers (a stripped binary's static
// functions; the convention of perf's stackcollapse); "[vdso]", "[kernel]" (kernel addresses a
// sample skidded into); "[unknown]" outside every mapped file (JIT code, anonymous memory).
std::string frame_name(const symbols::Location& location);

class StackFolder {
  public:
    // `leaf` as above; an instruction leaf reads "measured_loop<...>+0x58 xchg" (the mnemonic
    // when `mnemonics` has the address). `phases` gives the acquire loop's instructions (the
    // annotation marked them); without it, or for a measured loop it does not cover, the
    // phase comes from the inline chain alone and the acquire loop is not told apart from the
    // rest of lock(). A build without -g has no inline chains: its loop's phases (acquire loop,
    // rest of loop) come from `phases` only. `resolver`, `mnemonics` and `phases` must outlive
    // the folder.
    StackFolder(const symbols::SymbolResolver& resolver, Leaf leaf,
                const MnemonicMap* mnemonics = nullptr, const PhaseMap* phases = nullptr);

    // `root` first, then the callers outermost first, the sampled function, and the leaves
    // `leaf` asks for.
    std::vector<std::string> frames(std::string root, const measure::RawSample& sample);

  private:
    struct Frame {
        std::string name;
        LoopPhase phase = LoopPhase::none;  // none outside measured loops or with Leaf::function
    };
    const Frame& frame(std::uint64_t address);
    std::string leaf(std::uint64_t ip, bool with_function) const;

    const symbols::SymbolResolver& resolver_;
    Leaf leaf_;
    const MnemonicMap* mnemonics_;
    const PhaseMap* phases_;
    std::unordered_map<std::uint64_t, Frame> frames_;
};

}  // namespace lockprof::attribution
