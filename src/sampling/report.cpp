#include "lockprof/sampling/report.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/sampling/stacks.hpp"
#include "lockprof/symbols/resolver.hpp"

namespace lockprof::sampling {

Attribution attribute(const workload::RunResult& run, const AnnotateOptions& options) {
    Attribution a;
    if (!run.sampling) return a;
    const symbols::SymbolResolver resolver(run.sampling->modules);
    std::vector<std::string> absent;
    for (const auto& path : resolver.changed_modules()) {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) {
            absent.push_back(path);
            continue;
        }
        a.warnings.push_back(fmt::format(
            "'{}' changed since the run (build id differs): annotation may be wrong; re-run "
            "the measurement with this build",
            path));
    }
    // Annotating on another machine than the one that ran: one line for all missing files.
    if (!absent.empty())
        a.warnings.push_back(fmt::format(
            "{} recorded file{} not on this machine ({}): samples in {} stay unresolved; copy "
            "{} here and pass --binary COPY for each",
            absent.size(), absent.size() == 1 ? " is" : "s are", fmt::join(absent, ", "),
            absent.size() == 1 ? "it" : "them", absent.size() == 1 ? "it" : "them"));
    a.cells = annotate(run, resolver, options);
    std::vector<std::string> missing;
    for (const auto& cell : a.cells)
        for (const auto& objdump : cell.missing_objdump)
            if (std::find(missing.begin(), missing.end(), objdump) == missing.end())
                missing.push_back(objdump);
    for (const auto& objdump : missing) a.warnings.push_back(missing_objdump_warning(objdump));
    return a;
}

std::vector<analysis::CellEvidence> gather_evidence(
    const workload::RunResult& run, const std::vector<analysis::CellSummary>& summaries,
    const Attribution* attribution) {
    auto evidence = analysis::evidence_from(summaries);
    if (attribution && run.sampling)
        for (std::size_t i = 0; i < evidence.size() && i < attribution->cells.size(); ++i)
            add_instruction_evidence(attribution->cells[i],
                                     run.sampling->skid == workload::Skid::zero, evidence[i]);
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
    // Mnemonics of the annotated functions' instructions, for instruction leaves; cells share
    // the binary, so one map serves them all.
    MnemonicMap mnemonics;
    if (instruction_leaf)
        for (const auto& cell : attribution.cells) mnemonics.merge(mnemonics_of(cell.functions));
    StackFolder folder(resolver, instruction_leaf, &mnemonics);
    for (const auto& cell : run.cells) {
        const std::string root = fmt::format("{}/{}t", cell.lock, cell.threads);
        for (const auto& trial : cell.trials)
            for (const auto& thread : trial.threads)
                for (const auto& s : thread.samples) stacks.add(folder.frames(root, s), s.weight);
    }
    return stacks;
}

exporting::SvgOptions flamegraph_options(const workload::RunResult& run) {
    const std::string event = run.sampling ? run.sampling->event : "";
    return exporting::sampled_flamegraph_options(
        "lockprof", fmt::format("{}", fmt::join(run.spec.locks, ", ")),
        fmt::format("{} sampler, {}", run.sampling ? run.sampling->sampler : "", event), event);
}

}  // namespace lockprof::sampling
