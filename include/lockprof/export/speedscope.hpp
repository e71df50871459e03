// speedscope's file format (https://www.speedscope.app/file-format-schema.json; the schema
// ships in the speedscope npm package as dist/release/file-format-schema.json): one "sampled"
// profile per root frame of the folded stacks (a run's cell "tas/2t", a recording's process),
// frames shared between them, weights as the stacks carry them.
#pragma once

#include <string>

#include "lockprof/export/folded.hpp"

namespace lockprof::exporting {

struct SpeedscopeOptions {
    std::string name;      // the file's name in speedscope's title ("lockprof: tas, cas")
    std::string exporter;  // "lockprof 0.1.0"
    // What a weight is: "nanoseconds" (cpu-clock samples carry their period in ns) or "none"
    // (event counts, sample counts).
    std::string unit = "none";
};

// The JSON document, one line. Stacks are root first ("tas/2t;worker_main;measured_loop");
// a stack of only its root frame becomes a sample of that frame.
std::string to_speedscope(const FoldedStacks& stacks, const SpeedscopeOptions& options);

}  // namespace lockprof::exporting
