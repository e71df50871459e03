// Event names to perf_event attributes. Users write aliases ("stxr_fail", "cycles") or any
// libpfm4 string ("arm_n1::STREX_FAIL_SPEC", "perf::task-clock", "perf_raw::r6e"); libpfm4
// encodes them for the PMU it detected, so one name works across CPU models. The alias table
// itself lives in aliases.hpp/.cpp.
#pragma once

// Must precede any libpfm4 header: pfmlib_perf_event.h redefines the perf_event ABI otherwise.
#include <linux/perf_event.h>

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockprof::pmu {

struct ResolvedEvent {
    std::string requested;  // as the user wrote it ("stxr_fail", "perf::task-clock")
    std::string pfm_name;   // full libpfm4 name it encoded to ("arm_n1::STREX_FAIL_SPEC")
    perf_event_attr attr;   // ready for perf_event_open (disabled=1, exclude_kernel per option)
    std::string note;       // e.g. "raw 0x6e: the architected common event"
};

// Throws lockprof::UsageError (exit 2) when the name is unknown or refused on this CPU, with the
// reason.
ResolvedEvent resolve_event(std::string_view requested, bool include_kernel);

// Opens attr for task `pid` (0: the calling thread) on `cpu` (-1: any); returns fd or -errno.
// EINTR retried. A sampling frequency above the kernel's ceiling (max_sample_rate) makes the
// kernel answer EINVAL; open_event then lowers attr.sample_freq to the ceiling and tries once
// more, so the caller reads the rate it got from attr.
int open_event(perf_event_attr& attr, int group_fd = -1, pid_t pid = 0, int cpu = -1);

// The kernel's ceiling on sampling frequencies now (kernel.perf_event_max_sample_rate), nullopt
// where unreadable. The kernel lowers it by itself when sampling interrupts take longer than
// kernel.perf_cpu_time_max_percent allows, as on slow or emulated machines, so a rate that
// opened a minute ago may be refused now.
std::optional<std::uint64_t> max_sample_rate();

// The frequency to ask for: `wanted`, or the ceiling when that is lower (and not 0).
std::uint64_t allowed_sample_frequency(std::uint64_t wanted, std::optional<std::uint64_t> ceiling);

// Why a frequency was lowered, in one clause; "" when granted == wanted.
std::string lowered_frequency_note(std::uint64_t wanted, std::uint64_t granted);

// One line explaining an errno from perf_event_open for `event`, with what to do. ENOENT reads
// differently with and without a core PMU registered (event_sources.hpp); the two-argument form
// asks sysfs, the three-argument one is told (tests, callers that already know).
std::string explain_open_error(int error_number, std::string_view event);
std::string explain_open_error(int error_number, std::string_view event,
                               const std::vector<std::string>& core_pmus);

// resolve_event without the exception: why a name did not resolve, for callers that degrade.
struct Resolution {
    enum class Status { ok, unknown, refused } status = Status::ok;
    ResolvedEvent event{};
    std::string message;  // the one-line reason when not ok
};
Resolution try_resolve_event(std::string_view requested, bool include_kernel);

// kernel.perf_event_paranoid (-99 when unreadable) and what that level allows, in words.
int perf_event_paranoid();
std::string paranoid_meaning(int level);

// Whether attr is a kernel software event (countable without a PMU).
bool is_software(const perf_event_attr& attr);

}  // namespace lockprof::pmu
