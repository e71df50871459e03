// What every fuzz target shares: the input as text, and the rule that decides a finding.
//
// lockprof::Error (UsageError, exit 2) is how a parser refuses bad input: main prints it as one
// line. Any other exception reaches main as "lockprof: internal error: ..." (a bare "stoull"
// from std::invalid_argument, a json::type_error), so it is a finding like a crash: printed,
// then abort(), which libFuzzer reports and saves as crash-<sha1>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <typeinfo>

#include "lockprof/common/error.hpp"

namespace lockprof::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Runs `parse`, accepting a lockprof::Error as a refusal and nothing else.
template <typename Parse>
void refusals_only(Parse&& parse) {
    try {
        parse();
    } catch (const Error&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz: %s escaped the parser: %s\n", typeid(e).name(), e.what());
        std::abort();
    } catch (...) {
        std::fprintf(stderr, "fuzz: a non-std exception escaped the parser\n");
        std::abort();
    }
}

// A promise a parser makes about what it returns; a broken one is a finding.
inline void check(bool holds, const char* promise) {
    if (holds) return;
    std::fprintf(stderr, "fuzz: broken promise: %s\n", promise);
    std::abort();
}

}  // namespace lockprof::fuzz
