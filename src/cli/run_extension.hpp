// Optional parts of a run that add options, per-thread instruments and outputs (PMU counters,
// sampling, flamegraphs, reports). run_command.cpp drives them in this order:
//   options() -> configure() -> instrumentation() -> [the sweep] -> finish() -> outputs
// Adding one: implement RunExtension in src/cli/<name>_extension.cpp and list its factory in
// run_extensions.cpp.
#pragma once

#include <memory>
#include <ostream>
#include <vector>

#include <boost/program_options.hpp>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/measure/instrument.hpp"
#include "lockprof/workload/results.hpp"
#include "lockprof/workload/spec.hpp"

namespace lockprof::cli {

class RunExtension {
  public:
    virtual ~RunExtension() = default;
    // Options this extension adds to `lockprof run` (and that profiles may set).
    virtual boost::program_options::options_description options() = 0;
    // Validates its options before anything runs (throw UsageError); may add notes to `run`.
    virtual void configure(const boost::program_options::variables_map& vm,
                           const workload::RunSpec& spec, workload::RunResult& run) = 0;
    // Per-thread instrumentation for the sweep, or nullptr.
    virtual measure::Instrumentation* instrumentation() { return nullptr; }
    // After the sweep (also after an interrupt): adds to the result before it is summarised.
    virtual void finish(workload::RunResult&) {}
    // Extra human output after the table (explanations, annotations) and extra files.
    virtual void write_outputs(const workload::RunResult&,
                               const std::vector<analysis::CellSummary>&, std::ostream&) {}
};

std::vector<std::unique_ptr<RunExtension>> make_run_extensions();

}  // namespace lockprof::cli
