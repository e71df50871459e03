// perf.data files (`lockprof fold perf.data`, `convert perf.data`, `flamegraph perf.data`;
// src/perfdata/perf_data.cpp, PerfData::from_bytes, what open() does on the mapped file), then
// what those commands do with every file that reads: fold() replays its records into folded
// stacks under the fold options (the input's size picks them, so the bytes stay a perf.data
// file), and perf_data_pprof() builds convert's profile. Kernel symbols and perf's build-id cache
// point nowhere; the files the mmap records name are opened read-only, as fold does.
#include <string>

#include "fuzz_support.hpp"
#include "perf_script_options.hpp"
#include "lockprof/perfdata/perf_data.hpp"

using namespace lockprof;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The options from the input's size, so that its bytes stay a perf.data file.
    const exporting::PerfScriptOptions options =
        fuzz::perf_script_options(static_cast<std::uint8_t>(size), "cpu-clock");
    perfdata::ResolveOptions resolve;
    resolve.debug_dir = "/nonexistent/lockprof-fuzz/.debug";
    resolve.kallsyms = "/nonexistent/lockprof-fuzz/kallsyms";

    fuzz::refusals_only([&] {
        const auto file =
            perfdata::PerfData::from_bytes(std::string(fuzz::text(data, size)), "fuzz");
        fuzz::check(!file.events().empty(), "a file that reads has an event");
        fuzz::check(file.data_offset() <= size && file.data_size() <= size - file.data_offset(),
                    "the data section lies inside the bytes given");
        exporting::PerfScriptReport report;
        const auto stacks = perfdata::fold(file, options, report, resolve);
        std::uint64_t sum = 0;
        for (const auto& [stack, weight] : stacks.stacks())
            fuzz::check(!__builtin_add_overflow(sum, weight, &sum),
                        "the stacks' weights add up without wrapping around 2^64");
        fuzz::check(sum == stacks.total(), "total() is the sum of the stacks' weights");
        fuzz::check(report.folded + report.other_event <= report.samples,
                    "no more samples folded or left out than seen");
        (void)perfdata::perf_data_pprof(file, resolve);
    });
    return 0;
}
