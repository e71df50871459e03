// `lockprof compare`'s outputs: each NEW result compared with BASE cell by cell, as a table
// (the terminal), Markdown (a mailing list or issue), JSON (schema lockprof.compare, documented
// in docs/result-schema.md) or CSV. Only rendering: the comparison, its verdicts and the method's
// words are analysis/compare's and analysis/verdict's.
#pragma once

#include <string>
#include <vector>

#include "lockprof/analysis/compare.hpp"
#include "lockprof/analysis/verdict.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::report {

// A result file and what it holds.
struct ComparedFile {
    std::string file;
    workload::RunResult run;
};

// One NEW file compared with BASE.
struct FileComparison {
    const ComparedFile* other = nullptr;
    analysis::RunComparison comparison;
};

std::string compare_table(const ComparedFile& base, const std::vector<FileComparison>& all);
std::string compare_markdown(const ComparedFile& base, const std::vector<FileComparison>& all);
std::string compare_json(const ComparedFile& base, const std::vector<FileComparison>& all,
                         const analysis::VerdictOptions& options);
// CSV has no place for prose: the caller says the comparisons' warnings elsewhere.
std::string compare_csv(const std::vector<FileComparison>& all);

}  // namespace lockprof::report
