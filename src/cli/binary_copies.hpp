// `--binary COPY` of `annotate` and `report`: saved samples resolved against copies of the
// binaries that ran, for annotating on another machine (one with binutils) than the one that
// measured. A copy must have the build id the run recorded.
#pragma once

#include <boost/program_options.hpp>

#include "lockprof/workload/results.hpp"

namespace lockprof::cli {

// Adds --binary (repeatable) to a command's options.
void add_binary_option(boost::program_options::options_description& options);

// Points the run's recorded mappings at each --binary copy; throws UsageError (one line) for a
// copy that cannot be read or whose build id no recorded file has.
void use_binary_copies(const boost::program_options::variables_map& vm, workload::RunResult& run);

}  // namespace lockprof::cli
