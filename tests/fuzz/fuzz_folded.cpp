// Folded stacks (`lockprof flamegraph FILE`, `--diff`; src/export/folded.cpp, parse_folded): the
// lenient and the strict reading, and what they promise: strict refuses exactly the files the
// lenient reading skips lines of, the total is the sum of the stacks, and the text written back
// (to_folded_text) reads as the same stacks with nothing skipped.
#include <sstream>
#include <string>

#include "fuzz_support.hpp"
#include "lockprof/export/folded.hpp"

using namespace lockprof;

namespace {

// The stacks' weights add up to their total, without wrapping around 2^64.
void check_total(const exporting::FoldedStacks& stacks) {
    std::uint64_t sum = 0;
    for (const auto& [stack, weight] : stacks.stacks()) {
        fuzz::check(weight > 0, "no stack has weight 0");
        fuzz::check(!__builtin_add_overflow(sum, weight, &sum),
                    "the stacks' weights add up without wrapping around 2^64");
    }
    fuzz::check(sum == stacks.total(), "total() is the sum of the stacks' weights");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input(fuzz::text(data, size));
    exporting::ParseReport report;
    exporting::FoldedStacks stacks;
    fuzz::refusals_only([&] {
        std::istringstream in(input);
        stacks = exporting::parse_folded(in, "fuzz.folded", {}, report);
    });
    fuzz::check(report.skipped <= report.lines, "no more lines skipped than read");
    fuzz::check(report.problems.size() == std::min(report.skipped, exporting::kMaxReportedProblems),
                "one problem per skipped line, capped");
    check_total(stacks);

    bool refused = false;
    try {
        std::istringstream in(input);
        exporting::ParseReport strict_report;
        exporting::parse_folded(in, "fuzz.folded", {.strict = true}, strict_report);
    } catch (const UsageError&) {
        refused = true;
    }
    fuzz::check(refused == (report.skipped > 0),
                "--strict refuses exactly the inputs whose lines the lenient reading skips");

    std::istringstream again(exporting::to_folded_text(stacks));
    exporting::ParseReport reread;
    const auto back = exporting::parse_folded(again, "written.folded", {}, reread);
    if (!reread.problems.empty())
        std::fprintf(stderr, "fuzz: folded line refused: %s\n", reread.problems.front().c_str());
    fuzz::check(reread.skipped == 0, "the folded text written back has no malformed line");
    fuzz::check(back.stacks() == stacks.stacks(), "folded text written back reads the same");
    return 0;
}
