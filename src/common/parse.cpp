#include "lockprof/common/parse.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"

namespace lockprof {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool parse_unsigned(std::string_view s, std::uint64_t& out) {
    if (s.empty()) return false;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

double parse_fraction(std::string_view text, std::string_view option) {
    const std::string_view s = trim(text);
    double value = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(value))
        throw UsageError(fmt::format(
            "--{}: '{}' is not a number; write a share from 0 to 1 such as 0.9", option, text));
    if (value < 0 || value > 1)
        throw UsageError(fmt::format(
            "--{}: {} is outside 0 to 1 (it is a share of the acquires); write e.g. 0.9", option,
            text));
    return value;
}

std::uint64_t parse_duration_ns(std::string_view text, std::string_view option) {
    const std::string_view s = trim(text);
    auto bad = [&](std::string_view why) {
        return UsageError(fmt::format("--{}: '{}' {}; write a duration such as 2s, 500ms, 250us",
                                      option, text, why));
    };
    if (s.empty()) throw bad("is empty");
    if (s.front() == '-') throw bad("is negative");
    std::size_t unit_at = 0;
    while (unit_at < s.size() &&
           (std::isdigit(static_cast<unsigned char>(s[unit_at])) || s[unit_at] == '.'))
        ++unit_at;
    const std::string number(s.substr(0, unit_at));
    const std::string_view unit = s.substr(unit_at);
    if (number.find_first_of("0123456789") == std::string::npos ||
        std::count(number.begin(), number.end(), '.') > 1)
        throw bad("is not a number");
    const double number_value = std::strtod(number.c_str(), nullptr);
    // A bare number is refused: `--duration 100` once meant 100 s per trial, which nobody who
    // typed it expected. Zero is zero in every unit, so "0" stays (--warmup's default).
    if (unit.empty() && number_value != 0)
        throw UsageError(
            fmt::format("--{}: '{}' has no unit; write e.g. {}ms or {}s (units: ns, us, ms, s, m)",
                        option, text, number, number));
    double multiplier = 0;
    if (unit.empty() || unit == "s")
        multiplier = 1e9;
    else if (unit == "ms")
        multiplier = 1e6;
    else if (unit == "us")
        multiplier = 1e3;
    else if (unit == "ns")
        multiplier = 1;
    else if (unit == "m" || unit == "min")
        multiplier = 60e9;
    else
        throw bad(fmt::format("has unknown unit '{}'", unit));
    const double value = number_value * multiplier;
    if (!std::isfinite(value) || value > 1e18) throw bad("is too long");
    return static_cast<std::uint64_t>(std::llround(value));
}

std::uint64_t parse_count(std::string_view text, std::string_view option) {
    std::string_view s = trim(text);
    std::uint64_t multiplier = 1;
    if (!s.empty()) {
        switch (s.back()) {
            case 'k':
            case 'K':
                multiplier = 1000;
                break;
            case 'M':
                multiplier = 1000000;
                break;
            case 'G':
                multiplier = 1000000000;
                break;
            default:
                break;
        }
        if (multiplier != 1) s.remove_suffix(1);
    }
    std::uint64_t value = 0;
    if (!parse_unsigned(s, value))
        throw UsageError(
            fmt::format("--{}: '{}' is not a non-negative whole number; write e.g. 50000 or 50k",
                        option, text));
    if (value > UINT64_MAX / multiplier)
        throw UsageError(fmt::format("--{}: '{}' is too large", option, text));
    return value * multiplier;
}

std::vector<std::string> split_list(std::string_view text, std::string_view option) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string_view item =
            trim(text.substr(start, comma == std::string_view::npos ? text.npos : comma - start));
        if (item.empty())
            throw UsageError(fmt::format(
                "--{}: '{}' has an empty entry; separate values with single commas", option, text));
        out.emplace_back(item);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return out;
}

namespace {
template <typename T>
std::vector<T> parse_int_list(std::string_view text, std::string_view option, bool allow_zero,
                              std::string_view example) {
    std::vector<T> out;
    for (const auto& item : split_list(text, option)) {
        const auto dash = item.find('-', 1);
        std::uint64_t first = 0, last = 0;
        const bool ok = dash == std::string::npos
                            ? parse_unsigned(item, first) && (last = first, true)
                            : parse_unsigned(std::string_view(item).substr(0, dash), first) &&
                                  parse_unsigned(std::string_view(item).substr(dash + 1), last);
        if (!ok || last < first)
            throw UsageError(fmt::format("--{}: '{}' is not a number or range; write e.g. {}",
                                         option, item, example));
        if (!allow_zero && first == 0)
            throw UsageError(
                fmt::format("--{}: 0 is not a thread count; counts start at 1", option));
        if (last > 1000000 || last - first > 100000)
            throw UsageError(fmt::format("--{}: '{}' is too large", option, item));
        for (std::uint64_t v = first; v <= last; ++v) out.push_back(static_cast<T>(v));
    }
    return out;
}
}  // namespace

std::vector<unsigned> parse_thread_list(std::string_view text, std::string_view option) {
    return parse_int_list<unsigned>(text, option, false, "1,2,4,8 or 1-4");
}

std::vector<int> parse_cpu_list(std::string_view text, std::string_view option) {
    return parse_int_list<int>(text, option, true, "0,2,4-7");
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
    auto distance = [](std::string_view a, std::string_view b) {
        std::vector<std::size_t> row(b.size() + 1);
        for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
        for (std::size_t i = 1; i <= a.size(); ++i) {
            std::size_t diagonal = row[0];
            row[0] = i;
            for (std::size_t j = 1; j <= b.size(); ++j) {
                const std::size_t above = row[j];
                row[j] = std::min(
                    {row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
                diagonal = above;
            }
        }
        return row[b.size()];
    };
    std::string best;
    std::size_t best_distance = SIZE_MAX;
    for (const auto& candidate : candidates) {
        const std::size_t d = distance(word, candidate);
        if (d < best_distance) best_distance = d, best = candidate;
    }
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    return best_distance <= limit ? best : std::string();
}

std::string format_duration(double ns) {
    if (!std::isfinite(ns)) return "-";
    if (ns < 1e3) return fmt::format("{:.1f} ns", ns);
    if (ns < 1e6) return fmt::format("{:.2f} us", ns / 1e3);
    if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
    return fmt::format("{:.2f} s", ns / 1e9);
}

}  // namespace lockprof
