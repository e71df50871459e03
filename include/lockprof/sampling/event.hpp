// Which perf_event a sampler samples: any name pmu::resolve_event understands (aliases such as
// cycles or stxr_fail, libpfm4 strings, raw codes), prepared for sampling.
#pragma once

#include <string>
#include <string_view>

#include <linux/perf_event.h>

namespace lockprof::sampling {

struct SampleEvent {
    std::string name;         // as requested
    perf_event_attr attr{};   // the encoding; the sampler adds the sampling fields
    bool hardware = false;    // counted by a PMU (precise_ip may apply)
    std::string unavailable;  // why this CPU cannot count it ("" when it may)
};

// The event for a --sample-event name. Throws UsageError for names nothing knows.
SampleEvent sample_event(std::string_view name);

// The software clock every Linux with perf_event can sample: the fallback event.
SampleEvent cpu_clock_event();

}  // namespace lockprof::sampling
