// The sampling and annotation options of `run` and `record`, one object for both: --sample,
// --sample-event, --sample-period, --sample-freq (read into a SamplerRequest), --objdump and
// --annotate-top (what the annotation lists), declared, documented and checked the same way.
// Each command adds its own around them (`run`: --sampler, --samples-out, --explain;
// `record`: --lock-pattern, --top) and its stack outputs (stack_outputs.hpp).
#pragma once

#include <initializer_list>
#include <string>

#include <boost/program_options.hpp>

#include "lockprof/sampling/annotate.hpp"
#include "lockprof/sampling/sampler.hpp"

namespace lockprof::cli {

class SamplingOptions {
  public:
    // What the command's help says --sample does; --annotate-top's default; what one
    // annotation lists its functions for (" per cell"; "" for the whole recording).
    // hottest_by_default: without --annotate-top the command prints each cell's hottest
    // instructions only (a run's terminal), and its help says so.
    SamplingOptions(std::string sample_help, unsigned default_annotate_top, std::string per,
                    bool hottest_by_default = false);

    // The options, without a caption: a command lists them in a group of its own
    // (add_options_of).
    boost::program_options::options_description options() const;
    // Only --objdump and --annotate-top, for `annotate`, which reads saved samples.
    boost::program_options::options_description annotation_options() const;

    // --sample, or an option that implies it: --sample-event/--sample-period/--sample-freq,
    // any stack output (stack_outputs()), or one of the command's own `also`.
    bool requested(const boost::program_options::variables_map& vm,
                   std::initializer_list<const char*> also = {}) const;

    // The event and rate asked for, into `request` (its sampler kind is the command's).
    void read_request(const boost::program_options::variables_map& vm,
                      sampling::SamplerRequest& request) const;

    struct Annotation {
        unsigned listed = 0;  // --annotate-top: functions listed instruction by instruction
        bool asked = false;   // --annotate-top given, not its default
        // top_functions at least 3 whatever is listed: the explanation and the spin-lock view
        // read the hottest functions' instructions even without listings.
        sampling::AnnotateOptions options;
    };
    // --annotate-top and --objdump, checked now (UsageError).
    Annotation annotation(const boost::program_options::variables_map& vm) const;

  private:
    std::string sample_help_;
    unsigned default_annotate_top_;
    std::string per_;
    bool hottest_by_default_ = false;
};

}  // namespace lockprof::cli
