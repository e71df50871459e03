#include "lockprof/analysis/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

#include "lockprof/common/error.hpp"

namespace lockprof::analysis {
namespace {

struct LogMoments {
    double mean = 0, variance = 0;  // sample variance (n - 1)
};

LogMoments log_moments(const std::vector<double>& values) {
    LogMoments m;
    for (double v : values) m.mean += std::log(v);
    m.mean /= static_cast<double>(values.size());
    for (double v : values) m.variance += (std::log(v) - m.mean) * (std::log(v) - m.mean);
    m.variance /= static_cast<double>(values.size() - 1);
    return m;
}

// Welch-Satterthwaite degrees of freedom of a difference of two means.
double welch_df(double vb, std::size_t nb, double vo, std::size_t no) {
    const double b = vb / static_cast<double>(nb), o = vo / static_cast<double>(no);
    const double denominator =
        b * b / static_cast<double>(nb - 1) + o * o / static_cast<double>(no - 1);
    if (denominator <= 0) return static_cast<double>(nb + no - 2);
    return (b + o) * (b + o) / denominator;
}

double quantile_of_sorted(const std::vector<double>& sorted, double q) {
    const double position = q * static_cast<double>(sorted.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const auto above = std::min(below + 1, sorted.size() - 1);
    return sorted[below] +
           (sorted[above] - sorted[below]) * (position - static_cast<double>(below));
}

// Trials per side for which the expected half-width, t * sqrt((vb + vo) / n), falls below
// `margin` (log scale) at the observed variances.
std::optional<unsigned> trials_to_settle(double vb, double vo, double margin, double level) {
    if (margin <= 0) return std::nullopt;
    if (vb + vo <= 0) return static_cast<unsigned>(kMinTrials);
    const auto settles = [&](unsigned n) {
        const double df = welch_df(vb, n, vo, n);
        return t_quantile(0.5 + level / 2, df) * std::sqrt((vb + vo) / n) < margin;
    };
    // The half-width shrinks as n grows: bisect between kMinTrials and kSettleLimit.
    unsigned low = static_cast<unsigned>(kMinTrials);
    if (settles(low)) return low;
    if (!settles(kSettleLimit)) return kSettleLimit + 1;
    unsigned high = kSettleLimit;  // settles(high), !settles(low)
    while (high - low > 1) {
        const unsigned mid = low + (high - low) / 2;
        (settles(mid) ? high : low) = mid;
    }
    return high;
}

std::string trial_list(const std::vector<std::size_t>& indices) {
    std::string out;
    for (std::size_t i = 0; i < indices.size(); ++i)
        out += fmt::format("{}{}",
                           i == 0                    ? ""
                           : i + 1 == indices.size() ? " and "
                                                     : ", ",
                           indices[i] + 1);
    return out;
}

}  // namespace

const char* verdict_name(Verdict verdict) {
    switch (verdict) {
        case Verdict::faster:
            return "faster";
        case Verdict::slower:
            return "slower";
        case Verdict::equivalent:
            return "equivalent";
        case Verdict::inconclusive:
            return "inconclusive";
        case Verdict::too_few_trials:
            return "too few trials";
        case Verdict::no_ratio:
            return "no ratio";
    }
    return "?";
}

double corrected_level(double confidence, std::size_t family) {
    return 1 - (1 - confidence) / static_cast<double>(std::max<std::size_t>(family, 1));
}

// In double, not Boost's default of promoting double to long double inside: on aarch64 long
// double is IEEE quad in software, where a quantile took 0.51 ms against 0.026 ms in double
// (qemu-user; 8.3 us against 0.45 us on x86's 80-bit floats), and the results differ by at
// most 1e-12 relative (df 2-38, p 0.5-0.99995), far below any interval printed.
double t_quantile(double p, double degrees_of_freedom) {
    using InDouble = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
    const boost::math::students_t_distribution<double, InDouble> distribution(degrees_of_freedom);
    return boost::math::quantile(distribution, p);
}

std::vector<std::size_t> tukey_outliers(const std::vector<double>& values) {
    if (values.size() < 4) return {};
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const double q1 = quantile_of_sorted(sorted, 0.25), q3 = quantile_of_sorted(sorted, 0.75);
    const double low = q1 - 1.5 * (q3 - q1), high = q3 + 1.5 * (q3 - q1);
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < values.size(); ++i)
        if (values[i] < low || values[i] > high) out.push_back(i);
    return out;
}

Effect compare_trials(const std::vector<double>& base, const std::vector<double>& other,
                      const VerdictOptions& options, std::size_t family) {
    Effect e;
    e.base_trials = base.size();
    e.other_trials = other.size();
    e.family = std::max<std::size_t>(family, 1);
    e.level = corrected_level(options.confidence, e.family);
    e.confidence = options.confidence;
    e.equivalence = options.equivalence;
    e.base_outliers = tukey_outliers(base);
    e.other_outliers = tukey_outliers(other);
    const auto positive = [](const std::vector<double>& v) {
        return !v.empty() && std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
    };
    if (!positive(base) || !positive(other)) {
        e.verdict = Verdict::no_ratio;
        e.limit = base.empty() || other.empty()
                      ? "no trials on one side: nothing to compare"
                      : "a trial measured 0: no ratio; check that trial's notes and run again";
        return e;
    }
    const double geo_b =
        std::exp(std::accumulate(base.begin(), base.end(), 0.0,
                                 [](double s, double v) { return s + std::log(v); }) /
                 static_cast<double>(base.size()));
    const double geo_o =
        std::exp(std::accumulate(other.begin(), other.end(), 0.0,
                                 [](double s, double v) { return s + std::log(v); }) /
                 static_cast<double>(other.size()));
    e.ratio = geo_o / geo_b;
    const std::size_t fewest = std::min(base.size(), other.size());
    if (fewest < kMinTrials) {
        e.verdict = Verdict::too_few_trials;
        e.limit = fmt::format(
            "{} trial{} {}: too few for an interval (at least {} per side); run --trials {} "
            "or more",
            fewest, fewest == 1 ? "" : "s",
            base.size() == other.size() ? "per side" : "on one side", kMinTrials, kAdvisedTrials);
        return e;
    }
    const LogMoments b = log_moments(base), o = log_moments(other);
    const double difference = o.mean - b.mean;
    const double se = std::sqrt(b.variance / static_cast<double>(base.size()) +
                                o.variance / static_cast<double>(other.size()));
    const double half = se > 0 ? t_quantile(0.5 + e.level / 2, welch_df(b.variance, base.size(),
                                                                        o.variance, other.size())) *
                                     se
                               : 0;
    e.interval = ConfidenceInterval{std::exp(difference - half), std::exp(difference + half)};
    const double band_low = 1 - options.equivalence, band_high = 1 + options.equivalence;
    if (e.interval->low > band_high)
        e.verdict = Verdict::faster;
    else if (e.interval->high < band_low)
        e.verdict = Verdict::slower;
    else if (e.interval->low >= band_low && e.interval->high <= band_high)
        e.verdict = Verdict::equivalent;
    else {
        e.verdict = Verdict::inconclusive;
        // The distance from the ratio to the edge it must clear, on the log scale: outside the
        // band, to the nearer edge beyond which it lies; inside, to the nearer edge.
        const double lo = std::log(band_low), hi = std::log(band_high);
        const double margin = difference > hi   ? difference - hi
                              : difference < lo ? lo - difference
                                                : std::min(difference - lo, hi - difference);
        e.trials_to_settle = trials_to_settle(b.variance, o.variance, margin, e.level);
    }
    return e;
}

Precision throughput_precision(const std::vector<double>& values, const VerdictOptions& options,
                               std::size_t family) {
    Precision p;
    p.trials = values.size();
    p.level = corrected_level(options.confidence, std::max<std::size_t>(family, 1));
    if (values.size() < kMinTrials) return p;
    if (std::any_of(values.begin(), values.end(), [](double v) { return !(v > 0); })) return p;
    const LogMoments m = log_moments(values);
    const double n = static_cast<double>(values.size());
    const double h =
        t_quantile(1 - (1 - p.level) / 2, n - 1) * std::sqrt(std::max(m.variance, 0.0) / n);
    p.geometric_mean = std::exp(m.mean);
    p.interval = ConfidenceInterval{std::exp(-h), std::exp(h)};
    p.half_width = std::expm1(h);
    p.equivalence = options.equivalence;
    p.narrow = h <= std::log1p(options.equivalence);
    if (!p.narrow && m.variance > 0) {
        const double target = std::log1p(options.equivalence);
        const double s = std::sqrt(m.variance);
        unsigned k = static_cast<unsigned>(values.size()) + 1;
        for (; k <= kSettleLimit; ++k) {
            const double kk = static_cast<double>(k);
            if (t_quantile(1 - (1 - p.level) / 2, kk - 1) * s / std::sqrt(kk) <= target) break;
        }
        p.trials_to_narrow = k;
    }
    return p;
}

std::string precision_text(const Precision& precision) {
    if (!precision.interval)
        return fmt::format("no interval ({} trial{})", precision.trials,
                           precision.trials == 1 ? "" : "s");
    return fmt::format("±{:.1f}%", precision.half_width * 100);
}

std::string band_text(double equivalence) {
    return fmt::format("±{:g}%", equivalence * 100);
}

std::string interval_text(const Effect& effect) {
    return effect.interval
               ? fmt::format("[{:.3f}, {:.3f}]", effect.interval->low, effect.interval->high)
               : "-";
}

std::string verdict_text(const Effect& effect) {
    if (effect.verdict == Verdict::too_few_trials) {
        const std::size_t fewest = std::min(effect.base_trials, effect.other_trials);
        return fmt::format("too few trials ({} {})", fewest,
                           effect.base_trials == effect.other_trials ? "per side" : "on one side");
    }
    return verdict_name(effect.verdict);
}

std::string effect_text(const Effect& effect) {
    if (effect.verdict == Verdict::no_ratio) return verdict_name(effect.verdict);
    return fmt::format("{:.2f}x{}{}", effect.ratio,
                       effect.verdict == Verdict::too_few_trials ? ", " : " ",
                       verdict_text(effect));
}

std::string settle_text(const Effect& effect) {
    if (effect.verdict != Verdict::inconclusive) return "";
    if (!effect.trials_to_settle)
        return "the ratio sits on the band's edge: no trial count would likely settle it";
    if (*effect.trials_to_settle > kSettleLimit)
        return fmt::format("more than {} trials per side would be needed at the observed spread",
                           kSettleLimit);
    return fmt::format("about {} trials per side would likely settle it at the observed spread",
                       *effect.trials_to_settle);
}

std::string outlier_text(const Effect& effect, const std::string& base_name,
                         const std::string& other_name) {
    std::vector<std::string> parts;
    if (!effect.base_outliers.empty())
        parts.push_back(fmt::format("{} trial{} {}", base_name,
                                    effect.base_outliers.size() == 1 ? "" : "s",
                                    trial_list(effect.base_outliers)));
    if (!effect.other_outliers.empty())
        parts.push_back(fmt::format("{} trial{} {}", other_name,
                                    effect.other_outliers.size() == 1 ? "" : "s",
                                    trial_list(effect.other_outliers)));
    if (parts.empty()) return "";
    return fmt::format("outliers (Tukey fences) kept: {}", fmt::join(parts, ", "));
}

std::string method_text(const VerdictOptions& options, std::size_t family) {
    const std::size_t m = std::max<std::size_t>(family, 1);
    return fmt::format(
        "verdicts: ratio of geometric means over trials, {} at "
        "{:g}%{}; faster/slower when the interval lies outside the {} equivalence band, "
        "equivalent when inside it, inconclusive otherwise; fewer than {} trials per side give "
        "no interval",
        kMethodInterval, corrected_level(options.confidence, m) * 100,
        m == 1
            ? std::string()
            : fmt::format(" (Bonferroni: {:g}% over {} comparisons)", options.confidence * 100, m),
        band_text(options.equivalence), kMinTrials);
}

double parse_equivalence(const std::string& text) {
    const bool percent = !text.empty() && text.back() == '%';
    const std::string number = percent ? text.substr(0, text.size() - 1) : text;
    double value = 0;
    try {
        std::size_t used = 0;
        value = std::stod(number, &used);
        if (used != number.size() || number.empty()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
        throw UsageError(fmt::format(
            "--equivalence: '{}' is not a percentage or fraction; try 2% or 0.02", text));
    }
    if (percent) value /= 100;
    if (!percent && value >= 1)
        throw UsageError(fmt::format(
            "--equivalence: '{}' is ambiguous without a unit; write {}% or a fraction like {:g}",
            text, text, value / 100));
    if (!(value > 0 && value < 0.5))
        throw UsageError(fmt::format(
            "--equivalence: '{}' is out of range: the band must be above 0% and below 50%; try "
            "2%",
            text));
    return value;
}

}  // namespace lockprof::analysis
