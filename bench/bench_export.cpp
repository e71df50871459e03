// Writes pprof and speedscope files of SAMPLES samples over STACKS stacks (the shapes of
// bench/gen_perf_script: 8 frames, 10 functions per level of 5, a kernel tail on every 10th
// stack) and prints how long each encoder took, for bench/bench-flamegraph.sh. The pprof
// profile has one sample per raw sample with two labels, as attribution::PprofBuilder builds a
// run's; speedscope gets the folded stacks, as every stack output does. Not a test.
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lockprof/export/folded.hpp"
#include "lockprof/export/pprof.hpp"
#include "lockprof/export/speedscope.hpp"

namespace pprof = lockprof::exporting::pprof;

int main(int argc, char** argv) {
    const std::uint64_t samples = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
    const std::uint64_t stacks = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100000;
    if (stacks == 0 || stacks > 100000) {
        std::fprintf(stderr, "bench_export: STACKS must be 1..100000\n");
        return 2;
    }
    // Wall and CPU time: on a shared machine the CPU time is the figure that means something.
    struct Clock {
        double wall, cpu;
    };
    const auto now = [] {
        timespec w{}, c{};
        clock_gettime(CLOCK_MONOTONIC, &w);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
        return Clock{static_cast<double>(w.tv_sec) + static_cast<double>(w.tv_nsec) * 1e-9,
                     static_cast<double>(c.tv_sec) + static_cast<double>(c.tv_nsec) * 1e-9};
    };
    const auto took = [](Clock a, Clock b) {
        return std::to_string(b.wall - a.wall).substr(0, 5) + " s wall, " +
               std::to_string(b.cpu - a.cpu).substr(0, 5) + " s cpu";
    };

    // Functions and locations: _start, main, 5 levels x 10, two kernel frames.
    pprof::Profile profile;
    profile.sample_types = {{"samples", "count"}, {"cpu", "nanoseconds"}};
    profile.period_type = {"cpu", "nanoseconds"};
    profile.period = 250000;
    profile.mappings.push_back(
        {1, 0x400000, 0x500000, 0, "/usr/bin/lockbench", "", true, false, false, false});
    std::vector<std::string> names = {"_start", "main", "do_syscall_64",
                                      "entry_SYSCALL_64_after_hwframe"};
    for (int level = 0; level < 5; ++level)
        for (int fn = 0; fn < 10; ++fn)
            names.push_back("lock_level" + std::to_string(level) + "_fn" + std::to_string(fn));
    for (std::size_t i = 0; i < names.size(); ++i) {
        profile.functions.push_back({i + 1, names[i], names[i], "/src/lockbench.c", 0});
        profile.locations.push_back({i + 1, 1, 0x401000 + i * 0x10, {{i + 1, 10}}});
    }
    static constexpr std::uint64_t kPlace[5] = {10000, 1000, 100, 10, 1};
    const auto t0 = now();
    lockprof::exporting::FoldedStacks folded;
    profile.samples.reserve(samples);
    for (std::uint64_t i = 0; i < samples; ++i) {
        const std::uint64_t id = (i * 7919) % stacks;
        pprof::Sample s;
        std::string stack = "lockbench;_start;main";
        if (id % 10 == 0) s.location_ids = {4, 3};
        for (int level = 5; level-- > 0;)
            s.location_ids.push_back(5 + level * 10 + (id / kPlace[level]) % 10);
        s.location_ids.push_back(2);
        s.location_ids.push_back(1);
        for (auto it = s.location_ids.rbegin(); it != s.location_ids.rend(); ++it)
            if (*it > 2) stack += ";" + names[*it - 1];
        s.values = {1, 250000};
        s.labels = {pprof::Label::text("thread", "0"), pprof::Label::number("tid", 4242)};
        profile.samples.push_back(std::move(s));
        folded.add_line(stack, 250000);
    }
    const auto t1 = now();
    const std::string pb = pprof::encode_pprof(profile);
    const auto t2 = now();
    lockprof::exporting::SpeedscopeOptions options;
    options.name = "bench";
    options.unit = "nanoseconds";
    const std::string json = lockprof::exporting::to_speedscope(folded, options);
    const auto t3 = now();
    std::printf("built %llu samples over %zu stacks: %s\n",
                static_cast<unsigned long long>(samples), folded.size(), took(t0, t1).c_str());
    std::printf("pprof:      %s (%zu KiB gzip'd)\n", took(t1, t2).c_str(), pb.size() / 1024);
    std::printf("speedscope: %s (%zu KiB)\n", took(t2, t3).c_str(), json.size() / 1024);
    return 0;
}
