// The sampling and annotation options of `run` and `record`, one object for both: --sample,
// --sample-event, --sample-period, --sample-freq, --call-graph (read into a SamplerRequest),
// --objdump and --annotate-top (what the annotation lists), declared, documented and checked
// the same way.
// Each command adds its own around them (`run`: --sampler, --samples-out, --explain;
// `record`: --lock-pattern, --top) and its stack outputs (stack_outputs.hpp).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include <boost/program_options.hpp>

#include "lockprof/attribution/annotate.hpp"
#include "lockprof/sampling/sampler.hpp"

namespace lockprof::cli {

// What `--call-graph fp|dwarf[,SIZE]` asks for: frame-pointer call chains from the kernel
// (fp), or the sampled thread's user registers and SIZE bytes of its stack, unwound after the
// run from .eh_frame (dwarf; perf's default SIZE, 8192).
struct CallGraphRequest {
    enum class Method { fp, dwarf };
    Method method = Method::fp;
    std::uint32_t stack_size = 0;  // dwarf: bytes of user stack per sample
};
inline constexpr std::uint32_t kDefaultDwarfStack = 8192;
// perf_event_attr::sample_stack_user is a u32 the kernel wants 8-byte aligned, and a sample
// record is at most 64 KiB with its header and other fields: perf's limit is 65528.
inline constexpr std::uint32_t kMaxDwarfStack = 65528;

// Parses --call-graph's value; UsageError (one line: what, why, what to do) otherwise.
CallGraphRequest parse_call_graph(const std::string& value);

class SamplingOptions {
  public:
    // What the command's help says --sample does; --annotate-top's default; what one
    // annotation lists its functions for (" per cell"; "" for the whole recording).
    // hottest_by_default: without --annotate-top the command prints each cell's hottest
    // instructions only (a run's terminal), and its help says so.
    // call_graph_takers: what --call-graph applies to, for its help ("--sample").
    SamplingOptions(std::string sample_help, unsigned default_annotate_top, std::string per,
                    bool hottest_by_default = false, std::string call_graph_takers = "--sample");

    // The options, without a caption: a command lists them in a group of its own
    // (add_options_of).
    boost::program_options::options_description options() const;
    // Only --objdump and --annotate-top, for `annotate`, which reads saved samples.
    boost::program_options::options_description annotation_options() const;

    // --sample, or an option that implies it: --sample-event/--sample-period/--sample-freq,
    // any stack output (stack_outputs()), or one of the command's own `also`.
    bool requested(const boost::program_options::variables_map& vm,
                   std::initializer_list<const char*> also = {}) const;

    // The event, rate and call-graph method asked for, into `request` (its sampler kind is
    // the command's).
    void read_request(const boost::program_options::variables_map& vm,
                      sampling::SamplerRequest& request) const;

    // --call-graph as given (fp when not given), checked now (UsageError). It chooses how the
    // stacks of sampling (and record's --spin probes) are taken, and takes nothing by itself:
    // `takes_stacks` says whether anything the command line asks for does; if not, a usage
    // error says to add `what` ("--sample", "--sample or --spin").
    CallGraphRequest call_graph(const boost::program_options::variables_map& vm, bool takes_stacks,
                                const char* what) const;

    struct Annotation {
        unsigned listed = 0;  // --annotate-top: functions listed instruction by instruction
        bool asked = false;   // --annotate-top given, not its default
        // top_functions at least 3 whatever is listed: the explanation and the spin-lock view
        // read the hottest functions' instructions even without listings.
        attribution::AnnotateOptions options;
    };
    // --annotate-top and --objdump, checked now (UsageError).
    Annotation annotation(const boost::program_options::variables_map& vm) const;

  private:
    std::string sample_help_;
    unsigned default_annotate_top_;
    std::string per_;
    bool hottest_by_default_ = false;
    std::string call_graph_help_;
};

}  // namespace lockprof::cli
