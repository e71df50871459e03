// Outputs of `lockprof record`: the terminal report (counters per process and in total, the
// hottest symbols, annotated hot functions, the spin-lock view, notes) and the JSON document
// (schema "lockprof-record", documented in docs/record.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "lockprof/record/profile.hpp"
#include "lockprof/record/recorder.hpp"

namespace lockprof::report {

inline constexpr const char* kRecordSchemaName = "lockprof-record";
inline constexpr int kRecordSchemaVersion = 1;

// `top_symbols`: rows of the hottest-symbol table; `listing_top`: functions listed
// instruction by instruction (0: none; lock-pattern functions are listed after them).
std::string render_record(const record::RecordResult& result, const record::Profile& profile,
                          std::size_t top_symbols, unsigned listing_top);

// The spin-lock view in one sentence: "12.0% of samples are in s_lock, 80.0% of those on
// `pause`" (or that none are).
std::string spin_sentence(const record::Profile& profile);

nlohmann::json record_to_json(const record::RecordResult& result, const record::Profile& profile);

}  // namespace lockprof::report
