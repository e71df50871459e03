#include "lockprof/sampling/event.hpp"

#include "lockprof/common/error.hpp"
#include "lockprof/pmu/events.hpp"

namespace lockprof::sampling {

SampleEvent cpu_clock_event() {
    SampleEvent e;
    e.name = "cpu-clock";
    e.attr.size = sizeof(perf_event_attr);
    e.attr.type = PERF_TYPE_SOFTWARE;
    e.attr.config = PERF_COUNT_SW_CPU_CLOCK;
    return e;
}

SampleEvent sample_event(std::string_view name) {
    // cpu-clock needs no PMU and no libpfm4: never let an encoding problem stand in its way.
    if (name == "cpu-clock") return cpu_clock_event();
    const pmu::Resolution r = pmu::try_resolve_event(name, /*include_kernel=*/false);
    if (r.status == pmu::Resolution::Status::unknown)
        throw UsageError("--sample-event: " + r.message);
    SampleEvent e;
    e.name = std::string(name);
    if (r.status == pmu::Resolution::Status::refused) {
        e.unavailable = r.message;
        e.hardware = true;
        return e;
    }
    e.attr.size = sizeof(perf_event_attr);
    e.attr.type = r.event.attr.type;
    e.attr.config = r.event.attr.config;
    e.attr.config1 = r.event.attr.config1;
    e.attr.config2 = r.event.attr.config2;
    e.hardware = !pmu::is_software(r.event.attr);
    return e;
}

}  // namespace lockprof::sampling
