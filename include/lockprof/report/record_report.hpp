// Outputs of `lockprof record`: the terminal report (counters per process and in total, the
// hottest symbols, annotated hot functions, the spin-lock view, notes), the JSON document
// (schema "lockprof.record", documented in docs/record.md; typed in record_document.hpp) and the
// HTML report rendered from that document (record_html.cpp).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lockprof/record/analysis.hpp"
#include "lockprof/record/recorder.hpp"
#include "lockprof/results/schema.hpp"

namespace lockprof::report {

// The recording's schema names and version (results/schema.hpp): "lockprof.record" version 2,
// and "lockprof-record" version 1, still read.
using results::kRecordSchemaName;
using results::kRecordSchemaNameV1;
using results::kRecordSchemaVersion;

// `top_symbols`: rows of the hottest-symbol table; `listing_top`: functions listed
// instruction by instruction (0: none; lock-pattern functions are listed after them).
std::string render_record(const record::RecordResult& result, const record::RecordAnalysis& profile,
                          std::size_t top_symbols, unsigned listing_top);

// The spin-lock view in one sentence: "12.0% of samples are in s_lock, 80.0% of those on
// `pause`" (or that none are).
std::string spin_sentence(const record::RecordAnalysis& profile);
// What the spin-lock view covers: "'s_lock|spin|...'" and, with --spin, "and --spin's f, g".
std::string spin_view_scope(const record::SpinView& view);

// What the recording's instruments cost and took of the targets' CPU time, in one sentence
// ("spin probes 2.41 us a call (...) x 15300 calls = 36.87 ms; ...: about 1.6% of the targets'
// 2.71 s of CPU time (task_clock)"), and the warning above kInstrumentShareNote, with how to
// lower it ("" below).
std::string instruments_sentence(const record::InstrumentCalibration& calibration,
                                 const record::InstrumentShare& share);
std::string instruments_warning(const record::InstrumentCalibration& calibration,
                                const record::InstrumentShare& share);

// What the top of a report says of a command that failed (exit status N, or 128 + the signal
// that killed it): "" for status 0 or none.
std::string failed_command_sentence(std::optional<int> exit_status);

// to_json(record_document(result, profile)): the document `record --output` writes.
nlohmann::json record_to_json(const record::RecordResult& result,
                              const record::RecordAnalysis& profile);

// "12.30 ms", "850 ns": a slow-path time of --spin's tables.
std::string duration_text(double ns);

// Whether `doc` says it is a recording (schema lockprof.record, or lockprof-record before).
bool is_recording(const nlohmann::json& doc);

// The JSON document of the file at `path` when it is a recording; nullopt otherwise (a run
// result, or a file that is unreadable or not JSON, which read_result() then refuses).
std::optional<nlohmann::json> read_recording(const std::string& path);

struct RecordDocument;

// A recording's self-contained HTML report (docs/reports.md): its target and provenance,
// counters, hottest symbols, annotated functions, the spin-lock view and the --spin call sites.
// Rendered from the document alone, as `record --output` writes it and `lockprof report` reads it
// back (record_document_from_json()), so `record --report` and `lockprof report` of its --output
// write the same bytes.
std::string render_record_html(const RecordDocument& doc, const std::string& title);

// render_record_html() of the document as a file gives it back (record_document_as_read()).
std::string render_record_html(const record::RecordResult& result,
                               const record::RecordAnalysis& profile, const std::string& title);

}  // namespace lockprof::report
