// A recording's document (schema "lockprof.record", docs/record.md) as typed data: what
// `record --output` writes, what `lockprof report recording.json` reads back and what the
// recording's HTML report renders. record_document() computes it from a recording and its
// analysis, to_json() writes it, record_document_from_json() reads it from a file's JSON; the
// HTML report (record_html.cpp) renders from it only, so it cannot depend on how the JSON spells
// anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockprof/measure/data.hpp"
#include "lockprof/record/analysis.hpp"
#include "lockprof/record/recorder.hpp"
#include "lockprof/record/spin.hpp"
#include "lockprof/sampling/calibration.hpp"
#include "lockprof/workload/provenance.hpp"

namespace lockprof::report {

// What was recorded: a command, pids, or processes whose name matches.
struct RecordTarget {
    record::Mode mode = record::Mode::pid;
    std::vector<pid_t> pids;           // pid
    std::string match;                 // match
    std::vector<std::string> command;  // command
};

// One recorded process: its threads' counter readings ("counted" and the scaled "value" of a
// reading are derived from raw, enabled and running), its samples and its counter totals.
struct RecordProcess {
    record::ProcessInfo info;
    bool exited = false;
    double seen_at_s = 0;
    std::string problem;
    std::vector<record::TaskRecord> threads;
    std::uint64_t samples = 0;
    std::vector<record::CounterTotal> counters;  // event order; empty when none were counted
    std::vector<measure::CounterReading> inherited_counters;  // command: the kernel's sums
};

// How the targets were sampled: the run result's sampling section without its modules, and
// what the samples came to.
struct RecordSampling {
    measure::SamplingInfo info;  // no modules: they are per process
    std::uint64_t samples = 0;
    std::uint64_t lost = 0;
    double unresolved_share = 0;
    std::optional<double> sampled_cpu_share;
};

// A hot function instruction by instruction, as the listing prints it.
struct RecordInstruction {
    std::uint64_t address = 0;
    std::string text;      // mnemonic and operands
    std::string listing;   // as the listing shows it (a call names what it reaches)
    std::string source;    // "file.c:12" where the line changes, else ""
    double share = 0;      // of all samples
    bool in_loop = false;  // in the function's hottest loop
};

struct RecordAnnotation {
    std::string symbol, short_name, module;
    double share = 0;
    std::string loop_rule;
    std::string error;  // why it was not disassembled, "" when it was
    std::vector<RecordInstruction> instructions;
};

// The spin-lock view and the sentence that sums it up.
struct RecordSpinLocks {
    std::string pattern;
    std::vector<std::string> probed_functions;
    double share = 0;
    std::string summary;  // spin_sentence()
    std::vector<record::SymbolShare> symbols;
    std::vector<record::SpinInstruction> hot_instructions;
};

// The instruments' calibrated cost, their share of the targets' CPU time, and both in words.
struct RecordInstrumentCost {
    record::InstrumentCalibration calibration;
    record::InstrumentShare share;
    std::string summary;  // instruments_sentence()
    std::string warning;  // instruments_warning(), "" below the threshold
};

// --spin: each probed function where its uprobe went, and the slow paths per call site (each
// site with at most kRecordSpinStacks of its call stacks).
struct RecordSpinFunction {
    record::SpinFunction function;
    std::uint64_t address = 0, file_offset = 0;
};
inline constexpr std::size_t kRecordSpinStacks = 8;
struct RecordSpinCalls {
    std::vector<RecordSpinFunction> functions;
    record::SpinProfile profile;  // its `functions` unused: `functions` above
};

struct RecordDocument {
    workload::Provenance provenance;
    RecordTarget target;
    double duration_s = 0;
    bool interrupted = false;
    std::string interrupted_by;  // "" unknown or not interrupted
    std::optional<int> exit_status;
    std::vector<std::string> events;
    std::vector<RecordProcess> processes;
    std::vector<record::CounterTotal> totals;
    std::vector<std::string> notes;
    std::vector<std::string> warnings;
    std::optional<RecordSampling> sampling;
    std::vector<record::SymbolShare> hot_symbols;
    std::vector<RecordAnnotation> annotations;
    RecordSpinLocks spin_locks;
    std::optional<RecordInstrumentCost> instrument_cost;
    std::optional<RecordSpinCalls> spin_calls;
};

RecordDocument record_document(const record::RecordResult& result,
                               const record::RecordAnalysis& profile);

// The JSON document `record --output` writes (current schema and version).
nlohmann::json to_json(const RecordDocument& doc);

// A recording's JSON read back: version 2, or version 1 ("schema": "lockprof-record",
// "version": 1), which holds the same. Throws UsageError, naming what is missing or ill-typed,
// for a document that is not a whole recording. What the report shows is required; the rest
// (parts later versions added) takes its default where absent.
RecordDocument record_document_from_json(const nlohmann::json& doc);

// record_document() as a file gives it back: written by json_text() and read again, so every
// string and number is what `lockprof report` of the file sees.
RecordDocument record_document_as_read(const record::RecordResult& result,
                                       const record::RecordAnalysis& profile);

}  // namespace lockprof::report
