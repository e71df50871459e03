#include "lockprof/analysis/report_inputs.hpp"

namespace lockprof::analysis {

using attribution::CellAnnotation;

std::vector<CellEvidence> gather_evidence(const workload::RunResult& run,
                                          const std::vector<CellSummary>& summaries,
                                          const attribution::RunAttribution* attribution) {
    auto evidence = evidence_from(summaries);
    if (attribution && run.sampling)
        for (std::size_t i = 0; i < evidence.size() && i < attribution->cells.size(); ++i)
            add_instruction_evidence(attribution->cells[i],
                                     run.sampling->skid == measure::Skid::zero, evidence[i]);
    return evidence;
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

ReportInputs gather_report_inputs(const workload::RunResult& run,
                                  const std::vector<CellSummary>& summaries,
                                  const attribution::AnnotateOptions& annotate) {
    ReportInputs inputs;
    if (run.sampling && attribution::has_raw_samples(run)) {
        inputs.attribution = attribution::attribute(run, annotate);
        inputs.stacks =
            attribution::folded_stacks(run, *inputs.attribution, attribution::Leaf::phase);
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
