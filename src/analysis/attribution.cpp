#include "lockprof/analysis/attribution.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/sampling/stacks.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/common/number_format.hpp"

namespace lockprof::analysis {

using sampling::CellAnnotation;

Attribution attribute(const workload::RunResult& run, const sampling::AnnotateOptions& options) {
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
    for (const auto& objdump : missing)
        a.warnings.push_back(sampling::missing_objdump_warning(objdump));
    if (std::any_of(a.cells.begin(), a.cells.end(),
                    [](const auto& cell) { return cell.phases_without_lines; }))
        a.notes.push_back(sampling::phases_without_lines_note());
    return a;
}

std::vector<CellEvidence> gather_evidence(const workload::RunResult& run,
                                          const std::vector<CellSummary>& summaries,
                                          const Attribution* attribution) {
    auto evidence = evidence_from(summaries);
    if (attribution && run.sampling)
        for (std::size_t i = 0; i < evidence.size() && i < attribution->cells.size(); ++i)
            add_instruction_evidence(attribution->cells[i],
                                     run.sampling->skid == profiling::Skid::zero, evidence[i]);
    return evidence;
}

exporting::FoldedStacks folded_stacks(const workload::RunResult& run,
                                      const Attribution& attribution, sampling::Leaf leaf) {
    exporting::FoldedStacks stacks;
    if (!run.sampling) return stacks;
    const symbols::SymbolResolver resolver(run.sampling->modules);
    // Mnemonics and loop phases of the annotated functions' instructions, for instruction and
    // phase leaves; cells share the binary, so one map of mnemonics serves them all. Phases
    // are each cell's own first: without -g the acquire loop is the one around the cell's
    // hottest instruction (acquire_loop.hpp), which another cell (1 thread) may not share.
    sampling::MnemonicMap mnemonics;
    std::vector<sampling::PhaseMap> own(attribution.cells.size());
    sampling::PhaseMap every_cell;
    if (leaf != sampling::Leaf::function)
        for (std::size_t i = 0; i < attribution.cells.size(); ++i) {
            mnemonics.merge(sampling::mnemonics_of(attribution.cells[i].functions));
            own[i] = sampling::phases_of(attribution.cells[i].functions);
            every_cell.insert(own[i].begin(), own[i].end());
        }
    for (std::size_t i = 0; i < run.cells.size(); ++i) {
        const auto& cell = run.cells[i];
        sampling::PhaseMap phases = i < own.size() ? std::move(own[i]) : sampling::PhaseMap{};
        phases.insert(every_cell.begin(), every_cell.end());  // keeps the cell's own
        sampling::StackFolder folder(resolver, leaf, &mnemonics, &phases);
        const std::string root = fmt::format("{}/{}t", cell.lock, cell.threads);
        for (const auto& trial : cell.trials)
            for (const auto& thread : trial.threads)
                for (const auto& s : thread.samples) stacks.add(folder.frames(root, s), s.weight);
    }
    return stacks;
}

std::vector<CellAnnotation> annotate(const workload::RunResult& run,
                                     const symbols::SymbolResolver& resolver,
                                     const sampling::AnnotateOptions& options) {
    sampling::Annotator annotator(resolver, options);
    std::vector<CellAnnotation> out;
    for (const auto& cell : run.cells) {
        std::vector<const profiling::RawSample*> samples;
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

void add_instruction_evidence(const CellAnnotation& cell, bool precise, CellEvidence& evidence) {
    evidence.samples = cell.samples;
    evidence.precise = precise;
    for (const auto& f : cell.functions) {
        for (std::size_t i = 0; i < f.instructions.size(); ++i) {
            const auto& ai = f.instructions[i];
            if (ai.in_acquire_loop)
                evidence.acquire_loop_mnemonics.push_back(ai.instruction.mnemonic);
            if (ai.weight <= 0) continue;
            InstructionShare share;
            share.mnemonic = ai.instruction.mnemonic;
            share.share = ai.share;
            share.in_acquire_loop = ai.in_acquire_loop;
            if (i > 0) share.previous_mnemonic = f.instructions[i - 1].instruction.mnemonic;
            evidence.instructions.push_back(std::move(share));
        }
    }
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

ReportInputs gather_report_inputs(const workload::RunResult& run,
                                  const std::vector<CellSummary>& summaries,
                                  const sampling::AnnotateOptions& annotate) {
    ReportInputs inputs;
    if (run.sampling && has_raw_samples(run)) {
        inputs.attribution = attribute(run, annotate);
        inputs.stacks = folded_stacks(run, *inputs.attribution, sampling::Leaf::phase);
    } else if (run.sampling) {
        inputs.omitted.push_back(
            "hot instructions and flamegraph: the result holds no raw samples (--output leaves "
            "them out); write them with --samples-out FILE");
    } else {
        inputs.omitted.push_back(
            "hot instructions and flamegraph: the run was not sampled "
            "(--sample)");
    }
    ExplainThresholds thresholds;
    thresholds.verdict = verdict_options(summaries);
    inputs.explanation = explain(
        gather_evidence(run, summaries, inputs.attribution ? &*inputs.attribution : nullptr),
        thresholds);
    return inputs;
}

}  // namespace lockprof::analysis
