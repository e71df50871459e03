// --report FILE.html and --plot FILE.svg for `lockprof run`. Listed last in run_extensions.cpp
// so its finish()/write_outputs() see the notes, counters and sampling info the others added.
#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "cli/run_extension.hpp"
#include "lockprof/common/output_file.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/report/html_report.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/report/plot.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

class ReportExtension : public RunExtension {
  public:
    po::options_description options() override {
        po::options_description o("Report and plot");
        // clang-format off
        o.add_options()
            ("report", po::value<std::string>(),
             "write a self-contained HTML report (plots, provenance, explanation, hot "
             "instructions, flamegraph) that opens offline and prints (docs/reports.md)")
            ("plot", po::value<std::string>(),
             "write the scalability plot (acquires/s vs threads) as a standalone SVG")
            ("report-threads", po::value<unsigned>(),
             "thread count whose hot instructions the report lists (default: the largest "
             "sampled)");
        // clang-format on
        return o;
    }

    void configure(const po::variables_map& vm, const workload::RunSpec& spec,
                   workload::RunResult&) override {
        // Checked before anything runs, so a long sweep never ends in an unwritable path.
        for (const char* option : {"report", "plot"})
            if (vm.count(option)) check_output(vm[option].as<std::string>(), option);
        if (vm.count("report")) report_ = vm["report"].as<std::string>();
        if (vm.count("plot")) plot_ = vm["plot"].as<std::string>();
        if (vm.count("report-threads")) {
            const unsigned threads = vm["report-threads"].as<unsigned>();
            if (std::find(spec.threads.begin(), spec.threads.end(), threads) == spec.threads.end())
                throw UsageError(fmt::format(
                    "--report-threads: {} is not in the sweep (--threads); pick one of them",
                    threads));
            options_.annotate_threads = threads;
        }
    }

    void write_outputs(const workload::RunResult& run,
                       const std::vector<analysis::CellSummary>& summaries,
                       std::ostream&) override {
        if (!plot_.empty()) {
            auto spec = report::scalability_plot(run, summaries);
            spec.standalone = true;
            write_output(plot_, report::render_plot(spec));
        }
        if (report_.empty()) return;
        options_.source = "this run";
        // A sampled run still holds its raw samples here (only --output leaves them out).
        auto extras =
            report::with_flamegraph(analysis::gather_report_inputs(run, summaries, {}), run);
        if (run.sampling && !attribution::has_raw_samples(run))
            extras.omitted.back() =
                "hot instructions and flamegraph: the sampler recorded no samples in this run";
        write_output(report_, report::render_html_report(run, summaries, extras, options_));
    }

  private:
    std::string report_, plot_;
    report::HtmlReportOptions options_;
};

}  // namespace

std::unique_ptr<RunExtension> make_report_extension() {
    return std::make_unique<ReportExtension>();
}

}  // namespace lockprof::cli
