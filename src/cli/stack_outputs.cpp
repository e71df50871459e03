#include "cli/stack_outputs.hpp"

#include <array>

#include <fmt/format.h>

#include "lockprof/common/output_file.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/export/speedscope.hpp"
#include "lockprof_build_info.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

namespace {

std::string render_folded(const SampledStacks& s) {
    return exporting::to_folded_text(s.stacks, s.labels.count_name);
}

std::string render_flamegraph(const SampledStacks& s) {
    return exporting::render_flamegraph_svg(s.stacks, s.labels);
}

std::string render_speedscope(const SampledStacks& s) {
    exporting::SpeedscopeOptions options;
    options.name = s.labels.title;
    options.exporter = std::string("lockprof ") + LOCKPROF_VERSION;
    options.unit = s.labels.count_name == exporting::kCpuTimeUnit ? "nanoseconds" : "none";
    return exporting::to_speedscope(s.stacks, options);
}

std::string render_pprof(const SampledStacks& s) {
    if (!s.profile) throw Error("pprof: this command has no raw samples to write");
    return exporting::pprof::encode_pprof(s.profile());
}

// clang-format off
constexpr std::array kStackOutputs{
    StackOutput{"folded", "folded stacks, one line per stack (docs/flamegraph.md)", render_folded},
    StackOutput{"flamegraph", "an interactive SVG flamegraph", render_flamegraph},
    StackOutput{"pprof", "a gzip'd pprof profile at instruction addresses, with lock, "
                "thread and process labels (go tool pprof FILE; docs/flamegraph.md)",
                render_pprof, false},
    StackOutput{"speedscope", "a speedscope profile, one per cell or process (open it at "
                "speedscope.app or with `npx speedscope FILE`; docs/flamegraph.md)",
                render_speedscope},
};
// clang-format on

}  // namespace

std::span<const StackOutput> stack_outputs() {
    return kStackOutputs;
}

StackOutputs::StackOutputs(std::string roots, std::string instruction_leaf_example,
                           bool implies_sample, bool loop_phases)
    : roots_(std::move(roots)),
      instruction_leaf_example_(std::move(instruction_leaf_example)),
      implies_sample_(implies_sample),
      loop_phases_(loop_phases) {}

po::options_description StackOutputs::options() const {
    po::options_description o;
    std::string names;
    for (const auto& output : stack_outputs()) {
        o.add_options()(output.name, po::value<std::string>(),
                        fmt::format("write the samples as {}{}", output.help,
                                    implies_sample_ ? "; implies --sample" : "")
                            .c_str());
        if (output.leaf) names += fmt::format("{}--{}", names.empty() ? "" : "/", output.name);
    }
    const std::string help =
        loop_phases_ ? fmt::format(
                           "leaf frames of {}: phase (in the measured loop, where the time went "
                           "-- acquire loop, critical section, release, parallel work, loop "
                           "harness -- and the instruction under it; elsewhere the function), "
                           "function, or instruction (every stack ends in one: {}); their root "
                           "frames are {}",
                           names, instruction_leaf_example_, roots_)
                     : fmt::format(
                           "leaf frames of {}: function, or instruction ({}); their root "
                           "frames are {}",
                           names, instruction_leaf_example_, roots_);
    o.add_options()("leaf",
                    po::value<std::string>()->default_value(loop_phases_ ? "phase" : "function"),
                    help.c_str());
    return o;
}

void StackOutputs::read(const po::variables_map& vm) {
    const std::string leaf = vm["leaf"].as<std::string>();
    if (leaf == "function")
        leaf_ = attribution::Leaf::function;
    else if (leaf == "instruction")
        leaf_ = attribution::Leaf::instruction;
    else if (leaf == "phase" && loop_phases_)
        leaf_ = attribution::Leaf::phase;
    else
        throw UsageError(fmt::format(
            "--leaf: '{}' is not a leaf kind; use {}", leaf,
            loop_phases_ ? "phase, function or instruction" : "function or instruction"));
    files_.clear();
    for (const auto& output : stack_outputs())
        if (vm.count(output.name)) {
            const std::string path = vm[output.name].as<std::string>();
            check_output(path, output.name);
            files_.emplace_back(&output, path);
        }
}

void StackOutputs::write(const std::function<SampledStacks()>& stacks) const {
    if (files_.empty()) return;
    const SampledStacks sampled = stacks();
    for (const auto& [output, path] : files_) write_output(path, output->render(sampled));
}

}  // namespace lockprof::cli
