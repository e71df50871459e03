// PMU counters for `lockprof run`: --event, --kernel, --strict-events, --no-counters. Events are
// resolved and trial-opened once in configure(), so every problem is known, and said once per
// cause, before the sweep starts; each worker then opens its own groups (pmu/counters.hpp).
#include <cstdio>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/run_extension.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/pmu/counters.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {
namespace {

void warn(const std::string& line) {
    std::fflush(stdout);
    fmt::print(stderr, "lockprof: warning: {}\n", line);
    std::fflush(stderr);
}

class PmuExtension : public RunExtension {
  public:
    po::options_description options() override {
        po::options_description o("Counters (PMU events)");
        // clang-format off
        o.add_options()
            ("event,e", po::value<std::string>(),
             "events to count per thread, comma-separated: aliases (cycles, instructions, "
             "cache_misses, stxr_fail, stxr_pass, task_clock, ...; `lockprof events` lists "
             "them) or any libpfm4 name (arm_n1::STREX_FAIL_SPEC, perf::task-clock, "
             "perf_raw::r6e). Shown per acquire. Default: cycles, instructions, cache_misses, "
             "stxr_fail/stxr_pass where the CPU has them, task_clock, context_switches")
            ("kernel", po::bool_switch(), "count kernel-mode events too (default: user space only)")
            ("strict-events", po::bool_switch(),
             "an event that cannot be counted is an error (exit 2) instead of a warning")
            ("no-counters", po::bool_switch(), "count no events at all");
        // clang-format on
        return o;
    }

    void configure(const po::variables_map& vm, const workload::RunSpec&,
                   workload::RunResult& run) override {
        strict_ = vm["strict-events"].as<bool>();
        if (vm["no-counters"].as<bool>()) {
            if (vm.count("event"))
                throw UsageError("--event and --no-counters contradict each other; drop one");
            return;
        }
        pmu::CountingOptions options;
        if (vm.count("event"))
            options.requested = split_list(vm["event"].as<std::string>(), "event");
        options.include_kernel = vm["kernel"].as<bool>();
        options.strict = strict_;
        pmu::CountingPlan plan = pmu::plan_counting(options);
        // Defaults the machine cannot count are no news worth a warning on every plain run:
        // they are noted under the table and in the JSON. Events the user named are warned.
        for (const auto& note : plan.notes) {
            if (!options.requested.empty()) warn(note);
            run.notes.push_back(note);
        }
        if (!plan.events.empty()) instrumentation_.emplace(std::move(plan));
    }

    profiling::Instrumentation* instrumentation() override {
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
    bool strict_ = false;
    std::optional<pmu::CounterInstrumentation> instrumentation_;
};

}  // namespace

std::unique_ptr<RunExtension> make_pmu_extension() {
    return std::make_unique<PmuExtension>();
}

}  // namespace lockprof::cli
