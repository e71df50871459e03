// Group planning, decoding of group reads, multiplex scaling, derived metrics, and real
// per-thread counting of software events on this machine.
#include "lockprof/pmu/counters.hpp"

#include <gtest/gtest.h>
#include <time.h>

#include <unistd.h>
#include <cerrno>
#include <cmath>
#include <limits>
#include <thread>

#include "lockprof/analysis/derived_events.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/pmu/aliases.hpp"

using namespace lockprof;
using namespace lockprof::pmu;

namespace {

ResolvedEvent fake_event(const std::string& name, std::uint32_t type) {
    ResolvedEvent e{};
    e.requested = name;
    e.attr.type = type;
    return e;
}

std::uint64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

void burn_cpu_ns(std::uint64_t ns) {
    const std::uint64_t start = thread_cpu_ns();
    volatile std::uint64_t sink = 0;
    while (thread_cpu_ns() - start < ns) sink = sink + 1;
}

}  // namespace

TEST(PmuGroups, SoftwareEventsGetTheirOwnGroupAndHardwareIsSplitByCounters) {
    std::vector<ResolvedEvent> events = {fake_event("cycles", PERF_TYPE_HARDWARE),
                                         fake_event("task_clock", PERF_TYPE_SOFTWARE),
                                         fake_event("instructions", PERF_TYPE_HARDWARE),
                                         fake_event("raw", PERF_TYPE_RAW),
                                         fake_event("cs", PERF_TYPE_SOFTWARE),
                                         fake_event("l1d", PERF_TYPE_HW_CACHE),
                                         fake_event("more", PERF_TYPE_RAW)};
    const auto groups = plan_groups(events, 2);
    ASSERT_EQ(groups.size(), 4u);
    EXPECT_EQ(groups[0], (Group{0, 2}));
    EXPECT_EQ(groups[1], (Group{3, 5}));
    EXPECT_EQ(groups[2], (Group{6}));
    EXPECT_EQ(groups[3], (Group{1, 4}));
    // Everything fits: one hardware group plus the software one.
    EXPECT_EQ(plan_groups(events, 8).size(), 2u);
    // A zero counter count cannot make empty groups.
    EXPECT_EQ(plan_groups(events, 0).size(), 6u);
    EXPECT_TRUE(plan_groups({}, 4).empty());
}

TEST(PmuGroups, GroupReadIsMatchedById) {
    // nr, enabled, running, then {value, id} in an order that differs from ours.
    const std::vector<std::uint64_t> words = {2, 1000, 500, 77, 12, 55, 11};
    const auto readings = decode_group_read(words, {11, 12}, {"a", "b"});
    ASSERT_EQ(readings.size(), 2u);
    EXPECT_EQ(readings[0].event, "a");
    EXPECT_EQ(readings[0].raw, 55u);
    EXPECT_EQ(readings[1].raw, 77u);
    EXPECT_EQ(readings[1].enabled_ns, 1000u);
    EXPECT_EQ(readings[1].running_ns, 500u);
}

TEST(PmuGroups, ShortOrForeignReadsCountAsNotCounted) {
    // nr claims more pairs than the buffer holds, and one id is unknown.
    const std::vector<std::uint64_t> words = {5, 1000, 1000, 9, 99};
    const auto readings = decode_group_read(words, {11}, {"a"});
    EXPECT_EQ(readings[0].running_ns, 0u);
    EXPECT_FALSE(measure::scaled_value(readings[0]).has_value());
    EXPECT_EQ(decode_group_read(std::vector<std::uint64_t>{1}, {11}, {"a"})[0].raw, 0u);
}

TEST(PmuScaling, RunningFractionScalesAndNeverRunIsNotZero) {
    measure::CounterReading r{"cycles", 1000, 2000, 1000};
    EXPECT_DOUBLE_EQ(*measure::scaled_value(r), 2000.0);
    r.running_ns = 0;
    EXPECT_FALSE(measure::scaled_value(r).has_value());
    r.running_ns = r.enabled_ns = 5;
    EXPECT_DOUBLE_EQ(*measure::scaled_value(r), 1000.0);
}

TEST(PmuScaling, HugeValuesDoNotOverflow) {
    constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    // raw * enabled would overflow 64-bit integer math many times over.
    measure::CounterReading r{"cycles", max / 2, max, max / 4};
    const double scaled = *measure::scaled_value(r);
    EXPECT_TRUE(std::isfinite(scaled));
    EXPECT_NEAR(scaled / (static_cast<double>(max) * 2.0), 1.0, 1e-9);
}

TEST(PmuDerived, IpcAndFailureRatioNeedBothInputs) {
    EXPECT_DOUBLE_EQ(*analysis::instructions_per_cycle(300.0, 200.0), 1.5);
    EXPECT_FALSE(analysis::instructions_per_cycle(300.0, std::nullopt));
    EXPECT_FALSE(analysis::instructions_per_cycle(300.0, 0.0));
    EXPECT_DOUBLE_EQ(*analysis::failure_ratio(25.0, 75.0), 0.25);
    EXPECT_FALSE(analysis::failure_ratio(std::nullopt, 75.0));
    EXPECT_FALSE(analysis::failure_ratio(0.0, 0.0));
}

TEST(PmuDerived, CellMetricsUseScaledSumsOverThreads) {
    workload::CellResult cell;
    for (int trial = 0; trial < 2; ++trial) {
        workload::TrialResult t;
        for (int thread = 0; thread < 2; ++thread) {
            workload::ThreadResult th;
            th.acquires = 10;
            // cycles ran half the time: scaled to 2x.
            th.counters = {{"cycles", 100, 1000, 500},
                           {"instructions", 300, 1000, 1000},
                           {"stxr_fail", 1, 10, 10},
                           {"stxr_pass", 3, 10, 10}};
            t.threads.push_back(th);
        }
        cell.trials.push_back(t);
    }
    const auto metrics = analysis::derived_metrics(cell);
    ASSERT_EQ(metrics.size(), 2u);
    EXPECT_EQ(metrics[0].name, "ipc");
    EXPECT_DOUBLE_EQ(metrics[0].value.median, 1.5);
    EXPECT_EQ(metrics[1].name, "stxr_fail_ratio");
    EXPECT_DOUBLE_EQ(metrics[1].value.median, 0.25);

    // stxr_pass never ran: no ratio, rather than a wrong one.
    for (auto& t : cell.trials)
        for (auto& th : t.threads) th.counters[3].running_ns = 0;
    EXPECT_EQ(analysis::derived_metrics(cell).size(), 1u);
}

TEST(PmuCounting, TaskClockAgreesWithThreadCpuTime) {
    std::vector<ResolvedEvent> events = {resolve_event("task_clock", false),
                                         resolve_event("context_switches", false)};
    std::vector<OpenFailure> failures;
    ThreadCounters counters = ThreadCounters::open(events, plan_groups(events, 4), failures);
    if (!failures.empty() && failures.front().error == ENOSYS)
        GTEST_SKIP() << explain_open_error(ENOSYS, "task_clock");
    ASSERT_TRUE(failures.empty()) << explain_open_error(failures.front().error, "task_clock");
    EXPECT_EQ(counters.open_descriptors(), 2u);

    counters.start();
    const std::uint64_t cpu_start = thread_cpu_ns();
    burn_cpu_ns(50'000'000);
    const std::uint64_t cpu = thread_cpu_ns() - cpu_start;
    counters.stop();
    const auto readings = counters.read();
    ASSERT_EQ(readings.size(), 2u);
    EXPECT_EQ(readings[0].event, "task_clock");
    EXPECT_GT(readings[0].running_ns, 0u);
    const double ratio = static_cast<double>(readings[0].raw) / static_cast<double>(cpu);
    EXPECT_NEAR(ratio, 1.0, 0.05) << "task_clock " << readings[0].raw << " ns, cpu " << cpu;
    EXPECT_EQ(readings[1].event, "context_switches");
    EXPECT_GT(readings[1].running_ns, 0u);

    // Moving keeps the descriptors open exactly once.
    ThreadCounters moved = std::move(counters);
    EXPECT_EQ(moved.open_descriptors(), 2u);
    EXPECT_EQ(counters.open_descriptors(), 0u);  // NOLINT(bugprone-use-after-move)
}

TEST(PmuCounting, HardwareCyclesCountWhenThePmuIsExposed) {
    auto cycles = resolve_event("cycles", false);
    const int fd = open_event(cycles.attr);
    if (fd < 0) GTEST_SKIP() << "needs a hardware PMU: " << explain_open_error(-fd, "cycles");
    ::close(fd);
    std::vector<ResolvedEvent> events = {cycles};
    std::vector<OpenFailure> failures;
    ThreadCounters counters = ThreadCounters::open(events, plan_groups(events, 4), failures);
    ASSERT_TRUE(failures.empty());
    counters.start();
    burn_cpu_ns(10'000'000);
    counters.stop();
    const auto readings = counters.read();
    EXPECT_GT(readings[0].raw, 0u);
}

TEST(PmuCounting, PlanDropsUncountableEventsWithOneLinePerCause) {
    auto cycles = resolve_event("cycles", false);
    const int fd = open_event(cycles.attr);
    if (fd >= 0) {
        ::close(fd);
        GTEST_SKIP() << "cycles can be counted here; the drop path needs a machine without a PMU";
    }
    auto task_clock = resolve_event("task_clock", false);
    const int software_fd = open_event(task_clock.attr);
    if (software_fd < 0)
        GTEST_SKIP() << "no perf_event_open at all here ("
                     << explain_open_error(-software_fd, "task_clock")
                     << "): the drop path needs software events that work";
    ::close(software_fd);
    const auto plan = plan_counting({{"cycles", "instructions", "task_clock"}, false, false});
    ASSERT_EQ(plan.events.size(), 1u);
    EXPECT_EQ(plan.events[0].requested, "task_clock");
    ASSERT_EQ(plan.notes.size(), 1u);
    EXPECT_EQ(plan.notes[0].rfind("cycles, instructions: not counted", 0), 0u) << plan.notes[0];
    EXPECT_THROW(plan_counting({{"cycles", "task_clock"}, false, true}), UsageError);
}

TEST(PmuCounting, DefaultsKeepSoftwareEventsAndSkipRefusedOnes) {
    const auto plan = plan_counting({});
    std::vector<std::string> names;
    for (const auto& e : plan.events) names.push_back(e.requested);
    if (plan.events.empty()) GTEST_SKIP() << "perf_event_open unavailable: " << plan.notes.front();
    EXPECT_NE(std::find(names.begin(), names.end(), "task_clock"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "context_switches"), names.end());
    if (host_isa() == Isa::x86_64) {
        for (const auto& note : plan.notes) EXPECT_EQ(note.find("stxr"), std::string::npos) << note;
    }
}

// A lock run measures each thread's CPU time itself (cpu ns/acq): its defaults leave task_clock
// out, so no second column repeats that figure; record keeps it; asked for, it is counted.
TEST(PmuCounting, RunDefaultsLeaveOutTaskClockWhichCanStillBeAskedFor) {
    const auto names = default_event_names(false);
    EXPECT_EQ(std::find(names.begin(), names.end(), "task_clock"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "context_switches"), names.end());
    EXPECT_EQ(names.size() + 1, default_event_names().size());
    CountingOptions run_defaults;
    run_defaults.default_task_clock = false;
    const auto plan = plan_counting(run_defaults);
    for (const auto& e : plan.events) EXPECT_NE(e.requested, "task_clock");
    if (plan.events.empty()) GTEST_SKIP() << "perf_event_open unavailable: " << plan.notes.front();
    run_defaults.requested = {"task_clock"};
    const auto asked = plan_counting(run_defaults);
    ASSERT_EQ(asked.events.size(), 1u);
    EXPECT_EQ(asked.events[0].requested, "task_clock");
}

TEST(PmuCounting, UnknownEventIsAlwaysAUsageError) {
    EXPECT_THROW(plan_counting({{"cyclez"}, false, false}), UsageError);
}
