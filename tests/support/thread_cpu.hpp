// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID) in nanoseconds, for tests that burn or
// measure a thread's own CPU time.
#pragma once

#include <cstdint>
#include <ctime>

namespace lockprof::test {

inline std::uint64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace lockprof::test
