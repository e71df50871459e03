#include "lockprof/pmu/counters.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/pmu/aliases.hpp"
#include "lockprof/pmu/libpfm.hpp"

namespace lockprof::pmu {
namespace {

constexpr std::uint64_t kReadFormat = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                                      PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;

// Without a count from libpfm4, assume the smallest common core PMU (4 generic counters on x86
// with hyperthreading; ARMv8 cores have 6 or more).
constexpr std::size_t kFallbackCounters = 4;

std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

class CounterInstrument : public measure::ThreadInstrument {
  public:
    explicit CounterInstrument(ThreadCounters counters) : counters_(std::move(counters)) {}
    void start() override { counters_.start(); }
    void stop() override { counters_.stop(); }
    void collect(measure::ThreadMeasurements& result) override {
        auto readings = counters_.read();
        result.counters.insert(result.counters.end(), readings.begin(), readings.end());
    }

  private:
    ThreadCounters counters_;
};

}  // namespace

std::vector<Group> plan_groups(const std::vector<ResolvedEvent>& events,
                               std::size_t hardware_per_group) {
    hardware_per_group = std::max<std::size_t>(1, hardware_per_group);
    std::vector<Group> groups;
    Group software;
    Group hardware;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (is_software(events[i].attr)) {
            software.push_back(i);
            continue;
        }
        hardware.push_back(i);
        if (hardware.size() == hardware_per_group) groups.push_back(std::exchange(hardware, {}));
    }
    if (!hardware.empty()) groups.push_back(std::move(hardware));
    if (!software.empty()) groups.push_back(std::move(software));
    return groups;
}

std::vector<measure::CounterReading> decode_group_read(std::span<const std::uint64_t> words,
                                                       const std::vector<std::uint64_t>& ids,
                                                       const std::vector<std::string>& names) {
    std::vector<measure::CounterReading> out(ids.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i].event = i < names.size() ? names[i] : "";
    if (words.size() < 3) return out;
    const std::uint64_t available = (words.size() - 3) / 2;
    const std::uint64_t nr = std::min(words[0], available);
    for (std::uint64_t k = 0; k < nr; ++k) {
        const std::uint64_t value = words[3 + 2 * k];
        const std::uint64_t id = words[4 + 2 * k];
        const auto it = std::find(ids.begin(), ids.end(), id);
        if (it == ids.end()) continue;
        auto& reading = out[static_cast<std::size_t>(it - ids.begin())];
        reading.raw = value;
        reading.enabled_ns = words[1];
        reading.running_ns = words[2];
    }
    return out;
}

ThreadCounters ThreadCounters::open(const std::vector<ResolvedEvent>& events,
                                    const std::vector<Group>& groups,
                                    std::vector<OpenFailure>& failures, const Target& target) {
    ThreadCounters counters;
    for (const auto& e : events) counters.names_.push_back(e.requested);
    for (const auto& group : groups) {
        OpenGroup open;
        for (std::size_t index : group) {
            perf_event_attr attr = events[index].attr;
            attr.read_format = kReadFormat;
            // Only the leader starts disabled: members follow it on the group ioctls.
            attr.disabled = open.fds.empty() ? 1 : 0;
            attr.inherit = target.inherit ? 1 : 0;
            attr.enable_on_exec = target.enable_on_exec && open.fds.empty() ? 1 : 0;
            const int fd = open_event(attr, open.fds.empty() ? -1 : open.fds.front(), target.task);
            if (fd < 0) {
                failures.push_back({index, -fd});
                continue;
            }
            std::uint64_t id = 0;
            if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
                failures.push_back({index, errno});
                ::close(fd);
                continue;
            }
            open.fds.push_back(fd);
            open.ids.push_back(id);
            open.events.push_back(index);
        }
        if (!open.fds.empty()) counters.groups_.push_back(std::move(open));
    }
    return counters;
}

ThreadCounters::ThreadCounters(ThreadCounters&& other) noexcept
    : groups_(std::move(other.groups_)), names_(std::move(other.names_)) {
    other.groups_.clear();
}

ThreadCounters& ThreadCounters::operator=(ThreadCounters&& other) noexcept {
    if (this != &other) {
        close_all();
        groups_ = std::move(other.groups_);
        names_ = std::move(other.names_);
        other.groups_.clear();
    }
    return *this;
}

ThreadCounters::~ThreadCounters() {
    close_all();
}

void ThreadCounters::close_all() {
    for (auto& g : groups_)
        for (auto it = g.fds.rbegin(); it != g.fds.rend(); ++it) ::close(*it);
    groups_.clear();
}

void ThreadCounters::start() {
    for (auto& g : groups_) {
        ioctl(g.fds.front(), PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
        ioctl(g.fds.front(), PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    }
}

void ThreadCounters::stop() {
    for (auto& g : groups_) ioctl(g.fds.front(), PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

std::vector<measure::CounterReading> ThreadCounters::read() const {
    std::vector<measure::CounterReading> out(names_.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i].event = names_[i];
    for (const auto& g : groups_) {
        std::vector<std::uint64_t> words(3 + 2 * g.fds.size(), 0);
        const std::size_t bytes = words.size() * sizeof(std::uint64_t);
        ssize_t got;
        do {
            got = ::read(g.fds.front(), words.data(), bytes);
        } while (got < 0 && errno == EINTR);
        if (got <= 0) continue;  // reads as never counted
        words.resize(static_cast<std::size_t>(got) / sizeof(std::uint64_t));
        std::vector<std::string> names;
        for (std::size_t index : g.events) names.push_back(names_[index]);
        const auto readings = decode_group_read(words, g.ids, names);
        for (std::size_t k = 0; k < g.events.size(); ++k) out[g.events[k]] = readings[k];
    }
    return out;
}

std::size_t ThreadCounters::open_descriptors() const {
    std::size_t n = 0;
    for (const auto& g : groups_) n += g.fds.size();
    return n;
}

std::vector<std::string> default_event_names(bool with_task_clock) {
    std::vector<std::string> names = {"cycles",    "instructions", "cache_misses",    "stxr_fail",
                                      "stxr_pass", "task_clock",   "context_switches"};
    if (!with_task_clock) std::erase(names, "task_clock");
    return names;
}

CountingPlan plan_counting(const CountingOptions& options) {
    const bool defaults = options.requested.empty();
    std::vector<std::string> names =
        defaults ? default_event_names(options.default_task_clock) : options.requested;
    CountingPlan plan;
    std::vector<ResolvedEvent> resolved;
    for (const auto& name : names) {
        if (std::any_of(resolved.begin(), resolved.end(),
                        [&](const auto& e) { return e.requested == name; }))
            continue;
        Resolution r = try_resolve_event(name, options.include_kernel);
        if (r.status == Resolution::Status::unknown) throw UsageError("--event: " + r.message);
        if (r.status == Resolution::Status::refused) {
            if (defaults) continue;  // defaults include stxr_* only where the CPU has them
            if (options.strict) throw UsageError(r.message + " (--strict-events)");
            plan.notes.push_back(r.message + "; dropped");
            continue;
        }
        resolved.push_back(std::move(r.event));
    }

    // Trial-open each event alone on this thread, so errors are known (and said once per
    // cause) before the sweep instead of once per worker thread.
    std::map<int, std::vector<std::string>> failed;  // errno -> events
    std::vector<int> failure_order;
    for (auto& event : resolved) {
        perf_event_attr attr = event.attr;
        const int fd = open_event(attr);
        if (fd >= 0) {
            ::close(fd);
            plan.events.push_back(event);
            continue;
        }
        if (!failed.count(-fd)) failure_order.push_back(-fd);
        failed[-fd].push_back(event.requested);
    }
    for (int error : failure_order) {
        const std::string line = explain_open_error(error, join(failed[error]));
        if (options.strict) throw UsageError(line + " (--strict-events)");
        plan.notes.push_back(line);
    }

    const libpfm::PmuInfo core = libpfm::core_pmu();
    const std::size_t counters =
        core.counters > 0 ? static_cast<std::size_t>(core.counters) : kFallbackCounters;
    std::vector<Group> groups = plan_groups(plan.events, counters);
    // A group the kernel refuses as a whole (EINVAL: more than the PMU can hold at once) is
    // counted as single events instead, which the kernel can always multiplex.
    std::vector<Group> accepted;
    for (const auto& group : groups) {
        std::vector<OpenFailure> failures;
        { const ThreadCounters trial = ThreadCounters::open(plan.events, {group}, failures); }
        // Out of descriptors is no reason to split a group: single events need as many. The
        // workers then fail to open it too, and the run says so once, naming the limit.
        const int error = failures.empty() ? 0 : failures.front().error;
        if (failures.empty() || group.size() == 1 || error == EMFILE || error == ENFILE) {
            accepted.push_back(group);
            continue;
        }
        std::vector<std::string> members;
        for (auto index : group) members.push_back(plan.events[index].requested);
        plan.notes.push_back(fmt::format(
            "the kernel refused {} as one group ({}); they are counted as separate groups, "
            "time-shared by the kernel and scaled",
            join(members), explain_open_error(failures.front().error, "group")));
        for (auto index : group) accepted.push_back({index});
    }
    plan.groups = std::move(accepted);
    std::size_t hardware_groups = 0, hardware_events = 0;
    for (const auto& g : plan.groups)
        if (!is_software(plan.events[g.front()].attr))
            ++hardware_groups, hardware_events += g.size();
    if (hardware_groups > 1)
        plan.notes.push_back(fmt::format(
            "{} hardware events are more than the {} counters of {} can hold at once: counted "
            "in {} groups the kernel time-shares; values are scaled by enabled/running time and "
            "the running fraction is shown when below 100%",
            hardware_events, counters, core.name.empty() ? "this PMU" : core.name,
            hardware_groups));
    return plan;
}

CounterInstrumentation::CounterInstrumentation(CountingPlan plan) : plan_(std::move(plan)) {}

std::unique_ptr<measure::ThreadInstrument> CounterInstrumentation::attach_current_thread(unsigned) {
    if (plan_.events.empty()) return nullptr;
    std::vector<OpenFailure> failures;
    ThreadCounters counters = ThreadCounters::open(plan_.events, plan_.groups, failures);
    if (!failures.empty()) {
        std::lock_guard lock(mutex_);
        for (const auto& f : failures) {
            auto& events = failures_[f.error];
            if (std::find(events.begin(), events.end(), f.event) == events.end())
                events.push_back(f.event);
        }
    }
    return std::make_unique<CounterInstrument>(std::move(counters));
}

std::vector<std::string> CounterInstrumentation::run_failures() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> lines;
    for (const auto& [error, events] : failures_) {
        // In the order they were asked for, not the order the first failing thread met them.
        std::vector<std::size_t> sorted(events.begin(), events.end());
        std::sort(sorted.begin(), sorted.end());
        std::vector<std::string> names;
        for (auto index : sorted) names.push_back(plan_.events[index].requested);
        lines.push_back(explain_open_error(error, join(names)) +
                        " (on some worker threads; those threads show it as not counted)");
    }
    return lines;
}

}  // namespace lockprof::pmu
