// The one statistical engine behind every verdict lockprof prints: the run table's `vs first`
// column, the explanation's throughput rule, `compare` (every format) and the HTML report.
//
// Method (docs/reports.md, "How verdicts are made"): each trial is one observation. The effect
// is the ratio of geometric means, exp(mean(log other) - mean(log base)): throughput is
// positive and its trial-to-trial variation is multiplicative, so on the log scale a ratio is a
// difference of means. Its interval is Welch's t interval on the log values (unequal variances,
// Welch-Satterthwaite degrees of freedom), exponentiated. At the 3-10 trials a run has, this
// keeps its stated coverage where a percentile bootstrap of medians does not (3 trials give at
// most 10 distinct resampled medians, and the bootstrap understates the spread).
//
// Verdicts against the equivalence band [1 - e, 1 + e] (e = `--equivalence`, default 2%):
// faster / slower when the whole interval lies above / below the band, equivalent when the
// whole interval lies inside it, inconclusive otherwise. A test that fails to reject is never
// read as "the same". With fewer than kMinTrials on a side there is no interval: that is a
// stated limit, not a verdict. Outliers (Tukey's fences, 1.5 IQR) are flagged and kept.
// Several comparisons at once (a sweep) are corrected with Bonferroni on the intervals' level:
// each of m intervals is computed at 1 - (1 - c) / m, so all m cover together with at least c.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace lockprof::analysis {

struct VerdictOptions {
    double confidence = 0.95;   // family-wise: over all comparisons made together
    double equivalence = 0.02;  // ratios in [1 - e, 1 + e] are equivalent
};

enum class Verdict {
    faster,          // interval entirely above the band
    slower,          // interval entirely below the band
    equivalent,      // interval entirely inside the band
    inconclusive,    // interval overlaps a band edge
    too_few_trials,  // fewer than kMinTrials on a side: no interval
    no_ratio,        // a trial measured 0 (or nothing was measured): no ratio
};

// "faster", "slower", "equivalent", "inconclusive", "too few trials", "no ratio".
const char* verdict_name(Verdict verdict);

// Fewer trials per side give no interval; kAdvisedTrials is what the limit's message asks for.
inline constexpr std::size_t kMinTrials = 3;
inline constexpr std::size_t kAdvisedTrials = 5;
// The trial count beyond which "trials to settle it" is reported as "more than".
inline constexpr unsigned kSettleLimit = 10000;

struct ConfidenceInterval {
    double low = 0, high = 0;
};

struct Effect {
    std::size_t base_trials = 0, other_trials = 0;
    double ratio = 0;  // geometric mean of other / of base; 0 when there is no ratio
    std::optional<ConfidenceInterval> interval;
    double level = 0;        // the interval's own level after the multiplicity correction
    std::size_t family = 1;  // comparisons corrected for together
    double confidence = 0;   // the family-wise confidence asked for
    double equivalence = 0;  // the band's half-width used
    Verdict verdict = Verdict::no_ratio;
    // Inconclusive only: trials per side that would likely settle it at the observed spread
    // (the interval's expected half-width falls below the distance from the ratio to the
    // nearer band edge). Absent when the ratio sits on an edge; kSettleLimit + 1 means "more".
    std::optional<unsigned> trials_to_settle;
    std::vector<std::size_t> base_outliers, other_outliers;  // trial indices, kept
    std::string limit;  // too_few_trials / no_ratio: the stated limit, one sentence
};

// Compares two sets of trial values (other vs base), one of `family` comparisons.
Effect compare_trials(const std::vector<double>& base, const std::vector<double>& other,
                      const VerdictOptions& options = {}, std::size_t family = 1);

// How precisely a cell's own trials pin down its throughput: the t interval on the mean of the
// log values (n - 1 degrees of freedom), exponentiated and divided by the geometric mean, so it
// reads [exp(-h), exp(h)] around 1. `--trials auto` stops a cell when this interval is narrower
// than the equivalence band: it lies inside [1 - e, 1 + e], which (exp(-h) > 1 - e whenever
// exp(h) <= 1 + e) is h <= log(1 + e). One of `family` cells judged together (Bonferroni).
struct Precision {
    std::size_t trials = 0;
    double geometric_mean = 0;                   // 0 when there is no interval
    std::optional<ConfidenceInterval> interval;  // relative to the geometric mean; none below
                                                 // kMinTrials or with a trial of 0
    double level = 0;                            // after the correction
    double half_width = 0;                       // exp(h) - 1: "±3.1%"; 0 without an interval
    bool narrow = false;                         // the interval lies inside the band
    double equivalence = 0;                      // the band's half-width used
    // Not narrow: trials that would likely make it so at the observed spread (kSettleLimit + 1
    // means "more"); absent when narrow or without an interval.
    std::optional<unsigned> trials_to_narrow;
};

Precision throughput_precision(const std::vector<double>& values,
                               const VerdictOptions& options = {}, std::size_t family = 1);

// Each interval's level under Bonferroni: 1 - (1 - confidence) / family.
double corrected_level(double confidence, std::size_t family);

// Indices of the values outside Tukey's fences [Q1 - 1.5 IQR, Q3 + 1.5 IQR] (quartiles by
// linear interpolation); none with fewer than 4 values.
std::vector<std::size_t> tukey_outliers(const std::vector<double>& values);

// Student's t quantile (p in (0, 1), degrees of freedom > 0).
double t_quantile(double p, double degrees_of_freedom);

// "±3.1%" (the interval's half-width) or "no interval (2 trials)".
std::string precision_text(const Precision& precision);

// "±2%".
std::string band_text(double equivalence);
// "[0.981, 1.034]" or "-".
std::string interval_text(const Effect& effect);
// The verdict as a phrase: "faster", "inconclusive", "too few trials (2 per side)".
std::string verdict_text(const Effect& effect);
// The ratio with its verdict, for a table cell: "1.20x faster", "1.01x inconclusive",
// "1.10x, too few trials (2 per side)".
std::string effect_text(const Effect& effect);
// What would settle an inconclusive verdict, "" otherwise: "about 14 trials per side would
// likely settle it at the observed spread".
std::string settle_text(const Effect& effect);
// Flagged outliers, "" when none: "outliers kept: base trial 3, new trials 1 and 4".
std::string outlier_text(const Effect& effect, const std::string& base_name,
                         const std::string& other_name);
// One sentence stating the method, level and correction, for the foot of every table.
std::string method_text(const VerdictOptions& options, std::size_t family);
// The method's parts as words, for outputs that state them one by one (compare's JSON "test").
inline constexpr const char* kMethodStatistic =
    "ratio of geometric means of acquires/s over trials, new/base";
inline constexpr const char* kMethodInterval = "Welch t interval on log acquires/s";
inline constexpr const char* kMethodCorrection = "Bonferroni over the cells of each comparison";
// What compare's foot says of outliers.
inline constexpr const char* kOutlierPolicy = "outliers (Tukey fences) are flagged and kept";

// Parses "5%", "0.05" or "5" (percent) into a fraction in (0, 0.5); UsageError otherwise.
double parse_equivalence(const std::string& text);

}  // namespace lockprof::analysis
