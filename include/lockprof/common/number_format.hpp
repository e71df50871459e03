// Number formatting, one home for every output: the terminal tables, the HTML report, the
// explanation's prose, compare. Header-only so the common library's sources stay as they are.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace lockprof {

// Rates and counts with an SI suffix: 12345678 -> "12.35M", 12345 -> "12.3k", 950 -> "950";
// NaN and infinities -> "-".
inline std::string format_si(double value) {
    if (!std::isfinite(value)) return "-";
    const double a = std::fabs(value);
    if (a >= 1e9) return fmt::format("{:.2f}G", value / 1e9);
    if (a >= 1e6) return fmt::format("{:.2f}M", value / 1e6);
    if (a >= 1e4) return fmt::format("{:.1f}k", value / 1e3);
    return fmt::format("{:.0f}", value);
}

// The tables' per-acquire columns: fewer decimals as the value grows (0.84, 12.3, 123), the SI
// form from a million; NaN and infinities -> "-".
inline std::string format_table_number(double value) {
    if (!std::isfinite(value)) return "-";
    const double a = std::fabs(value);
    if (a >= 1e6) return format_si(value);
    if (a >= 100) return fmt::format("{:.0f}", value);
    if (a >= 10) return fmt::format("{:.1f}", value);
    return fmt::format("{:.2f}", value);
}

// A figure in a sentence, as the explanation quotes per-acquire numbers: 37, 2.9, 0.2, 0.012.
inline std::string format_figure(double value) {
    if (value == 0) return "0";
    if (value >= 9.95) return fmt::format("{:.0f}", value);
    if (value >= 0.095) return fmt::format("{:.1f}", value);
    return fmt::format("{:.2g}", value);
}

// A count with its noun, singular for one: "1 thread", "2 threads", "3 trials".
inline std::string count_text(std::uint64_t n, std::string_view noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

// "1 thread", "4 threads": every sentence that names a thread count says it through this.
inline std::string threads_text(std::uint64_t threads) {
    return count_text(threads, "thread");
}

// Two figures already formatted as a range: "0.27-0.28", or one figure when both read the same.
inline std::string range_text(const std::string& low, const std::string& high) {
    return low == high ? low : low + "-" + high;
}

}  // namespace lockprof
