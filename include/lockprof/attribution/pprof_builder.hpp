// Raw samples as a pprof profile (exporting::pprof, written by export/pprof): one location per
// sampled instruction address, in the mapping of the file that holds it, with inline-aware
// lines (the functions inlined there, innermost first, then the function that holds them, under
// the short names StackFolder and the annotation give them, resolved through the same
// SymbolResolver; the full demangled name is the function's system name); callers at
// their return address - 1, inside the call. Shared by sampled runs (run_pprof() below) and
// `lockprof record` (record/recording_pprof), so both name the same code the same way.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lockprof/export/pprof.hpp"
#include "lockprof/measure/data.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::attribution {

// True when the sampled event is a clock (cpu-clock, task-clock; the timer sampler's): sample
// weights are then nanoseconds of CPU time, else counts of the event.
bool samples_weigh_time(const measure::SamplingInfo& sampling);

class PprofBuilder {
  public:
    // Sample types samples/count and cpu/nanoseconds, and "<event>/count" when the sampled
    // event is not a clock (cycles, stxr_fail), the default then; period from `sampling`.
    explicit PprofBuilder(const measure::SamplingInfo& sampling);

    // An address space (a process's mappings) and the resolver built from them, which must
    // outlive the builder. Its executable mappings become pprof mappings. Returns its index.
    std::size_t add_address_space(const std::vector<measure::MappedModule>& modules,
                                  const symbols::SymbolResolver& resolver);

    // One sample of address space `space`; `cpu_ns` is the CPU time it stands for (its weight
    // when samples_weigh_time()).
    void add(std::size_t space, const measure::RawSample& sample, std::int64_t cpu_ns,
             std::vector<exporting::pprof::Label> labels);

    bool weighs_time() const { return weighs_time_; }

    // The profile, with its duration, start (Unix epoch ns, 0 unknown) and comments.
    exporting::pprof::Profile finish(std::int64_t duration_ns, std::int64_t time_nanos,
                                     std::vector<std::string> comments);

  private:
    struct Space {
        const symbols::SymbolResolver* resolver = nullptr;
        std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> mappings;  // start ->
                                                                                    // (end, id)
    };
    std::uint64_t location(std::size_t space, std::uint64_t address);
    std::uint64_t function(const std::string& demangled, const std::string& file);

    bool weighs_time_ = true;
    exporting::pprof::Profile profile_;
    std::vector<Space> spaces_;
    std::map<std::pair<std::size_t, std::uint64_t>, std::uint64_t> locations_;
    std::map<std::pair<std::string, std::string>, std::uint64_t> functions_;
};

// Spreads `total` over samples in proportion to their weights (largest remainders, so the
// parts add up to `total`): a thread's CPU time over its samples of a hardware event.
std::vector<std::int64_t> apportion(std::uint64_t total,
                                    const std::vector<const measure::RawSample*>& samples);

// "2026-12-01T12:05:54Z" (Provenance::timestamp_utc) as Unix epoch nanoseconds; 0 when it
// does not parse.
std::int64_t epoch_nanos(const std::string& timestamp_utc);

// A sampled run's raw samples (a live run, or a result file written with --samples-out) as a
// pprof profile. Labels per sample: lock ("tas@llsc"), flavour ("native" for the default
// build), threads (the cell's thread count), thread (the worker's index, as text: pprof drops a
// numeric label of 0) and tid. Duration: the trials' wall time. Empty (no samples) when the run was
// not sampled.
exporting::pprof::Profile run_pprof(const workload::RunResult& run);

}  // namespace lockprof::attribution
