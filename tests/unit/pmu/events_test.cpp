// Event resolution (aliases, libpfm4 pass-through, modifiers, unknown names) and the one-line
// explanations of perf_event_open errors.
#include "lockprof/pmu/events.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"

using namespace lockprof;
using namespace lockprof::pmu;

TEST(PmuEvents, SoftwareAliasResolvesDisabledAndUserOnly) {
    const auto e = resolve_event("task_clock", false);
    EXPECT_EQ(e.requested, "task_clock");
    EXPECT_EQ(e.pfm_name, "perf::PERF_COUNT_SW_TASK_CLOCK");
    EXPECT_EQ(e.attr.type, static_cast<unsigned>(PERF_TYPE_SOFTWARE));
    EXPECT_EQ(e.attr.config, static_cast<unsigned long long>(PERF_COUNT_SW_TASK_CLOCK));
    EXPECT_EQ(e.attr.disabled, 1u);
    EXPECT_EQ(e.attr.exclude_kernel, 1u);
    EXPECT_EQ(e.attr.size, sizeof(perf_event_attr));
    EXPECT_EQ(resolve_event("task_clock", true).attr.exclude_kernel, 0u);
}

TEST(PmuEvents, Libpfm4NamesPassThroughWithModifiers) {
    const auto clock = resolve_event("perf::task-clock", false);
    EXPECT_EQ(clock.requested, "perf::task-clock");
    EXPECT_EQ(clock.pfm_name, "perf::PERF_COUNT_SW_TASK_CLOCK");

    const auto raw = resolve_event("perf_raw::r6e", false);
    EXPECT_EQ(raw.attr.type, static_cast<unsigned>(PERF_TYPE_RAW));
    EXPECT_EQ(raw.attr.config, 0x6eull);
    EXPECT_EQ(raw.pfm_name, "perf_raw::r6e");

    // A modifier the user writes wins over the default privilege level.
    const auto kernel = resolve_event("perf::PERF_COUNT_HW_CPU_CYCLES:k", false);
    EXPECT_EQ(kernel.attr.exclude_kernel, 0u);
    EXPECT_EQ(kernel.attr.exclude_user, 1u);
}

TEST(PmuEvents, UnknownNameIsAUsageErrorWithSuggestion) {
    try {
        resolve_event("task_clok", false);
        FAIL();
    } catch (const UsageError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("unknown event 'task_clok'"), std::string::npos);
        EXPECT_NE(message.find("did you mean 'task_clock'"), std::string::npos);
        EXPECT_EQ(message.find('\n'), std::string::npos);
    }
    EXPECT_EQ(try_resolve_event("", false).status, Resolution::Status::unknown);
}

TEST(PmuEvents, OpenErrorsExplainCauseAndRemedyOnOneLine) {
    struct Case {
        int error;
        const char* must_contain;
    };
    for (const auto& c :
         {Case{ENOENT, "vPMU"}, Case{EACCES, "perf_event_paranoid"},
          Case{EPERM, "perf_event_paranoid"}, Case{EOPNOTSUPP, "EOPNOTSUPP"}, Case{EINVAL, "group"},
          Case{EMFILE, "ulimit -n"}, Case{ENOSYS, "seccomp"}, Case{ENOSYS, "qemu"}}) {
        // No core PMU registered, as in a VM without a virtual PMU: the wording must not depend
        // on the machine the test runs on (the emulated arm64 system has armv8_pmuv3).
        const std::string line = explain_open_error(c.error, "cycles", {});
        EXPECT_NE(line.find(c.must_contain), std::string::npos) << line;
        EXPECT_EQ(line.rfind("cycles", 0), 0u) << line;
        EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    }
    EXPECT_EQ(explain_open_error(-ENOENT, "x", {}), explain_open_error(ENOENT, "x", {}));
    EXPECT_EQ(explain_open_error(-ENOENT, "x"), explain_open_error(ENOENT, "x"));
}

TEST(PmuEvents, EnoentTellsAMissingPmuFromAnUnimplementedEvent) {
    // No core PMU registered (a VM without a virtual PMU): the VM wording.
    const std::string vm = explain_open_error(ENOENT, "cycles", {});
    EXPECT_NE(vm.find("exposes no PMU"), std::string::npos) << vm;
    EXPECT_NE(vm.find("a VM without a vPMU"), std::string::npos) << vm;
    // A core PMU is registered (armv8_pmuv3 under qemu-system-aarch64, an x86 `cpu`): its
    // driver does not implement the event, and a VM is not the cause.
    for (const char* pmu : {"armv8_pmuv3_0", "armv8_cortex_a57", "cpu"}) {
        const std::string line = explain_open_error(ENOENT, "cache_misses", {pmu});
        EXPECT_EQ(line, fmt::format("cache_misses: not counted: the kernel's {} driver does not "
                                    "implement it on this CPU (ENOENT); see `lockprof events` for "
                                    "what it counts",
                                    pmu));
    }
    const std::string two = explain_open_error(-ENOENT, "cache_misses, branch_misses",
                                               {"armv8_cortex_a53", "armv8_cortex_a72"});
    EXPECT_NE(two.find("the kernel's armv8_cortex_a53/armv8_cortex_a72 drivers do not implement "
                       "them on this CPU"),
              std::string::npos)
        << two;
    EXPECT_EQ(two.find("virtual PMU"), std::string::npos) << two;
    EXPECT_EQ(two.find('\n'), std::string::npos);
}

TEST(PmuEvents, OpenEventCountsASoftwareEventOrExplains) {
    auto e = resolve_event("task_clock", false);
    const int fd = open_event(e.attr);
    if (fd == -ENOSYS) GTEST_SKIP() << explain_open_error(ENOSYS, "task_clock");
    ASSERT_GE(fd, 0) << explain_open_error(-fd, "task_clock");
    ::close(fd);
}

// The kernel refuses a sampling frequency above kernel.perf_event_max_sample_rate with EINVAL,
// and lowers that ceiling by itself on slow machines (the emulated arm64 guest fell below
// 10 kHz, and `record --sample-freq 20000` failed there). open_event asks again at the ceiling
// and leaves the rate it got in attr.
TEST(PmuEvents, OpenEventLowersAFrequencyAboveTheKernelsCeiling) {
    const auto ceiling = max_sample_rate();
    if (!ceiling) GTEST_SKIP() << "/proc/sys/kernel/perf_event_max_sample_rate is unreadable";
    perf_event_attr attr{};
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.freq = 1;
    attr.sample_freq = *ceiling + 1000;
    const int fd = open_event(attr);
    if (fd == -ENOSYS || fd == -EACCES || fd == -EPERM)
        GTEST_SKIP() << explain_open_error(-fd, "cpu-clock");
    ASSERT_GE(fd, 0) << explain_open_error(-fd, "cpu-clock");
    ::close(fd);
    // The ceiling may have fallen further between the read and the open, never risen past it.
    EXPECT_LE(attr.sample_freq, *ceiling);
    EXPECT_GT(attr.sample_freq, 0u);
}

TEST(PmuEvents, AllowedFrequencyIsTheLowerOfWantedAndCeiling) {
    EXPECT_EQ(allowed_sample_frequency(20000, 6250), 6250u);
    EXPECT_EQ(allowed_sample_frequency(1000, 6250), 1000u);
    EXPECT_EQ(allowed_sample_frequency(1000, std::nullopt), 1000u);
    EXPECT_EQ(allowed_sample_frequency(1000, 0), 1000u);  // a 0 ceiling is no reading
    EXPECT_EQ(lowered_frequency_note(1000, 1000), "");
    const std::string note = lowered_frequency_note(20000, 6250);
    EXPECT_NE(note.find("sampled at 6250 Hz, not the 20000 Hz asked for"), std::string::npos);
    EXPECT_NE(note.find("kernel.perf_event_max_sample_rate"), std::string::npos);
}
