#include "lockprof/attribution/run_attribution.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/common/number_format.hpp"

namespace lockprof::attribution {

RunAttribution attribute(const workload::RunResult& run, const AnnotateOptions& options) {
    RunAttribution a;
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
    a.cells = annotate_cells(run, resolver, options);
    std::vector<std::string> missing;
    for (const auto& cell : a.cells)
        for (const auto& objdump : cell.missing_objdump)
            if (std::find(missing.begin(), missing.end(), objdump) == missing.end())
                missing.push_back(objdump);
    for (const auto& objdump : missing) a.warnings.push_back(missing_objdump_warning(objdump));
    if (std::any_of(a.cells.begin(), a.cells.end(),
                    [](const auto& cell) { return cell.phases_without_lines; }))
        a.notes.push_back(phases_without_lines_note());
    return a;
}

std::vector<CellAnnotation> annotate_cells(const workload::RunResult& run,
                                           const symbols::SymbolResolver& resolver,
                                           const AnnotateOptions& options) {
    Annotator annotator(resolver, options);
    std::vector<CellAnnotation> out;
    for (const auto& cell : run.cells) {
        std::vector<const measure::RawSample*> samples;
        std::uint64_t lost = 0;
        for (const auto& trial : cell.trials)
            for (const auto& thread : trial.threads) {
                lost += thread.samples_lost;
                for (const auto& s : thread.samples) samples.push_back(&s);
            }
        CellAnnotation a = annotator.annotate(samples, lost);
        a.lock = cell.lock;
        a.flavour = cell.flavour;
        a.threads = cell.threads;
        out.push_back(std::move(a));
    }
    return out;
}

exporting::FoldedStacks folded_stacks(const workload::RunResult& run,
                                      const RunAttribution& attribution, Leaf leaf) {
    exporting::FoldedStacks stacks;
    if (!run.sampling) return stacks;
    const symbols::SymbolResolver resolver(run.sampling->modules);
    // Mnemonics and loop phases of the annotated functions' instructions, for instruction and
    // phase leaves; cells share the binary, so one map of mnemonics serves them all. Phases
    // are each cell's own first: without -g the acquire loop is the one around the cell's
    // hottest instruction (acquire_loop.hpp), which another cell (1 thread) may not share.
    MnemonicMap mnemonics;
    std::vector<PhaseMap> own(attribution.cells.size());
    PhaseMap every_cell;
    if (leaf != Leaf::function)
        for (std::size_t i = 0; i < attribution.cells.size(); ++i) {
            mnemonics.merge(mnemonics_of(attribution.cells[i].functions));
            own[i] = phases_of(attribution.cells[i].functions);
            every_cell.insert(own[i].begin(), own[i].end());
        }
    for (std::size_t i = 0; i < run.cells.size(); ++i) {
        const auto& cell = run.cells[i];
        PhaseMap phases = i < own.size() ? std::move(own[i]) : PhaseMap{};
        phases.insert(every_cell.begin(), every_cell.end());  // keeps the cell's own
        StackFolder folder(resolver, leaf, &mnemonics, &phases);
        const std::string root = fmt::format("{}/{}t", cell.lock, cell.threads);
        for (const auto& trial : cell.trials)
            for (const auto& thread : trial.threads)
                for (const auto& s : thread.samples) stacks.add(folder.frames(root, s), s.weight);
    }
    return stacks;
}

std::vector<std::string> loss_notes(const workload::RunResult& run) {
    std::vector<std::string> notes;
    for (const auto& cell : run.cells) {
        std::uint64_t kept = 0, lost = 0, unsampled = 0, threads = 0;
        for (const auto& trial : cell.trials)
            for (const auto& thread : trial.threads) {
                ++threads;
                kept += thread.samples.size();
                lost += thread.samples_lost;
                unsampled += thread.sampled ? 0 : 1;
            }
        if (lost)
            notes.push_back(
                fmt::format("sampling: {} with {} lost {} of {} samples (buffer full); shares are "
                            "from the rest. Lower --sample-freq",
                            cell.lock, threads_text(cell.threads), lost, kept + lost));
        if (unsampled)
            notes.push_back(
                fmt::format("sampling: {} with {}: {} of {} thread runs had no sampler; see the "
                            "note on why",
                            cell.lock, threads_text(cell.threads), unsampled, threads));
    }
    return notes;
}

exporting::SvgOptions flamegraph_options(const workload::RunResult& run) {
    const std::string event = run.sampling ? run.sampling->event : "";
    return exporting::sampled_flamegraph_options(
        "lockprof", fmt::format("{}", fmt::join(run.spec.locks, ", ")),
        fmt::format("{} sampler, {}", run.sampling ? run.sampling->sampler : "", event), event);
}

bool has_raw_samples(const workload::RunResult& run) {
    for (const auto& cell : run.cells)
        for (const auto& trial : cell.trials)
            for (const auto& thread : trial.threads)
                if (!thread.samples.empty()) return true;
    return false;
}

}  // namespace lockprof::attribution
