#include "lockprof/record/recording_pprof.hpp"

#include <map>
#include <optional>

#include <fmt/format.h>

#include "lockprof/attribution/pprof_builder.hpp"

namespace lockprof::record {

namespace pprof = exporting::pprof;

namespace {

// A task_clock (the alias), task-clock or cpu-clock reading among `counters` (ns), scaled for the
// time it ran.
std::optional<std::uint64_t> cpu_clock(const std::vector<measure::CounterReading>& counters) {
    for (const auto& c : counters) {
        if (c.event != "task_clock" && c.event != "task-clock" && c.event != "cpu-clock") continue;
        if (c.running_ns == 0) return std::nullopt;
        if (c.running_ns >= c.enabled_ns) return c.raw;
        return static_cast<std::uint64_t>(static_cast<double>(c.raw) *
                                          static_cast<double>(c.enabled_ns) /
                                          static_cast<double>(c.running_ns));
    }
    return std::nullopt;
}

}  // namespace

pprof::Profile recording_pprof(const RecordResult& result, const Images& images) {
    if (!result.sampling) return {};
    const measure::SamplingInfo& info = *result.sampling;
    attribution::PprofBuilder builder(info);

    struct Process {
        std::string name;
        std::map<pid_t, std::string> threads;       // tid -> comm
        std::map<pid_t, std::uint64_t> thread_cpu;  // tid -> task-clock ns
        std::optional<std::uint64_t> cpu;           // inherited (a command)
    };
    std::map<pid_t, Process> processes;
    for (const auto& p : result.processes) {
        auto& out = processes[p.info.pid];
        out.name = p.info.comm.empty() ? std::to_string(p.info.pid) : p.info.comm;
        for (const auto& t : p.threads) {
            if (!t.comm.empty()) out.threads[t.tid] = t.comm;
            if (auto ns = cpu_clock(t.counters)) out.thread_cpu[t.tid] = *ns;
        }
        out.cpu = cpu_clock(p.inherited);
    }

    // CPU time per sample: the weight for clocks; else each thread's (or process's) clock
    // count spread over its samples.
    std::map<const measure::RawSample*, std::int64_t> cpu_of;
    bool unmeasured = false;
    if (!builder.weighs_time()) {
        std::map<std::pair<pid_t, pid_t>, std::vector<const measure::RawSample*>> by_thread;
        std::map<pid_t, std::vector<const measure::RawSample*>> by_process;
        for (const auto& s : result.samples) {
            const auto pid = static_cast<pid_t>(s.pid), tid = static_cast<pid_t>(s.tid);
            auto p = processes.find(pid);
            if (p != processes.end() && p->second.thread_cpu.contains(tid))
                by_thread[{pid, tid}].push_back(&s);
            else if (p != processes.end() && p->second.cpu)
                by_process[pid].push_back(&s);
            else
                unmeasured = true;
        }
        const auto spread = [&](std::uint64_t total,
                                const std::vector<const measure::RawSample*>& samples) {
            const auto parts = attribution::apportion(total, samples);
            for (std::size_t i = 0; i < samples.size(); ++i) cpu_of[samples[i]] = parts[i];
        };
        for (const auto& [key, samples] : by_thread)
            spread(processes[key.first].thread_cpu[key.second], samples);
        for (const auto& [pid, samples] : by_process) spread(*processes[pid].cpu, samples);
    }

    for (const auto& image : images.all()) {
        static const std::vector<measure::MappedModule> kNone;
        const std::size_t space =
            builder.add_address_space(image.modules ? *image.modules : kNone, image.resolver);
        for (const auto* s : image.samples) {
            const auto pid = static_cast<pid_t>(s->pid), tid = static_cast<pid_t>(s->tid);
            std::vector<pprof::Label> labels;
            const auto p = processes.find(pid);
            labels.push_back(pprof::Label::text(
                "process", p != processes.end() ? p->second.name : std::to_string(pid)));
            labels.push_back(pprof::Label::number("pid", pid));
            labels.push_back(pprof::Label::number("tid", tid));
            if (p != processes.end())
                if (auto t = p->second.threads.find(tid); t != p->second.threads.end())
                    labels.push_back(pprof::Label::text("thread", t->second));
            std::int64_t cpu = 0;
            if (builder.weighs_time())
                cpu = static_cast<std::int64_t>(s->weight);
            else if (auto c = cpu_of.find(s); c != cpu_of.end())
                cpu = c->second;
            builder.add(space, *s, cpu, std::move(labels));
        }
    }

    std::vector<std::string> comments = {
        fmt::format("lockprof record {} ({}), {}", result.provenance.lockprof_version,
                    result.provenance.git_revision, mode_name(result.mode)),
        fmt::format("sampler {}, event {}, {}", info.sampler, info.event,
                    info.period ? fmt::format("period {}", info.period)
                                : fmt::format("{} Hz", info.frequency))};
    if (!info.event_note.empty()) comments.push_back(info.event_note);
    if (unmeasured)
        comments.push_back(fmt::format(
            "cpu/nanoseconds is 0 for samples of threads without a task-clock count: {} "
            "counts events, not time (count it with -e task_clock)",
            info.event));
    return builder.finish(static_cast<std::int64_t>(result.duration_s * 1e9),
                          attribution::epoch_nanos(result.provenance.timestamp_utc),
                          std::move(comments));
}

}  // namespace lockprof::record
