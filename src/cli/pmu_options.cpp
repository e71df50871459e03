#include "cli/pmu_options.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/parse.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

po::options_description PmuOptions::options() const {
    const std::string event_help = fmt::format(
        "events to count, comma-separated: aliases (`lockprof events` lists them) or any "
        "libpfm4 name (arm_n1::STREX_FAIL_SPEC, perf::task-clock, perf_raw::r6e). Default: "
        "{}, each where this machine can count it. task_clock counts a thread's time on its "
        "CPU, time the hypervisor stole included (what perf stat reports){}",
        fmt::join(pmu::default_event_names(default_task_clock_), ", "),
        default_task_clock_ ? ""
                            : "; cpu ns/acq (CLOCK_THREAD_CPUTIME_ID) leaves stolen time out: "
                              "the CPU the threads' code really got, what locks are compared by");
    po::options_description o("Counters (PMU events)");
    // clang-format off
    o.add_options()
        ("event,e", po::value<std::string>(), event_help.c_str())
        ("kernel", po::bool_switch(),
         "count kernel-mode events too, and in `record` sample kernel code too (default: user "
         "space only)")
        ("strict-events", po::bool_switch(),
         "an event that cannot be counted is an error (exit 2) instead of a warning")
        ("no-counters", po::bool_switch(), "count no events at all");
    // clang-format on
    return o;
}

std::optional<pmu::CountingPlan> PmuOptions::plan(const po::variables_map& vm) const {
    if (vm["no-counters"].as<bool>()) {
        if (vm.count("event"))
            throw UsageError("--event and --no-counters contradict each other; drop one");
        return std::nullopt;
    }
    pmu::CountingOptions options;
    if (vm.count("event")) options.requested = split_list(vm["event"].as<std::string>(), "event");
    options.include_kernel = vm["kernel"].as<bool>();
    options.strict = strict(vm);
    options.default_task_clock = default_task_clock_;
    pmu::CountingPlan plan = pmu::plan_counting(options);
    if (!options.requested.empty())
        for (const auto& note : plan.notes) warn(note);
    return plan;
}

bool PmuOptions::strict(const po::variables_map& vm) const {
    return vm["strict-events"].as<bool>();
}

void warn(const std::string& line) {
    std::fflush(stdout);
    fmt::print(stderr, "lockprof: warning: {}\n", line);
    std::fflush(stderr);
}

}  // namespace lockprof::cli
