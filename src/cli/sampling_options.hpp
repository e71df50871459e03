// The sampling-rate options that `run` and `record` share: --sample-event, --sample-period,
// --sample-freq, read into a SamplerRequest the same way for both.
#pragma once

#include <boost/program_options.hpp>

#include "lockprof/sampling/sampler.hpp"

namespace lockprof::cli {

void read_sampler_options(const boost::program_options::variables_map& vm,
                          sampling::SamplerRequest& request);

}  // namespace lockprof::cli
