#include "lockprof/analysis/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

namespace lockprof::analysis {

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

double Spread::relative_spread() const {
    return (values.size() < 2 || median == 0) ? 0 : (max - min) / std::fabs(median);
}

std::string spread_text(const Spread& s, std::string_view single) {
    if (s.values.size() < 2) return std::string(single);
    return fmt::format("{:.1f}%", 100 * s.relative_spread());
}

double geometric_mean(const std::vector<double>& values) {
    double log_sum = 0;
    for (double v : values) {
        if (v <= 0) return 0;
        log_sum += std::log(v);
    }
    return values.empty() ? 0 : std::exp(log_sum / static_cast<double>(values.size()));
}

Spread summarize(std::vector<double> values) {
    Spread s;
    s.values = values;
    if (values.empty()) return s;
    s.median = median(values);
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    s.min = *lo;
    s.max = *hi;
    return s;
}

bool ranges_overlap(const Spread& a, const Spread& b) {
    if (a.values.empty() || b.values.empty()) return true;
    return a.min <= b.max && b.min <= a.max;
}

double jain_index(const std::vector<double>& x) {
    double sum = 0, squares = 0;
    for (double v : x) sum += v, squares += v * v;
    if (x.empty() || squares == 0) return 1;
    return sum * sum / (static_cast<double>(x.size()) * squares);
}

double min_max_ratio(const std::vector<double>& x) {
    if (x.empty()) return 1;
    const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
    return *hi == 0 ? 1 : *lo / *hi;
}

double coefficient_of_variation(const std::vector<double>& x) {
    if (x.empty()) return 0;
    const double mean = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
    if (mean == 0) return 0;
    double squares = 0;
    for (double v : x) squares += (v - mean) * (v - mean);
    return std::sqrt(squares / static_cast<double>(x.size())) / mean;
}

}  // namespace lockprof::analysis
