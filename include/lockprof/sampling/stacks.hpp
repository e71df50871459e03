// Folded-stack frames for raw samples, shared by sampled runs (analysis::folded_stacks) and
// `lockprof record` (record::folded_stacks): the same names for the same code, resolved once per
// address.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lockprof/sampling/annotate.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/profiling/data.hpp"

namespace lockprof::sampling {

// (module path, file address) -> mnemonic, for the instructions of annotated functions.
using MnemonicMap = std::map<std::pair<std::string, std::uint64_t>, std::string>;
MnemonicMap mnemonics_of(const std::vector<HotFunction>& functions);

// A function frame's name: the short name ("TasLock<(Delay)1>::lock"); "[postgres]", the file
// name in brackets, for code of a module no symbol covers (a stripped binary's static
// functions; the convention of perf's stackcollapse); "[vdso]", "[kernel]" (kernel addresses a
// sample skidded into); "[unknown]" outside every mapped file (JIT code, anonymous memory).
std::string frame_name(const symbols::Location& location);

class StackFolder {
  public:
    // With instruction_leaf every stack ends in the sampled instruction, "measured_loop<...>+0x58
    // xchg" (the mnemonic when `mnemonics` has the address). `resolver` and `mnemonics` must
    // outlive the folder.
    StackFolder(const symbols::SymbolResolver& resolver, bool instruction_leaf,
                const MnemonicMap* mnemonics = nullptr);

    // `root` first, then the callers outermost first, the sampled function, and the
    // instruction leaf.
    std::vector<std::string> frames(std::string root, const profiling::RawSample& sample);

  private:
    const std::string& function(std::uint64_t address);
    std::string leaf(std::uint64_t ip) const;

    const symbols::SymbolResolver& resolver_;
    bool instruction_leaf_;
    const MnemonicMap* mnemonics_;
    std::unordered_map<std::uint64_t, std::string> names_;
};

}  // namespace lockprof::sampling
