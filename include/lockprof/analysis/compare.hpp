// "Head vs patch": compares the throughput of two runs cell by cell (lock, threads) and says
// whether each difference is real, with a stated test, and which provenance differences make
// the comparison itself doubtful (the 2020 thread's assert-enabled build).
//
// The test (docs/reports.md): the ratio of median acquires/s over trials, NEW / BASE, with a
// seeded percentile bootstrap confidence interval. Each resample draws BASE's and NEW's trials
// with replacement (as many as each has) and takes the ratio of the two medians; the interval
// is the (1-c)/2 and (1+c)/2 quantiles of `resamples` such ratios. Verdict: faster when the
// whole interval is above 1, slower when below 1, within noise otherwise. Fewer than two
// trials in either run: no noise estimate, no verdict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockprof/analysis/stats.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::analysis {

struct CompareOptions {
    double confidence = 0.95;
    unsigned resamples = 10000;
    std::uint64_t seed = 1;  // the same inputs and seed always give the same interval
};

enum class Verdict { faster, slower, within_noise, no_noise_estimate };
const char* verdict_name(Verdict verdict);  // "faster", "slower", "within noise", ...

struct ConfidenceInterval {
    double low = 0, high = 0;
};

struct CellComparison {
    std::string lock;
    unsigned threads = 0;
    Spread base;                                 // acquires/s per trial
    Spread other;                                // acquires/s per trial
    double ratio = 0;                            // median(other) / median(base)
    std::optional<ConfidenceInterval> interval;  // absent with fewer than 2 trials in a run
    Verdict verdict = Verdict::no_noise_estimate;
};

// A provenance or workload difference that can make a throughput difference meaningless.
struct ProvenanceWarning {
    std::string field;  // "assertions", "cpu_model", "compiler_flags", "workload"...
    std::string base_value;
    std::string other_value;
    std::string message;  // one line for people, what differs and why it matters
};

struct MissingCell {
    std::string lock;
    unsigned threads = 0;
};

struct RunComparison {
    std::vector<ProvenanceWarning> warnings;
    std::vector<CellComparison> cells;  // in BASE's cell order
    std::vector<MissingCell> only_in_base;
    std::vector<MissingCell> only_in_other;
};

// Differences between the two runs' provenance and workload that invalidate or weaken the
// comparison; also "assertions on in both" (numbers from such builds are not representative).
std::vector<ProvenanceWarning> provenance_warnings(const workload::RunResult& base,
                                                   const workload::RunResult& other);

// The bootstrap interval of median(other)/median(base); nullopt when either has fewer than two
// values or a zero median.
std::optional<ConfidenceInterval> bootstrap_ratio_interval(const std::vector<double>& base,
                                                           const std::vector<double>& other,
                                                           const CompareOptions& options);

RunComparison compare_runs(const workload::RunResult& base, const workload::RunResult& other,
                           const CompareOptions& options = {});

}  // namespace lockprof::analysis
