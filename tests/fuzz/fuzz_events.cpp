// Event strings (`--event a,b`, `--sample-event`, `record -e`): the list split as pmu_options
// splits it, each name resolved through the alias table and libpfm4 (src/pmu/events.cpp,
// try_resolve_event; src/sampling/event.cpp, sample_event), with and without --kernel.
#include "fuzz_support.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/pmu/aliases.hpp"
#include "lockprof/pmu/events.hpp"
#include "lockprof/sampling/event.hpp"

using namespace lockprof;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const bool kernel = data[0] & 1;
    const std::string_view text = fuzz::text(data + 1, size - 1);
    fuzz::refusals_only([&] {
        for (const auto& name : split_list(text, "event")) {
            const auto r = pmu::try_resolve_event(name, kernel);
            fuzz::check(r.status == pmu::Resolution::Status::ok || !r.message.empty(),
                        "a name that does not resolve says why");
            if (r.status == pmu::Resolution::Status::ok)
                fuzz::check(!r.event.pfm_name.empty(), "a resolved event has its libpfm4 name");
            if (data[0] & 2) (void)sampling::sample_event(name);
            if (data[0] & 4)
                for (auto isa : {pmu::Isa::x86_64, pmu::Isa::aarch64})
                    (void)pmu::plan_alias(name, isa, "");
        }
    });
    return 0;
}
