// `objdump -d -w` output (src/symbols/disassembler.cpp, parse_objdump), which annotate, the HTML
// report and `list-locks --disasm` read: x86-64 AT&T and aarch64 listings, and whatever an
// objdump of another version or a foreign one prints. Then what callers ask of each instruction.
#include "fuzz_support.hpp"
#include "lockprof/symbols/disassembler.hpp"

using namespace lockprof;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::refusals_only([&] {
        for (const auto& insn : symbols::parse_objdump(fuzz::text(data, size))) {
            fuzz::check(!insn.mnemonic.empty(), "every instruction has a mnemonic");
            (void)insn.is_atomic();
            (void)insn.is_backward_branch();
            (void)insn.text();
        }
    });
    return 0;
}
