// Statistics over trials and threads: medians with spread, fairness indices. Verdicts (is a
// difference real?) come from the one engine in verdict.hpp, not from these.
#pragma once

#include <optional>
#include <string>
#include <string_view>
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

// The one "spread" every output shows (the terminal table, the HTML report, compare): the
// trials' full range relative to their median, (max - min) / median, as a percentage, "12.3%";
// `single` where fewer than two trials leave no range. kSpreadDefinition says so in a legend.
inline constexpr std::string_view kSpreadDefinition = "spread: (max - min) / median of the trials";
std::string spread_text(const Spread& s, std::string_view single = "-");

// Whether two summaries' trial ranges [min, max] overlap. Not a verdict: an overlap proves no
// sameness. The explanation uses it only as a gate (the rmw and cpu_use rules) and where a trial
// counted 0 leaves no ratio for verdict.hpp. With a single trial each: true only if the values are
// equal.
bool ranges_overlap(const Spread& a, const Spread& b);

double median(std::vector<double> values);

// exp(mean(log v)): what a verdict's ratio divides (verdict.hpp); 0 with a value <= 0 or none.
double geometric_mean(const std::vector<double>& values);

// Jain's fairness index (sum x)^2 / (n * sum x^2): 1 when all equal, 1/n when one thread has
// everything. 1 for empty or all-zero input.
double jain_index(const std::vector<double>& per_thread);
// min / max; 1 when all equal, 0 when some thread got nothing.
double min_max_ratio(const std::vector<double>& per_thread);
// Coefficient of variation (population standard deviation / mean); 0 for constant input.
double coefficient_of_variation(const std::vector<double>& per_thread);

}  // namespace lockprof::analysis
