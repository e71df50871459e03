// Reading a run result file back (schema "lockprof.result", docs/result-schema.md): the raw
// per-thread figures and provenance, every field checked against what the schema promises;
// the summaries are recomputed by the caller (analysis::summarize). report/json.hpp writes it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lockprof/results/schema.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::results {

// Reads a result file back (raw data only; summaries are recomputed by the caller). Throws
// UsageError naming the file for unreadable files, other schemas and versions, and truncation.
workload::RunResult read_result(const std::filesystem::path& path);

// read_result on a file's text, `name` standing for the file in messages: the reader itself,
// which read_result calls after reading the file (and tests/fuzz/ feeds).
workload::RunResult result_from_text(std::string_view text, const std::string& name);

// Parses the raw part of a result document (used by read_result and tests).
workload::RunResult result_from_json(const nlohmann::json& doc);

}  // namespace lockprof::results
