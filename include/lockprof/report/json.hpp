// The result file: raw per-thread figures (enough to recompute everything) plus the derived
// summaries for scripts. Schema documented in docs/result-schema.md; bump kSchemaVersion on any
// incompatible change.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::report {

inline constexpr const char* kSchemaName = "lockprof.result";
inline constexpr int kSchemaVersion = 1;

// What a result file holds. Raw samples are large: `--output` leaves them out, `--samples-out`
// keeps them.
enum class RawSamples { keep, omit };
nlohmann::json to_json(const workload::RunResult& run,
                       const std::vector<analysis::CellSummary>& summaries,
                       RawSamples samples = RawSamples::keep);

// A figure over trials as every lockprof JSON document writes it: median, min, max,
// relative_spread and the per-trial values ("trials").
nlohmann::json spread_json(const analysis::Spread& spread);

// A JSON document as the text every lockprof JSON file holds (`indent` as nlohmann's dump, and
// a final newline). Bytes that are not UTF-8 (a path or command line in another encoding)
// become U+FFFD instead of failing the write and losing the file.
std::string json_text(const nlohmann::json& doc, int indent = -1);

// The provenance and sampling objects of the result file, for other documents (record's).
nlohmann::json provenance_json(const workload::Provenance& provenance);
nlohmann::json sampling_json(const measure::SamplingInfo& sampling);

// Reads a result file back (raw data only; summaries are recomputed by the caller). Throws
// UsageError naming the file for unreadable files, other schemas and versions, and truncation.
workload::RunResult read_result(const std::filesystem::path& path);

// read_result on a file's text, `name` standing for the file in messages: the reader itself,
// which read_result calls after reading the file (and tests/fuzz/ feeds).
workload::RunResult result_from_text(std::string_view text, const std::string& name);

// Parses the raw part of a result document (used by read_result and tests).
workload::RunResult result_from_json(const nlohmann::json& doc);

}  // namespace lockprof::report
