#include "lockprof/sampling/sampler.hpp"

#include <unistd.h>

#include <cerrno>
#include <ctime>

#include <fmt/format.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/arch/unwind_registers.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/pmu/events.hpp"
#include "lockprof/sampling/event.hpp"
#include "sampling/ring_buffer.hpp"

namespace lockprof::sampling {
namespace {

constexpr const char* kSkidNote =
    "samples land on the instruction after the stalling one (skid): read a hot instruction "
    "as 'the one before it was waiting'";

struct Probe {
    int error = 0;       // errno of the last attempt, 0 on success
    int precise_ip = 0;  // granted
    perf_event_attr attr{};
};

perf_event_attr sampling_attr(const SampleEvent& event, const SamplerRequest& request) {
    perf_event_attr attr = event.attr;
    attr.size = sizeof(perf_event_attr);
    attr.disabled = 1;  // enabled by the worker after the start barrier
    // User code only by default: allowed at perf_event_paranoid 2, and the loop is user code.
    attr.exclude_kernel = request.include_kernel ? 0 : 1;
    attr.exclude_hv = 1;
    attr.exclude_callchain_kernel = 1;
    attr.sample_type = kSampleType;
    // Same clock as the timer sampler's, so times of both kinds compare.
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    attr.watermark = 1;
    attr.wakeup_watermark = 16 * 1024;
    if (request.dwarf_stack) {
        // The kernel copies the user registers and stack; lockprof unwinds them. Its own
        // frame-pointer walk of user space would only repeat (or contradict) that.
        attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        attr.sample_regs_user = arch::unwind_registers().sample_regs_user;
        attr.sample_stack_user = request.dwarf_stack;
        attr.exclude_callchain_user = 1;
        // Woken at a quarter of the (bigger) buffer, as 16 KiB is of the default one.
        attr.wakeup_watermark = static_cast<std::uint32_t>(ring_data_pages(attr) * page_size() / 4);
    }
    if (request.period) {
        attr.sample_period = *request.period;
    } else {
        attr.freq = 1;
        // Above the kernel's ceiling, open_event lowers it; choose_perf_event says so.
        attr.sample_freq = request.frequency.value_or(kDefaultFrequency);
    }
    return attr;
}

// Opens (and closes) the event on this thread, asking for the tightest skid first.
Probe probe(const SampleEvent& event, const SamplerRequest& request) {
    Probe p;
    p.attr = sampling_attr(event, request);
    // precise_ip constrains hardware sampling only; a software clock's sample is wherever its
    // interrupt arrived, and asking would only make the kernel refuse or ignore it.
    for (int precise = event.hardware ? 2 : 0; precise >= 0; --precise) {
        p.attr.precise_ip = static_cast<unsigned>(precise);
        const int fd = pmu::open_event(p.attr);
        if (fd >= 0) {
            close(fd);
            p.error = 0;
            p.precise_ip = precise;
            return p;
        }
        p.error = -fd;
        if (p.error != EINVAL && p.error != EOPNOTSUPP) break;
    }
    return p;
}

bool means_event_missing(int error) {
    return error == ENOENT || error == EOPNOTSUPP || error == EINVAL || error == ENODEV;
}

void check_rate(const SamplerRequest& request) {
    if (request.period && request.frequency)
        throw UsageError("--sample-period and --sample-freq exclude each other; give one of them");
    if ((request.period && *request.period == 0) || (request.frequency && *request.frequency == 0))
        throw UsageError("--sample-period / --sample-freq must be at least 1");
    if (request.frequency && *request.frequency > 100'000)
        throw UsageError(fmt::format(
            "--sample-freq {} is too high (at most 100000): sampling would dominate the run",
            *request.frequency));
}

}  // namespace

std::size_t ring_data_pages(const perf_event_attr& attr) {
    if (!(attr.sample_type & PERF_SAMPLE_STACK_USER)) return kRingDataPages;
    const std::size_t wanted = 128 * (std::size_t{attr.sample_stack_user} + 512);
    std::size_t pages = kRingDataPages;
    while (pages * page_size() < wanted && pages < 256) pages *= 2;
    return pages;
}

std::string call_graph_summary(const measure::SamplingInfo& info) {
    if (info.call_graph != "dwarf") return "frame pointers (the kernel's walk; --call-graph fp)";
    std::string out = fmt::format(
        "unwound from {}-byte stack copies (--call-graph dwarf): {} samples in {:.2f} s",
        info.stack_size, info.unwound, info.unwind_seconds);
    if (info.unwound_without_callers)
        out += fmt::format(
            ", {} without a caller (no call frame information where they stopped, or a stack "
            "copy too short)",
            info.unwound_without_callers);
    return out;
}

SkidMeaning skid_meaning(pmu::Isa isa, bool hardware, int granted, std::string_view event,
                         bool spe) {
    using measure::Skid;
    if (!hardware)
        return {
            Skid::arbitrary,
            fmt::format("{} is a software event, precise_ip does not apply: {}", event, kSkidNote)};
    if (isa == pmu::Isa::aarch64) {
        // The arm64 PMU driver takes precise_ip and does nothing with it: the sample is still
        // the PC the overflow interrupt found.
        const std::string granted_text =
            granted > 0 ? fmt::format(
                              "precise_ip {} accepted for {}, but arm64 core PMUs have no "
                              "skid-free sampling (the kernel ignores precise_ip)",
                              granted, event)
                        : fmt::format("precise_ip not granted for {}", event);
        return {Skid::arbitrary,
                fmt::format("{}: {}; SPE (arm_spe_0{}) would name the instruction", granted_text,
                            kSkidNote, spe ? ", present here" : ", not exposed here")};
    }
    switch (granted) {
        case 0:
            return {Skid::arbitrary,
                    fmt::format("precise_ip not granted for {}: {}", event, kSkidNote)};
        case 1:
            return {Skid::constant,
                    fmt::format("precise_ip 1 granted for {} (constant skid, e.g. Intel PEBS "
                                "without the IP fix-up): {}",
                                event, kSkidNote)};
        case 2:
            return {Skid::zero,
                    fmt::format("precise_ip 2 granted for {} (zero skid requested: Intel PEBS "
                                "with the IP fix-up, AMD IBS): samples name the instruction that "
                                "caused the event",
                                event)};
        default:
            return {Skid::zero,
                    fmt::format("precise_ip {} granted for {} (zero skid required: Intel PEBS, "
                                "AMD IBS): samples name the instruction that caused the event",
                                granted, event)};
    }
}

std::unique_ptr<Sampler> make_sampler(const SamplerRequest& request) {
    check_rate(request);
    measure::SamplingInfo info;
    info.requested_event = request.event;
    if (request.period)
        info.period = *request.period;
    else
        info.frequency = request.frequency.value_or(kDefaultFrequency);

    auto timer = [&](std::string reason) {
        info.sampler = "timer";
        info.sampler_reason = std::move(reason);
        info.event = "cpu-clock";
        if (request.event != "cpu-clock" && request.event != "task-clock")
            info.event_note =
                fmt::format("the timer sampler samples thread CPU time, not '{}'", request.event);
        info.precise_ip = 0;
        info.skid = measure::Skid::arbitrary;
        info.precise_note = fmt::format("timer-signal samples: {}", kSkidNote);
        if (request.dwarf_stack)
            info.call_graph_note =
                "--call-graph dwarf: the timer sampler cannot copy stacks (its signal handler "
                "walks frame pointers); frame-pointer call chains instead";
        // The timer counts CPU time in ns, whatever the event would have counted.
        const std::uint64_t period_ns =
            request.period ? *request.period : 1'000'000'000ull / info.frequency;
        if (period_ns < 10'000)
            throw UsageError(
                fmt::format("sampling period of {} ns is too short for the timer sampler (at least "
                            "10000 ns, and the kernel tick limits it further); lower --sample-freq",
                            period_ns));
        return make_timer_sampler(period_ns, request.window_ns, info);
    };

    if (request.kind == SamplerKind::timer) {
        if (request.dwarf_stack)
            throw UsageError(
                "--call-graph dwarf needs the perf sampler: the timer sampler's signal handler "
                "walks frame pointers and cannot copy stacks; use --sampler perf (or auto), or "
                "--call-graph fp");
        return timer("--sampler=timer was given");
    }

    auto choice = choose_perf_event(request);
    if (!choice.error.empty()) {
        if (request.kind == SamplerKind::perf)
            throw Error(choice.error +
                        "; use --sampler=timer (or auto) to sample with CPU-time timers");
        return timer(choice.error + "; using the timer-signal sampler instead");
    }
    choice.info.sampler_reason = request.kind == SamplerKind::perf
                                     ? "--sampler=perf was given"
                                     : "perf_event_open works here (the auto choice)";
    return make_perf_sampler(choice.attr, choice.info);
}

PerfChoice choose_perf_event(const SamplerRequest& request) {
    check_rate(request);
    PerfChoice choice;
    measure::SamplingInfo& info = choice.info;
    info.requested_event = request.event;
    if (request.period)
        info.period = *request.period;
    else
        info.frequency = request.frequency.value_or(kDefaultFrequency);

    SampleEvent event = sample_event(request.event);
    Probe p;
    if (event.unavailable.empty())
        p = probe(event, request);
    else
        p.error = ENOENT;
    if (p.error && means_event_missing(p.error) && event.name != "cpu-clock") {
        const std::string why = event.unavailable.empty()
                                    ? pmu::explain_open_error(p.error, event.name)
                                    : event.unavailable;
        SampleEvent fallback = cpu_clock_event();
        Probe q = probe(fallback, request);
        if (!q.error) info.event_note = why + "; sampling cpu-clock instead";
        // Either way cpu-clock decides: it works, or its error is the real cause (ENOSYS...).
        event = fallback;
        p = q;
    }
    if (p.error) {
        choice.error = pmu::explain_open_error(p.error, event.name);
        return choice;
    }
    info.sampler = "perf";
    info.event = event.name;
    if (request.dwarf_stack) {
        info.call_graph = "dwarf";
        info.stack_size = request.dwarf_stack;
    }
    info.kernel = request.include_kernel;
    info.precise_ip = p.precise_ip;
    auto meaning = skid_meaning(pmu::host_isa(), event.hardware, p.precise_ip, event.name,
                                arch::cpu_identity().has_spe);
    info.skid = meaning.skid;
    info.precise_note = std::move(meaning.note);
    if (p.attr.freq && p.attr.sample_freq != info.frequency) {
        const std::string lowered = pmu::lowered_frequency_note(info.frequency, p.attr.sample_freq);
        info.event_note = info.event_note.empty() ? lowered : info.event_note + "; " + lowered;
        info.frequency = p.attr.sample_freq;
    }
    choice.attr = p.attr;
    return choice;
}

}  // namespace lockprof::sampling
