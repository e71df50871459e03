// `perf script` text (`lockprof fold`, src/export/perf_script.cpp, fold_perf_script) under every
// option the command has (the first byte picks them), and what folding promises: the stacks are
// valid folded text (the folded reader takes them back, strict, unchanged), their total is the
// sum of their weights, and the report's counts agree with each other.
#include <sstream>
#include <string>

#include "fuzz_support.hpp"
#include "perf_script_options.hpp"
#include "lockprof/export/folded.hpp"
#include "lockprof/export/perf_script.hpp"

using namespace lockprof;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const exporting::PerfScriptOptions options = fuzz::perf_script_options(data[0], "cycles");
    const std::string input(fuzz::text(data + 1, size - 1));

    exporting::PerfScriptReport report;
    exporting::FoldedStacks stacks;
    fuzz::refusals_only([&] {
        std::istringstream in(input);
        stacks = exporting::fold_perf_script(in, "fuzz.perf", options, report);
    });
    fuzz::check(report.folded + report.other_event <= report.samples,
                "no more samples folded or left out than seen");
    fuzz::check(report.skipped <= report.lines, "no more lines skipped than read");

    std::uint64_t sum = 0;
    for (const auto& [stack, weight] : stacks.stacks())
        fuzz::check(!__builtin_add_overflow(sum, weight, &sum),
                    "the stacks' weights add up without wrapping around 2^64");
    fuzz::check(sum == stacks.total(), "total() is the sum of the stacks' weights");

    std::istringstream again(exporting::to_folded_text(stacks));
    exporting::ParseReport reread;
    const auto back = exporting::parse_folded(again, "folded", {}, reread);
    if (!reread.problems.empty())
        std::fprintf(stderr, "fuzz: folded line refused: %s\n", reread.problems.front().c_str());
    fuzz::check(reread.skipped == 0, "folding writes only valid folded lines");
    fuzz::check(back.stacks() == stacks.stacks(), "the folded stacks read back unchanged");
    return 0;
}
