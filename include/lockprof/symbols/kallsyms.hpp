// Kernel symbols from kallsyms text (/proc/kallsyms, or the copy `perf record` keeps in its
// build-id cache, ~/.debug/[kernel.kallsyms]/BUILD_ID/kallsyms), chosen and sized as perf
// does, so a kernel address gets the name `perf script` prints for it: text, weak and data
// symbols (T, W, D, B in either case), each ending where the next begins (the last of the
// kernel image or of a module one page later); of several at one address the last listed,
// since perf sizes before it drops aliases and an empty symbol loses to a sized one (between
// two empty or two sized: the global over the local, fewer leading underscores, the longer
// name).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lockprof::symbols {

struct KernelSymbol {
    std::uint64_t start = 0, end = 0;
    std::string name;
    std::string module;  // "" for the kernel image, else the module ("nf_tables")
};

class KernelSymbols {
  public:
    // Lines "ffffffff81000000 T _text" and "ffffffffc0a00000 t foo\t[mod]"; symbols at address
    // 0 (kptr_restrict hides the addresses) are left out.
    static KernelSymbols parse(std::string_view text);

    bool empty() const { return symbols_.empty(); }
    std::size_t size() const { return symbols_.size(); }
    // The symbol holding `address`, nullptr when none does.
    const KernelSymbol* find(std::uint64_t address) const;

  private:
    std::vector<KernelSymbol> symbols_;  // by start, no two at one address
};

}  // namespace lockprof::symbols
