// /proc/PID/maps text (src/symbols/resolver.cpp, parse_maps): what process_modules reads for the
// run's own samples and record reads for every traced process. Kernels of other versions, and
// paths with spaces, newlines or " (deleted)", are the outside input here.
#include "fuzz_support.hpp"
#include "lockprof/symbols/resolver.hpp"

using namespace lockprof;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::refusals_only([&] {
        for (const auto& m : symbols::parse_maps(fuzz::text(data, size)))
            fuzz::check(m.path == symbols::kVdso || (!m.path.empty() && m.path[0] == '/'),
                        "only files and the vDSO are kept");
    });
    return 0;
}
