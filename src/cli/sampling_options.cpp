#include "cli/sampling_options.hpp"

#include "lockprof/common/parse.hpp"

namespace lockprof::cli {

void read_sampler_options(const boost::program_options::variables_map& vm,
                          sampling::SamplerRequest& request) {
    if (vm.count("sample-event")) {
        request.event = vm["sample-event"].as<std::string>();
        request.event_given = true;
    }
    if (vm.count("sample-period"))
        request.period = parse_count(vm["sample-period"].as<std::string>(), "sample-period");
    if (vm.count("sample-freq"))
        request.frequency = parse_count(vm["sample-freq"].as<std::string>(), "sample-freq");
}

}  // namespace lockprof::cli
