// Sampling, annotation and the explanation for `lockprof run`: --sample and friends, --explain,
// --folded/--flamegraph. The sampler is chosen (and perf_event probed) in configure(), so the
// run says which sampler it uses, and why, before anything is measured.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/run_extension.hpp"
#include "cli/sampling_options.hpp"
#include "lockprof/analysis/explain.hpp"
#include "lockprof/common/atomic_file.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/export/flamegraph_svg.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/sampling/report.hpp"
#include "lockprof/sampling/sampler.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/symbols/resolver.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

class SamplingExtension : public RunExtension {
  public:
    po::options_description options() override {
        po::options_description o("Sampling, annotation and explanation");
        // clang-format off
        o.add_options()
            ("sample", po::bool_switch(),
             "sample where each worker thread spends its time and annotate the hottest "
             "functions instruction by instruction (docs/sampling.md)")
            ("sample-event", po::value<std::string>(),
             "event to sample (implies --sample): cycles (default; cpu-clock where the CPU "
             "cannot count cycles, as in VMs), cpu-clock, or any --event alias such as "
             "stxr_fail to see which instruction fails")
            ("sample-period", po::value<std::string>(),
             "one sample every N events (ns for cpu-clock and the timer sampler); implies "
             "--sample")
            ("sample-freq", po::value<std::string>(),
             "samples per second instead of a period (default 1000); implies --sample")
            ("sampler", po::value<std::string>(),
             "auto (perf_event, else CPU-time timer signals), perf, or timer; implies --sample")
            ("samples-out", po::value<std::string>(),
             "also write the result with every raw sample to this JSON file, for "
             "`lockprof annotate FILE`; implies --sample")
            ("explain", po::bool_switch(),
             "print a numbered diagnosis per compared lock pair (default when sampling or "
             "counting events)")
            ("no-explain", po::bool_switch(), "do not print the diagnosis")
            ("objdump", po::value<std::string>(),
             "objdump to disassemble with (default: objdump, or aarch64-linux-gnu-objdump for "
             "aarch64 binaries on other hosts)")
            ("annotate-top", po::value<std::string>()->default_value("3"),
             "functions annotated per cell (0: no listings)")
            ("folded", po::value<std::string>(),
             "write the samples as folded stacks (root frame per cell, e.g. tas/2t); implies "
             "--sample")
            ("flamegraph", po::value<std::string>(),
             "write the samples as an SVG flamegraph; implies --sample")
            ("leaf", po::value<std::string>()->default_value("function"),
             "leaf frames of --folded/--flamegraph: function, or instruction (sym+0x1c xchg)");
        // clang-format on
        return o;
    }

    void configure(const po::variables_map& vm, const workload::RunSpec& spec,
                   workload::RunResult& run) override {
        sample_ = vm["sample"].as<bool>();
        for (const char* implies : {"sample-event", "sample-period", "sample-freq", "sampler",
                                    "samples-out", "folded", "flamegraph"})
            sample_ |= vm.count(implies) > 0;
        if (vm["explain"].as<bool>() && vm["no-explain"].as<bool>())
            throw UsageError("--explain and --no-explain contradict each other; drop one");
        // --quiet keeps stdout empty unless an explanation is asked for by name.
        const bool quiet = vm.count("quiet") && vm["quiet"].as<bool>();
        explain_ = vm["explain"].as<bool>()      ? std::optional<bool>(true)
                   : vm["no-explain"].as<bool>() ? std::optional<bool>(false)
                   : quiet                       ? std::optional<bool>(false)
                                                 : std::nullopt;
        quiet_ = quiet;
        const std::uint64_t top = parse_count(vm["annotate-top"].as<std::string>(), "annotate-top");
        if (top > 100) throw UsageError("--annotate-top: at most 100 functions per cell");
        listing_top_ = static_cast<unsigned>(top);
        // The explanation reads the hottest functions' instructions even without listings.
        annotate_.top_functions = std::max(3u, listing_top_);
        const std::string leaf = vm["leaf"].as<std::string>();
        if (leaf != "function" && leaf != "instruction")
            throw UsageError(
                fmt::format("--leaf: '{}' is not a leaf kind; use function or instruction", leaf));
        instruction_leaf_ = leaf == "instruction";
        if (vm.count("objdump")) {
            annotate_.objdump = vm["objdump"].as<std::string>();
            if (!symbols::program_exists(annotate_.objdump))
                throw UsageError(fmt::format(
                    "--objdump: '{}' is not an executable program; install binutils or give "
                    "the path of one",
                    annotate_.objdump));
        }
        for (const char* file : {"samples-out", "folded", "flamegraph"})
            if (vm.count(file)) {
                AtomicFile::check_writable(vm[file].as<std::string>(), file);
                outputs_[file] = vm[file].as<std::string>();
            }
        if (!sample_) return;

        sampling::SamplerRequest request;
        if (vm.count("sampler")) {
            const std::string kind = vm["sampler"].as<std::string>();
            if (kind == "auto")
                request.kind = sampling::SamplerKind::automatic;
            else if (kind == "perf")
                request.kind = sampling::SamplerKind::perf;
            else if (kind == "timer")
                request.kind = sampling::SamplerKind::timer;
            else
                throw UsageError(
                    fmt::format("--sampler: '{}' is not a sampler; use auto, perf or timer", kind));
        }
        read_sampler_options(vm, request);
        request.window_ns = spec.duration_ns;
        sampler_ = sampling::make_sampler(request);
        const auto& info = sampler_->info();
        run.sampling = info;
        run.notes.push_back(fmt::format("sampling: {} sampler ({}), event {}{}", info.sampler,
                                        info.sampler_reason, info.event,
                                        info.event_note.empty() ? "" : ": " + info.event_note));
    }

    workload::Instrumentation* instrumentation() override { return sampler_.get(); }

    void finish(workload::RunResult& run) override {
        if (!sampler_) return;
        run.sampling = sampler_->info();
        run.sampling->modules = symbols::process_modules();
        for (auto& note : sampler_->notes()) run.notes.push_back(std::move(note));
        for (auto& note : sampling::loss_notes(run)) run.notes.push_back(std::move(note));
        // Raw samples stay out of --output (they are big); the copy keeps them for the
        // annotation and --samples-out.
        sampled_run_ = run;
        for (auto& cell : run.cells)
            for (auto& trial : cell.trials)
                for (auto& thread : trial.threads) thread.samples = {};
    }

    void write_outputs(const workload::RunResult& run,
                       const std::vector<analysis::CellSummary>& summaries,
                       std::ostream& out) override {
        std::optional<sampling::Attribution> attribution;
        if (sampled_run_) {
            attribution = sampling::attribute(*sampled_run_, annotate_);
            if (!quiet_)
                out << sampling::render_annotations(*sampled_run_, *attribution, listing_top_);
        }
        bool events = false;
        for (const auto& s : summaries) events |= !s.events.empty();
        if (explain_.value_or(sample_ || events)) {
            const auto diagnoses = analysis::explain(
                sampling::gather_evidence(run, summaries, attribution ? &*attribution : nullptr));
            const std::string text = analysis::render_explanation(diagnoses);
            if (!text.empty()) out << "\n" << text;
        }
        out.flush();
        if (!sampled_run_) return;
        if (auto it = outputs_.find("samples-out"); it != outputs_.end())
            write_file_atomically(it->second,
                                  report::to_json(*sampled_run_, summaries).dump() + "\n");
        const bool folded = outputs_.count("folded"), svg = outputs_.count("flamegraph");
        if (folded || svg) {
            const auto stacks =
                sampling::folded_stacks(*sampled_run_, *attribution, instruction_leaf_);
            if (folded)
                write_file_atomically(outputs_["folded"], exporting::to_folded_text(stacks));
            if (svg) {
                write_file_atomically(outputs_["flamegraph"],
                                      exporting::render_flamegraph_svg(
                                          stacks, sampling::flamegraph_options(*sampled_run_)));
            }
        }
    }

  private:
    bool sample_ = false;
    bool quiet_ = false;
    std::optional<bool> explain_;
    bool instruction_leaf_ = false;
    unsigned listing_top_ = 3;
    sampling::AnnotateOptions annotate_;
    std::map<std::string, std::string> outputs_;
    std::unique_ptr<sampling::Sampler> sampler_;
    std::optional<workload::RunResult> sampled_run_;
};

}  // namespace

std::unique_ptr<RunExtension> make_sampling_extension() {
    return std::make_unique<SamplingExtension>();
}

}  // namespace lockprof::cli
