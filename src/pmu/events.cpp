#include "lockprof/pmu/events.hpp"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/pmu/aliases.hpp"
#include "lockprof/pmu/event_sources.hpp"
#include "lockprof/pmu/libpfm.hpp"

namespace lockprof::pmu {
namespace {

void finish_attr(perf_event_attr& attr, bool include_kernel) {
    attr.size = sizeof(perf_event_attr);
    attr.disabled = 1;
    // Counting only: no sampling fields from a user's modifiers may leak in.
    attr.sample_period = 0;
    attr.freq = 0;
    if (is_software(attr) && !include_kernel) attr.exclude_kernel = 1;
}

std::string alias_names_hint() {
    std::string out;
    for (const auto& a : aliases()) out += (out.empty() ? "" : ", ") + std::string(a.name);
    return out;
}

}  // namespace

bool is_software(const perf_event_attr& attr) {
    return attr.type == PERF_TYPE_SOFTWARE;
}

int perf_event_paranoid() {
    std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
    int level = -99;
    if (!(in >> level)) return -99;
    return level;
}

std::string paranoid_meaning(int level) {
    if (level == -99) return "unknown (/proc/sys/kernel/perf_event_paranoid is unreadable)";
    if (level <= -1) return "no restrictions: any user may count anything, kernel included";
    if (level == 0) return "users may count user and kernel space, but not raw tracepoints";
    if (level == 1) return "users may count user and kernel space of their own processes";
    if (level == 2) return "users may count user space of their own processes only";
    return "users may not use perf_event at all (a distribution patch); only root can count";
}

Resolution try_resolve_event(std::string_view requested, bool include_kernel) {
    Resolution r;
    r.event.requested = std::string(requested);
    if (requested.empty()) {
        r.status = Resolution::Status::unknown;
        r.message = "empty event name; see `lockprof events` for the aliases";
        return r;
    }
    if (find_alias(requested)) {
        const libpfm::PmuInfo core = libpfm::core_pmu();
        const AliasPlan plan = plan_alias(requested, host_isa(), core.name);
        if (!plan.refusal.empty()) {
            r.status = Resolution::Status::refused;
            r.message = plan.refusal;
            return r;
        }
        std::string tried;
        for (const auto& candidate : plan.candidates) {
            libpfm::Encoding enc = libpfm::encode(candidate.pfm_name, include_kernel);
            if (enc.error != 0 && candidate.builtin_software && !libpfm::generic_perf_active()) {
                // libpfm4's perf PMU is hidden (LIBPFM_FORCE_PMU); the kernel ABI is fixed.
                std::memset(&enc.attr, 0, sizeof enc.attr);
                enc.attr.type = PERF_TYPE_SOFTWARE;
                enc.attr.config = candidate.software_config;
                enc.attr.exclude_hv = 1;
                enc.error = 0;
                enc.pfm_name = candidate.pfm_name;
            }
            if (enc.error != 0) {
                tried += fmt::format("{}{} ({})", tried.empty() ? "" : ", ", candidate.pfm_name,
                                     enc.message);
                continue;
            }
            r.event.pfm_name = enc.pfm_name;
            r.event.attr = enc.attr;
            r.event.note = candidate.note;
            finish_attr(r.event.attr, include_kernel);
            if (is_software(r.event.attr) &&
                (r.event.attr.config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
                 r.event.attr.config == PERF_COUNT_SW_CPU_MIGRATIONS) &&
                !include_kernel) {
                // The scheduler records these in kernel context: excluding the kernel would
                // read 0 for every switch. Needs root or perf_event_paranoid <= 1.
                r.event.attr.exclude_kernel = 0;
                r.event.note = "counted in kernel context (the scheduler's), even without --kernel";
            }
            return r;
        }
        r.status = Resolution::Status::refused;
        r.message = fmt::format(
            "'{}' cannot be encoded on this CPU ({}): libpfm4 rejected {}; name a libpfm4 event "
            "directly (see `lockprof events --all`)",
            requested, core.name.empty() ? "no core PMU detected" : "PMU " + core.name, tried);
        return r;
    }
    libpfm::Encoding enc = libpfm::encode(requested, include_kernel);
    if (enc.error != 0) {
        std::vector<std::string> names;
        for (const auto& a : aliases()) names.emplace_back(a.name);
        const std::string suggestion = did_you_mean(requested, names);
        r.status = Resolution::Status::unknown;
        r.message = fmt::format(
            "unknown event '{}': not an alias{} and libpfm4 says '{}'; aliases: {}; libpfm4 "
            "names: `lockprof events --all`",
            requested, suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", suggestion),
            enc.message, alias_names_hint());
        return r;
    }
    r.event.pfm_name = enc.pfm_name;
    r.event.attr = enc.attr;
    finish_attr(r.event.attr, include_kernel);
    return r;
}

ResolvedEvent resolve_event(std::string_view requested, bool include_kernel) {
    Resolution r = try_resolve_event(requested, include_kernel);
    if (r.status != Resolution::Status::ok) throw UsageError(r.message);
    return std::move(r.event);
}

int open_event(perf_event_attr& attr, int group_fd, pid_t pid, int cpu) {
    attr.size = sizeof(perf_event_attr);
    bool lowered = false;
    while (true) {
        const long fd =
            syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0) return static_cast<int>(fd);
        const int err = errno;
        if (err == EINTR) continue;
        if (err == EINVAL && attr.freq && !lowered) {
            // The kernel refuses sample_freq above its ceiling, which it may have lowered
            // since the caller chose the rate.
            const std::uint64_t allowed =
                allowed_sample_frequency(attr.sample_freq, max_sample_rate());
            if (allowed < attr.sample_freq) {
                attr.sample_freq = allowed;
                lowered = true;
                continue;
            }
        }
        return -err;
    }
}

std::optional<std::uint64_t> max_sample_rate() {
    std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
    std::uint64_t rate = 0;
    if (!(in >> rate)) return std::nullopt;
    return rate;
}

std::uint64_t allowed_sample_frequency(std::uint64_t wanted, std::optional<std::uint64_t> ceiling) {
    return ceiling && *ceiling > 0 && *ceiling < wanted ? *ceiling : wanted;
}

std::string lowered_frequency_note(std::uint64_t wanted, std::uint64_t granted) {
    if (granted == wanted) return "";
    return fmt::format(
        "sampled at {} Hz, not the {} Hz asked for: the kernel allows at most {} now "
        "(kernel.perf_event_max_sample_rate, which it lowers by itself when sampling interrupts "
        "take too long, as on slow or emulated machines)",
        granted, wanted, granted);
}

std::string explain_open_error(int error_number, std::string_view event) {
    return explain_open_error(error_number, event, registered_core_pmus());
}

std::string explain_open_error(int error_number, std::string_view event,
                               const std::vector<std::string>& core_pmus) {
    const int err = error_number < 0 ? -error_number : error_number;
    const bool several = event.find(',') != std::string_view::npos;
    switch (err) {
        case ENOENT:
            if (core_pmus.empty())
                return fmt::format(
                    "{}: not counted: the kernel exposes no PMU for {} (ENOENT; a VM without a "
                    "vPMU?); run on bare metal or enable the vPMU; software events still count",
                    event, several ? "them" : "it");
            // A core PMU is registered, so the kernel has hardware counters: its driver has no
            // mapping for this event on this CPU (generic cache events on many ARM cores).
            return fmt::format(
                "{}: not counted: the kernel's {} driver{} not implement {} on this CPU "
                "(ENOENT); see `lockprof events` for what it counts",
                event, fmt::join(core_pmus, "/"), core_pmus.size() > 1 ? "s do" : " does",
                several ? "them" : "it");
        case EACCES:
        case EPERM: {
            const int level = perf_event_paranoid();
            return fmt::format(
                "{}: not counted: permission denied ({}); kernel.perf_event_paranoid is {} ({}). "
                "Run as root, or lower it: `sudo sysctl kernel.perf_event_paranoid=1` (2 allows "
                "user space only; --kernel needs 1 or less)",
                event, err == EACCES ? "EACCES" : "EPERM", level, paranoid_meaning(level));
        }
        case EOPNOTSUPP:
            return fmt::format(
                "{}: not counted: the PMU does not support this event's mode (EOPNOTSUPP), "
                "e.g. excluding kernel or hypervisor; try --kernel or another event",
                event);
        case EINVAL:
            return fmt::format(
                "{}: not counted: the kernel rejected the event (EINVAL): an invalid encoding "
                "for this PMU or a group larger than its counters; check `lockprof events` and "
                "count fewer events at a time",
                event);
        case EMFILE:
        case ENFILE: {
            rlimit limit{};
            getrlimit(RLIMIT_NOFILE, &limit);
            return fmt::format(
                "{}: not counted: out of file descriptors ({}): every thread opens one per "
                "event (threads x events); raise the limit (`ulimit -n`, now {}) or count fewer "
                "events or threads",
                event, err == EMFILE ? "EMFILE" : "ENFILE",
                static_cast<unsigned long long>(limit.rlim_cur));
        }
        case ENOSYS:
            return fmt::format(
                "{}: not counted: this system has no perf_event_open (ENOSYS): an emulator "
                "(qemu-user) or a seccomp filter (containers) blocks it; run natively, or allow "
                "perf_event_open in the seccomp profile",
                event);
        case ENODEV:
            return fmt::format(
                "{}: not counted: this CPU's PMU does not support it (ENODEV); see `lockprof "
                "events`",
                event);
        case EBUSY:
            return fmt::format(
                "{}: not counted: the PMU is busy (EBUSY): another tool or the NMI watchdog "
                "holds the counters; stop it (e.g. `sysctl kernel.nmi_watchdog=0`)",
                event);
        case E2BIG:
            return fmt::format(
                "{}: not counted: the kernel does not know this perf_event_attr layout (E2BIG); "
                "lockprof was built against newer kernel headers than the running kernel",
                event);
        default:
            return fmt::format("{}: not counted: perf_event_open failed: {}", event,
                               std::strerror(err));
    }
}

}  // namespace lockprof::pmu
