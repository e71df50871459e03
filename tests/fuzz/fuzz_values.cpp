// Durations, counts and lists as users type them (src/common/parse.cpp: --duration, --acquires,
// --threads, --pin-cpus, --event lists), record's --pid lists (record/targets) and delay names
// (arch::parse_delay: --delay and result files). The first byte picks the parser, the rest is
// the text.
#include <algorithm>

#include "fuzz_support.hpp"
#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/record/targets.hpp"

using namespace lockprof;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string_view value = fuzz::text(data + 1, size - 1);
    fuzz::refusals_only([&] {
        switch (data[0] % 8) {
            case 0:
                fuzz::check(parse_duration_ns(value, "duration") <= 1'000'000'000'000'000'000ull,
                            "durations are at most 1e18 ns");
                break;
            case 1:
                parse_count(value, "acquires");
                break;
            case 2:
                for (const auto& item : split_list(value, "event"))
                    fuzz::check(!item.empty() && item.find(',') == std::string::npos &&
                                    item.front() != ' ' && item.back() != ' ',
                                "list entries are trimmed, non-empty and comma-free");
                break;
            case 3: {
                const auto threads = parse_thread_list(value, "threads");
                fuzz::check(std::all_of(threads.begin(), threads.end(),
                                        [](unsigned t) { return t >= 1 && t <= 1000000; }),
                            "thread counts are 1..1000000");
                break;
            }
            case 4: {
                const auto cpus = parse_cpu_list(value, "pin-cpus");
                fuzz::check(std::all_of(cpus.begin(), cpus.end(),
                                        [](int c) { return c >= 0 && c <= 1000000; }),
                            "CPU numbers are 0..1000000");
                break;
            }
            case 5: {
                const auto pids = record::parse_pid_list(value, "pid");
                fuzz::check(std::all_of(pids.begin(), pids.end(), [](pid_t p) { return p > 0; }),
                            "pids are positive");
                break;
            }
            case 6:
                arch::parse_delay(value, "--delay");
                break;
            default:
                did_you_mean(value, {"threads", "duration", "acquires", "critical-ns", "lock"});
                break;
        }
    });
    return 0;
}
