// Writing the result file: raw per-thread figures (enough to recompute everything) plus the
// derived summaries for scripts. Schema documented in docs/result-schema.md; bump its version
// (results/schema.hpp) on any incompatible change. results/result_reader.hpp reads it back.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/results/schema.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::report {

// The result file's name and version (results/schema.hpp); results/result_reader.hpp reads it.
inline constexpr const char* kSchemaName = results::kResultSchemaName;
inline constexpr int kSchemaVersion = results::kResultSchemaVersion;

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

}  // namespace lockprof::report
