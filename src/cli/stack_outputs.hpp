// The stack outputs of sampled runs and recordings, one table for `run` and `record`: a row
// per exporter (name, help, renderer) drives the option's declaration, "implies --sample",
// the check that its path can be written before anything runs, and the write. A new exporter
// is one row in stack_outputs.cpp and its renderer.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

#include "lockprof/export/flamegraph_svg.hpp"
#include "lockprof/export/folded.hpp"
#include "lockprof/export/pprof.hpp"
#include "lockprof/attribution/stacks.hpp"

namespace lockprof::cli {

// What every exporter renders from: the folded stacks, the labels a graph shows (title,
// subtitle, unit; exporting::sampled_flamegraph_options), and the samples as a pprof profile
// (instruction addresses, mappings, labels), built only when a row asks for it.
struct SampledStacks {
    exporting::FoldedStacks stacks;
    exporting::SvgOptions labels;
    std::function<exporting::pprof::Profile()> profile;
};

struct StackOutput {
    const char* name;  // the option, --NAME FILE
    const char* help;  // what FILE holds, completing "write the samples as ..."
    std::string (*render)(const SampledStacks&);
    bool leaf = true;  // --leaf shapes its frames (folded stacks do; pprof keeps addresses)
};

// Every exporter, in the order they are written.
std::span<const StackOutput> stack_outputs();

// One command's stack outputs: the table's options with --leaf, and, once read, the files
// the command line asks for.
class StackOutputs {
  public:
    // For --help: what the stacks' root frames are ("the process name") and an instruction
    // leaf frame as this command's stacks show one ("sym+0x1c pause").
    // implies_sample: the command samples when an output is asked for (run, record), as
    // opposed to reading saved samples (convert).
    // loop_phases: the stacks are lockprof's own runs, whose measured loop has phases
    // (attribution::Leaf::phase, the default then).
    StackOutputs(std::string roots, std::string instruction_leaf_example,
                 bool implies_sample = true, bool loop_phases = false);

    // Every row's --NAME FILE and --leaf, without a caption (add_options_of).
    boost::program_options::options_description options() const;

    // Reads --leaf and the files asked for, and checks now that each can be written
    // (UsageError), so a long run never ends in an unwritable path.
    void read(const boost::program_options::variables_map& vm);

    bool any() const { return !files_.empty(); }
    // --leaf: what the stacks end in.
    attribution::Leaf leaf() const { return leaf_; }
    bool instruction_leaf() const { return leaf_ == attribution::Leaf::instruction; }

    // Renders every output asked for into its file (write_output(), docs/reliability.md); `stacks`
    // is called once, and only when some output was asked for.
    void write(const std::function<SampledStacks()>& stacks) const;

  private:
    std::string roots_, instruction_leaf_example_;
    bool implies_sample_ = true;
    bool loop_phases_ = false;
    attribution::Leaf leaf_ = attribution::Leaf::function;
    std::vector<std::pair<const StackOutput*, std::string>> files_;  // row, path
};

}  // namespace lockprof::cli
