// Samples files (`--samples-out`, read by `lockprof convert`, `annotate`, `report`): the result
// reader (src/report/json.cpp, result_from_text) on files holding raw samples and their
// mappings, then what convert and annotate make of the samples without opening files: the loss
// notes, the per-cell annotation and the folded stacks, resolved against no module (the input's
// paths are never opened; no objdump runs).
#include "fuzz_support.hpp"
#include "lockprof/attribution/run_attribution.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/results/result_reader.hpp"

using namespace lockprof;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const symbols::SymbolResolver resolver{std::vector<measure::MappedModule>{}};
    fuzz::refusals_only([&] {
        workload::RunResult run = results::result_from_text(fuzz::text(data, size), "fuzz");
        (void)attribution::loss_notes(run);
        if (!run.sampling || !attribution::has_raw_samples(run)) return;
        run.sampling->modules.clear();
        attribution::AnnotateOptions options;
        options.objdump = "/nonexistent/objdump";
        attribution::RunAttribution attribution;
        attribution.cells = attribution::annotate_cells(run, resolver, options);
        fuzz::check(attribution.cells.size() == run.cells.size(), "one annotation per cell");
        const attribution::Leaf leaves[] = {attribution::Leaf::function, attribution::Leaf::phase,
                                            attribution::Leaf::instruction};
        const auto stacks = attribution::folded_stacks(run, attribution, leaves[size % 3]);
        std::uint64_t sum = 0;
        for (const auto& [stack, weight] : stacks.stacks())
            fuzz::check(!__builtin_add_overflow(sum, weight, &sum),
                        "the stacks' weights add up without wrapping around 2^64");
    });
    return 0;
}
