// Sampling, annotation and the explanation for `lockprof run`: the options it shares with
// `record` (SamplingOptions, StackOutputs: --sample and friends, --folded/--flamegraph), and its
// own --sampler, --samples-out, --explain. The sampler is chosen (and perf_event probed) in
// configure(), so the run says which sampler it uses, and why, before anything is measured.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/arguments.hpp"
#include "cli/run_extension.hpp"
#include "cli/sampling_options.hpp"
#include "cli/stack_outputs.hpp"
#include "lockprof/analysis/explain.hpp"
#include "lockprof/common/output_file.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/analysis/report_inputs.hpp"
#include "lockprof/attribution/pprof_builder.hpp"
#include "lockprof/report/annotation_report.hpp"
#include "lockprof/sampling/sampler.hpp"
#include "lockprof/symbols/resolver.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

class SamplingExtension : public RunExtension {
  public:
    po::options_description options() override {
        po::options_description o("Sampling, annotation and explanation");
        add_options_of(o, sampling_.options());
        // clang-format off
        o.add_options()
            ("sampler", po::value<std::string>(),
             "auto (perf_event, else CPU-time timer signals), perf, or timer; implies --sample")
            ("samples-out", po::value<std::string>(),
             "also write the result with every raw sample to this JSON file, for "
             "`lockprof annotate FILE`; implies --sample")
            ("explain", po::bool_switch(),
             "print a numbered diagnosis per compared lock pair (default when sampling or "
             "counting events)")
            ("no-explain", po::bool_switch(), "do not print the diagnosis");
        // clang-format on
        add_options_of(o, stacks_.options());
        return o;
    }

    void configure(const po::variables_map& vm, const workload::RunSpec& spec,
                   workload::RunResult& run) override {
        sample_ = sampling_.requested(vm, {"sampler", "samples-out"});
        if (vm["explain"].as<bool>() && vm["no-explain"].as<bool>())
            throw UsageError("--explain and --no-explain contradict each other; drop one");
        // --quiet keeps stdout empty unless an explanation is asked for by name.
        const bool quiet = vm.count("quiet") && vm["quiet"].as<bool>();
        explain_ = vm["explain"].as<bool>()      ? std::optional<bool>(true)
                   : vm["no-explain"].as<bool>() ? std::optional<bool>(false)
                   : quiet                       ? std::optional<bool>(false)
                                                 : std::nullopt;
        quiet_ = quiet;
        detail_ = vm.count("verbose") && vm["verbose"].as<bool>() ? analysis::Detail::full
                                                                  : analysis::Detail::brief;
        const auto annotation = sampling_.annotation(vm);
        listing_top_ = annotation.listed;
        // The terminal gets each cell's hottest instructions unless listings are asked for.
        listing_detail_ =
            annotation.asked ? report::ListingDetail::full : report::ListingDetail::hottest;
        annotate_ = annotation.options;
        if (vm.count("samples-out")) {
            samples_out_ = vm["samples-out"].as<std::string>();
            check_output(samples_out_, "samples-out");
        }
        stacks_.read(vm);
        sampling_.call_graph(vm, sample_, "--sample");
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
        sampling_.read_request(vm, request);
        request.window_ns = spec.duration_ns;
        sampler_ = sampling::make_sampler(request);
        const auto& info = sampler_->info();
        run.sampling = info;
        run.notes.push_back(fmt::format(
            "sampling: {} sampler ({}), event {}{}; {}", info.sampler, info.sampler_reason,
            info.event, info.event_note.empty() ? "" : ": " + info.event_note,
            info.call_graph == "dwarf"
                ? fmt::format("call stacks unwound from {}-byte stack copies (--call-graph dwarf)",
                              info.stack_size)
                : "frame-pointer call stacks"));
        if (!info.call_graph_note.empty()) run.notes.push_back("sampling: " + info.call_graph_note);
    }

    measure::Instrumentation* instrumentation() override { return sampler_.get(); }

    void finish(workload::RunResult& run) override {
        if (!sampler_) return;
        run.sampling = sampler_->info();
        // With --call-graph dwarf the sampler read them before it unwound anything (libdwfl's
        // own mappings of the files would read as more mappings of the libraries).
        if (run.sampling->modules.empty()) run.sampling->modules = symbols::process_modules();
        for (auto& note : sampler_->notes()) run.notes.push_back(std::move(note));
        if (run.sampling->call_graph == "dwarf")
            run.notes.push_back("sampling: call stacks " +
                                sampling::call_graph_summary(*run.sampling));
        for (auto& note : attribution::loss_notes(run)) run.notes.push_back(std::move(note));
        // The raw samples stay in the run, for the annotation, --samples-out, the stack
        // outputs and the HTML report; --output leaves them out when it writes the file.
        sampled_ = true;
    }

    void write_outputs(const workload::RunResult& run,
                       const std::vector<analysis::CellSummary>& summaries,
                       std::ostream& out) override {
        std::optional<attribution::RunAttribution> attribution;
        if (sampled_) attribution = attribution::attribute(run, annotate_);
        // The explanation leads, right under the table; the annotations it rests on follow.
        bool events = false;
        for (const auto& s : summaries) events |= !s.events.empty();
        if (explain_.value_or(sample_ || events)) {
            analysis::ExplainThresholds thresholds;
            thresholds.verdict = analysis::verdict_options(summaries);
            const auto diagnoses = analysis::explain(
                analysis::gather_evidence(run, summaries, attribution ? &*attribution : nullptr),
                thresholds);
            const std::string text = analysis::render_explanation(diagnoses, detail_);
            if (!text.empty()) out << "\n" << text;
        }
        if (sampled_ && !quiet_)
            out << report::render_annotations(run, *attribution, listing_top_, listing_detail_);
        out.flush();
        if (!sampled_) return;
        if (!samples_out_.empty())
            write_output(samples_out_, report::json_text(report::to_json(run, summaries)));
        stacks_.write([&] {
            return SampledStacks{attribution::folded_stacks(run, *attribution, stacks_.leaf()),
                                 attribution::flamegraph_options(run),
                                 [&] { return attribution::run_pprof(run); }};
        });
    }

  private:
    SamplingOptions sampling_{
        "sample where each worker thread spends its time and annotate the hottest functions "
        "instruction by instruction (docs/sampling.md)",
        3, " per cell", /*hottest_by_default=*/true};
    StackOutputs stacks_{"one per cell (tas/2t)", "sym+0x1c xchg", /*implies_sample=*/true,
                         /*loop_phases=*/true};
    bool sample_ = false;
    bool quiet_ = false;
    analysis::Detail detail_ = analysis::Detail::brief;  // --verbose: full
    std::optional<bool> explain_;
    unsigned listing_top_ = 3;
    report::ListingDetail listing_detail_ = report::ListingDetail::hottest;
    attribution::AnnotateOptions annotate_;
    std::string samples_out_;
    std::unique_ptr<sampling::Sampler> sampler_;
    bool sampled_ = false;  // a sampler ran: `run` holds its samples
};

}  // namespace

std::unique_ptr<RunExtension> make_sampling_extension() {
    return std::make_unique<SamplingExtension>();
}

}  // namespace lockprof::cli
