// Result files (`lockprof compare A B`, `report FILE`, `annotate FILE`; src/report/json.cpp,
// result_from_text, what read_result calls on the file's text), then what those commands do
// with every file that reads: the per-cell summaries (analysis::summarize) and the result
// document written from them (report::to_json).
#include "fuzz_support.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/results/result_reader.hpp"

using namespace lockprof;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::refusals_only([&] {
        const workload::RunResult run = results::result_from_text(fuzz::text(data, size), "fuzz");
        const auto summaries = analysis::summarize(run);
        fuzz::check(summaries.size() == run.cells.size(), "one summary per cell");
        (void)report::to_json(run, summaries).dump();
    });
    return 0;
}
