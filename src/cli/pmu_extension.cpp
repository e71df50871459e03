// PMU counters for `lockprof run`: the options it shares with `record` (PmuOptions: --event,
// --kernel, --strict-events, --no-counters). Events are resolved and trial-opened once in
// configure(), so every problem is known, and said once per cause, before the sweep starts;
// each worker then opens its own groups (pmu/counters.hpp).
#include <memory>
#include <optional>

#include "cli/pmu_options.hpp"
#include "cli/run_extension.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/pmu/counters.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

class PmuExtension : public RunExtension {
  public:
    po::options_description options() override { return options_.options(); }

    void configure(const po::variables_map& vm, const workload::RunSpec&,
                   workload::RunResult& run) override {
        strict_ = options_.strict(vm);
        auto plan = options_.plan(vm);
        if (!plan) return;  // --no-counters
        // Defaults the machine cannot count are noted under the table and in the JSON.
        for (const auto& note : plan->notes) run.notes.push_back(note);
        if (!plan->events.empty()) instrumentation_.emplace(std::move(*plan));
    }

    measure::Instrumentation* instrumentation() override {
        return instrumentation_ ? &*instrumentation_ : nullptr;
    }

    void finish(workload::RunResult& run) override {
        if (!instrumentation_) return;
        for (const auto& line : instrumentation_->run_failures()) {
            if (strict_) throw UsageError(line + " (--strict-events)");
            warn(line);
            run.notes.push_back(line);
        }
    }

  private:
    PmuOptions options_{/*measures_thread_cpu=*/true};
    bool strict_ = false;
    std::optional<pmu::CounterInstrumentation> instrumentation_;
};

}  // namespace

std::unique_ptr<RunExtension> make_pmu_extension() {
    return std::make_unique<PmuExtension>();
}

}  // namespace lockprof::cli
