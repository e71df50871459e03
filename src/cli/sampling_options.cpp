#include "cli/sampling_options.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cli/stack_outputs.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/report/annotation_report.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

CallGraphRequest parse_call_graph(const std::string& value) {
    const auto comma = value.find(',');
    const std::string method = value.substr(0, comma);
    CallGraphRequest request;
    if (method == "fp") {
        if (comma != std::string::npos)
            throw UsageError(fmt::format(
                "--call-graph {}: fp takes no size, the kernel walks the frame pointers; "
                "write --call-graph fp, or dwarf,SIZE to copy SIZE bytes of stack",
                value));
        return request;
    }
    if (method != "dwarf")
        throw UsageError(fmt::format(
            "--call-graph {}: '{}' is not a call-graph method lockprof supports; use fp "
            "(frame pointers) or dwarf[,SIZE] (unwound from .eh_frame)",
            value, method));
    request.method = CallGraphRequest::Method::dwarf;
    request.stack_size = kDefaultDwarfStack;
    if (comma == std::string::npos) return request;
    const std::string size = value.substr(comma + 1);
    const bool digits =
        !size.empty() && size.size() <= 9 &&
        std::all_of(size.begin(), size.end(), [](char c) { return c >= '0' && c <= '9'; });
    const std::uint64_t bytes = digits ? std::stoull(size) : 0;
    if (!digits || bytes == 0 || bytes > kMaxDwarfStack || bytes % 8 != 0)
        throw UsageError(fmt::format(
            "--call-graph {}: the stack size must be a multiple of 8 bytes from 8 to {} (the "
            "kernel's limit for one sample); give dwarf alone for {}",
            value, kMaxDwarfStack, kDefaultDwarfStack));
    request.stack_size = static_cast<std::uint32_t>(bytes);
    return request;
}

SamplingOptions::SamplingOptions(std::string sample_help, unsigned default_annotate_top,
                                 std::string per, bool hottest_by_default,
                                 std::string call_graph_takers)
    : sample_help_(std::move(sample_help)),
      default_annotate_top_(default_annotate_top),
      per_(std::move(per)),
      hottest_by_default_(hottest_by_default),
      call_graph_help_(fmt::format(
          "fp|dwarf[,SIZE]: how call stacks are taken. fp (default): the kernel follows frame "
          "pointers, cheap but cut short by code built without them (glibc, most -O2 "
          "builds, parts of Debian's PostgreSQL); dwarf: each sample copies the user registers and "
          "SIZE "
          "bytes of stack (default {}, at most {}), unwound by lockprof from .eh_frame after "
          "the measurement: whole stacks, for bigger samples (mind lost samples: lower "
          "--sample-freq or SIZE) and the unwinding time. Needs {}; perf_event only (not the "
          "timer sampler)",
          kDefaultDwarfStack, kMaxDwarfStack, call_graph_takers)) {}

po::options_description SamplingOptions::options() const {
    po::options_description o;
    // clang-format off
    o.add_options()
        ("sample", po::bool_switch(), sample_help_.c_str())
        ("sample-event", po::value<std::string>(),
         "event to sample (implies --sample): cycles (default; cpu-clock where the CPU "
         "cannot count cycles, as in VMs), cpu-clock, or any --event alias such as "
         "stxr_fail to see which instruction fails")
        ("sample-period", po::value<std::string>(),
         "one sample every N events (ns for cpu-clock and the timer sampler); implies "
         "--sample")
        ("sample-freq", po::value<std::string>(),
         "samples per second per thread instead of a period (default 1000); implies --sample")
        ("call-graph", po::value<std::string>(), call_graph_help_.c_str());
    // clang-format on
    o.add(annotation_options());
    return o;
}

po::options_description SamplingOptions::annotation_options() const {
    const std::string annotate_top_help =
        hottest_by_default_
            ? fmt::format(
                  "hottest functions listed instruction by instruction{} (0: none). "
                  "Without it the terminal shows only the {} hottest instructions of "
                  "the {} hottest functions{}; the HTML report (--report) lists each "
                  "function's hot instructions and acquire loop, each with the instruction "
                  "before it (where skid puts a sample), and `lockprof annotate` on "
                  "--samples-out prints the whole listings",
                  per_, report::kHottestRows, default_annotate_top_, per_)
            : fmt::format("hottest functions listed instruction by instruction{} (0: none)", per_);
    po::options_description o;
    // clang-format off
    o.add_options()
        ("objdump", po::value<std::string>(),
         "objdump to disassemble with (default: objdump, or aarch64-linux-gnu-objdump for "
         "aarch64 binaries on other hosts)")
        ("annotate-top",
         po::value<std::string>()->default_value(std::to_string(default_annotate_top_)),
         annotate_top_help.c_str());
    // clang-format on
    return o;
}

bool SamplingOptions::requested(const po::variables_map& vm,
                                std::initializer_list<const char*> also) const {
    bool sample = vm["sample"].as<bool>();
    for (const char* implies : {"sample-event", "sample-period", "sample-freq"})
        sample |= vm.count(implies) > 0;
    for (const auto& output : stack_outputs()) sample |= vm.count(output.name) > 0;
    for (const char* implies : also) sample |= vm.count(implies) > 0;
    return sample;
}

void SamplingOptions::read_request(const po::variables_map& vm,
                                   sampling::SamplerRequest& request) const {
    if (vm.count("sample-event")) {
        request.event = vm["sample-event"].as<std::string>();
        request.event_given = true;
    }
    if (vm.count("sample-period"))
        request.period = parse_count(vm["sample-period"].as<std::string>(), "sample-period");
    if (vm.count("sample-freq"))
        request.frequency = parse_count(vm["sample-freq"].as<std::string>(), "sample-freq");
    const auto graph = call_graph(vm, true, "");
    if (graph.method == CallGraphRequest::Method::dwarf) request.dwarf_stack = graph.stack_size;
}

CallGraphRequest SamplingOptions::call_graph(const po::variables_map& vm, bool takes_stacks,
                                             const char* what) const {
    if (!vm.count("call-graph")) return {};
    const std::string value = vm["call-graph"].as<std::string>();
    const CallGraphRequest request = parse_call_graph(value);
    if (!takes_stacks)
        throw UsageError(fmt::format(
            "--call-graph {}: nothing takes call stacks without {}; add it (--call-graph "
            "chooses how the stacks are taken, it samples nothing by itself)",
            value, what));
    return request;
}

SamplingOptions::Annotation SamplingOptions::annotation(const po::variables_map& vm) const {
    const std::uint64_t top = parse_count(vm["annotate-top"].as<std::string>(), "annotate-top");
    if (top > 100) throw UsageError(fmt::format("--annotate-top: at most 100 functions{}", per_));
    Annotation annotation;
    annotation.listed = static_cast<unsigned>(top);
    annotation.asked = !vm["annotate-top"].defaulted();
    annotation.options.top_functions = std::max(3u, annotation.listed);
    if (vm.count("objdump")) {
        annotation.options.objdump = vm["objdump"].as<std::string>();
        if (!program_exists(annotation.options.objdump))
            throw UsageError(fmt::format(
                "--objdump: '{}' is not an executable program; install binutils or give the "
                "path of one",
                annotation.options.objdump));
    }
    return annotation;
}

}  // namespace lockprof::cli
