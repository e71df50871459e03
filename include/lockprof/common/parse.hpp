// Parsers for the value syntaxes users type: durations, number lists, CPU lists.
// Each throws UsageError naming the option and the accepted form.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lockprof {

// "2s", "500ms", "1.5s", "250us", "100ns", "1m" (or "1min"). A number needs its unit: "100" is
// refused, naming 100ms and 100s, since a bare number once silently meant seconds; only zero
// ("0", "0.0") may go without one, as it is zero in every unit (--warmup's default is "0").
// Negative, empty or unknown-unit values are refused.
std::uint64_t parse_duration_ns(std::string_view text, std::string_view option);

// A non-negative integer with optional k/M/G suffix (powers of 1000): "50000", "50k".
std::uint64_t parse_count(std::string_view text, std::string_view option);

// A share from 0 to 1 ("0", "0.25", "1"); negative, above 1 or not a number is refused.
double parse_fraction(std::string_view text, std::string_view option);

// Comma-separated list; entries trimmed, empty entries refused.
std::vector<std::string> split_list(std::string_view text, std::string_view option);

// "1,2,4-8,16" -> positive integers in the user's order (ranges expanded); zero refused.
std::vector<unsigned> parse_thread_list(std::string_view text, std::string_view option);

// "0,2,4-7" -> CPU numbers (zero allowed).
std::vector<int> parse_cpu_list(std::string_view text, std::string_view option);

// The closest candidate by edit distance, "" if none is close enough to suggest.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// Renders nanoseconds for people: "850 ns", "12.5 us", "3.20 ms", "2.00 s".
std::string format_duration(double ns);

}  // namespace lockprof
