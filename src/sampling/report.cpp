#include "lockprof/sampling/report.hpp"

#include <map>

#include <fmt/format.h>

#include "lockprof/symbols/resolver.hpp"

namespace lockprof::sampling {

Attribution attribute(const workload::RunResult& run, const AnnotateOptions& options) {
    Attribution a;
    if (!run.sampling) return a;
    const symbols::SymbolResolver resolver(run.sampling->modules);
    for (const auto& path : resolver.changed_modules())
        a.warnings.push_back(fmt::format(
            "'{}' changed since the run (build id differs): annotation may be wrong; re-run "
            "the measurement with this build",
            path));
    a.cells = annotate(run, resolver, options);
    return a;
}

std::vector<analysis::CellEvidence> gather_evidence(
    const workload::RunResult& run, const std::vector<analysis::CellSummary>& summaries,
    const Attribution* attribution) {
    auto evidence = analysis::evidence_from(summaries);
    if (attribution && run.sampling)
        for (std::size_t i = 0; i < evidence.size() && i < attribution->cells.size(); ++i)
            add_instruction_evidence(attribution->cells[i], run.sampling->precise_ip > 0,
                                     evidence[i]);
    return evidence;
}

std::string render_annotations(const workload::RunResult& run, const Attribution& attribution,
                               unsigned top_functions) {
    if (!run.sampling || top_functions == 0) return "";
    std::string out;
    for (const auto& w : attribution.warnings) out += fmt::format("warning: {}\n", w);
    for (const auto& cell : attribution.cells)
        out += "\n" + render_annotation(cell, *run.sampling, top_functions);
    return out;
}

exporting::FoldedStacks folded_stacks(const workload::RunResult& run,
                                      const Attribution& attribution, bool instruction_leaf) {
    exporting::FoldedStacks stacks;
    if (!run.sampling) return stacks;
    const symbols::SymbolResolver resolver(run.sampling->modules);
    auto frame = [&](std::uint64_t address) {
        const auto loc = resolver.resolve(address);
        return loc.has_symbol() ? symbols::short_name(loc.symbol)
                                : fmt::format("[unknown {:#x}]", address);
    };
    for (std::size_t c = 0; c < run.cells.size(); ++c) {
        const auto& cell = run.cells[c];
        // Mnemonics of the annotated functions' instructions, for instruction leaves.
        std::map<std::uint64_t, std::string> mnemonic_at;
        if (instruction_leaf && c < attribution.cells.size())
            for (const auto& f : attribution.cells[c].functions)
                for (const auto& i : f.instructions)
                    mnemonic_at[i.runtime_address] = i.instruction.mnemonic;
        const std::string root = fmt::format("{}/{}t", cell.lock, cell.threads);
        for (const auto& trial : cell.trials)
            for (const auto& thread : trial.threads)
                for (const auto& s : thread.samples) {
                    std::vector<std::string> frames{root};
                    // Return addresses point after the call; -1 lands inside it.
                    for (auto it = s.callchain.rbegin(); it != s.callchain.rend(); ++it)
                        frames.push_back(frame(*it - 1));
                    frames.push_back(frame(s.ip));
                    if (instruction_leaf) {
                        const auto loc = resolver.resolve(s.ip);
                        std::string leaf =
                            loc.has_symbol()
                                ? fmt::format("{}+{:#x}", symbols::short_name(loc.symbol),
                                              loc.offset)
                                : fmt::format("{:#x}", s.ip);
                        if (auto m = mnemonic_at.find(s.ip); m != mnemonic_at.end())
                            leaf += " " + m->second;
                        frames.push_back(std::move(leaf));
                    }
                    stacks.add(frames, s.weight);
                }
    }
    return stacks;
}

}  // namespace lockprof::sampling
