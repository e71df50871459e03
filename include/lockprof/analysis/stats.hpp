// Statistics over trials and threads: medians with spread, fairness indices, noise checks.
#pragma once

#include <optional>
#include <vector>

namespace lockprof::analysis {

// A figure measured once per trial, summarised.
struct Spread {
    double median = 0;
    double min = 0;
    double max = 0;
    std::vector<double> values;  // one per trial, in trial order
    // (max - min) / median; 0 for a single trial or a zero median.
    double relative_spread() const;
};

Spread summarize(std::vector<double> values);

// Whether two summaries' trial ranges [min, max] overlap: a difference between them cannot be
// told from trial-to-trial noise. With a single trial each, nothing can be said: true only if
// the values are equal, and the caller should mention that one trial gives no noise estimate.
bool ranges_overlap(const Spread& a, const Spread& b);

double median(std::vector<double> values);

// Jain's fairness index (sum x)^2 / (n * sum x^2): 1 when all equal, 1/n when one thread has
// everything. 1 for empty or all-zero input.
double jain_index(const std::vector<double>& per_thread);
// min / max; 1 when all equal, 0 when some thread got nothing.
double min_max_ratio(const std::vector<double>& per_thread);
// Coefficient of variation (population standard deviation / mean); 0 for constant input.
double coefficient_of_variation(const std::vector<double>& per_thread);

}  // namespace lockprof::analysis
