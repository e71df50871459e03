// The processes of a recording, attached to and polled (process_table.hpp).
#include "record/process_table.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "lockprof/common/files.hpp"
#include "lockprof/pmu/events.hpp"
#include "lockprof/symbols/resolver.hpp"

namespace lockprof::record {
namespace {

using Clock = std::chrono::steady_clock;

// The executable mappings of a /proc/PID/maps text: what symbols resolve against. Data
// mappings come and go (PostgreSQL's dynamic shared memory segments) without changing that.
std::vector<measure::MappedModule> executable_mappings(
    const std::vector<measure::MappedModule>& entries) {
    std::vector<measure::MappedModule> out;
    for (const auto& m : entries)
        if (m.permissions.size() > 2 && m.permissions[2] == 'x') out.push_back(m);
    return out;
}

}  // namespace

void note_open_failures(Notes& notes, const pmu::CountingPlan& counting,
                        const std::vector<pmu::OpenFailure>& failures) {
    for (const auto& f : failures)
        notes.add(pmu::explain_open_error(f.error, counting.events[f.event].requested));
}

ProcessTable::ProcessTable(const RecordSpec& spec, RecordResult& result, Notes& notes,
                           std::optional<sampling::TaskSampler>& sampler,
                           std::optional<SpinProbes>& spin, std::function<double()> seconds)
    : spec_(spec),
      proc_root_(spec.root + "/proc"),
      result_(result),
      notes_(notes),
      sampler_(sampler),
      spin_(spin),
      seconds_(std::move(seconds)),
      context_(attach_context()) {}

std::vector<ProcessInfo> ProcessTable::initial_targets(const NameMatcher* matcher) const {
    std::vector<pid_t> initial = spec_.pids;
    if (matcher) {
        initial = find_processes(*matcher, getpid(), proc_root_);
        if (initial.empty())
            throw UsageError(fmt::format(
                "--match: no running process is named '{}' (compared with /proc/*/comm); "
                "start it first, or check the name with `ps -eo pid,comm`",
                spec_.match));
    }
    std::vector<ProcessInfo> pending;
    for (pid_t pid : initial) {
        const auto info = read_process(pid, proc_root_);
        if (!info) {
            if (matcher) continue;  // exited between the scan and now
            throw UsageError(fmt::format(
                "--pid: no process {} is running; check the id with `ps -p {}`", pid, pid));
        }
        pending.push_back(*info);
    }
    return pending;
}

// (A matched process may end between any two reads of its /proc files, and that is no error.)
std::vector<measure::MappedModule> ProcessTable::modules_now(pid_t pid) const {
    return symbols::modules_of_maps(read_all(fmt::format("{}/{}/maps", proc_root_, pid)));
}

std::size_t ProcessTable::add(ProcessRecord p, bool snapshot) {
    p.seen_at_s = seconds_();
    const pid_t pid = p.info.pid;
    result_.processes.push_back(std::move(p));
    const std::size_t index = result_.processes.size() - 1;
    known_[pid] = index;
    LiveProcess live;
    live.index = index;
    live_[pid] = std::move(live);
    if (snapshot) refresh_modules(pid);
    return index;
}

void ProcessTable::attach(const ProcessInfo& info) {
    ProcessRecord p;
    p.info = info;
    add(std::move(p));
    attach_new_tasks(info.pid);
}

void ProcessTable::attach_new_matches(const NameMatcher& matcher) {
    for (pid_t pid : find_processes(matcher, getpid(), proc_root_))
        if (!known_.count(pid))
            if (const auto info = read_process(pid, proc_root_)) attach(*info);
}

void ProcessTable::know_command_process(pid_t pid) {
    if (pid > 0 && !known_.count(pid) && spec_.mode == Mode::command) {
        ProcessRecord p;
        p.info.pid = pid;
        if (auto info = read_process(pid, proc_root_)) p.info = *info;
        add(std::move(p));
        if (result_.processes.back().modules.empty()) {
            result_.processes.back().exited = true;
            live_.erase(pid);
        }
    }
}

void ProcessTable::attach_new_tasks(pid_t pid) {
    auto& live = live_.at(pid);
    auto& process = result_.processes[live.index];
    for (pid_t tid : list_tasks(pid, proc_root_)) {
        if (!live.tasks.insert(tid).second) continue;
        TaskRecord task;
        task.tid = tid;
        task.comm = task_comm(pid, tid, proc_root_);
        int refused = 0;
        if (!attach_task(pid, live, task, refused)) continue;
        if (refused && process.problem.empty())
            process.problem = explain_attach_refusal(process.info, context_);
        process.threads.push_back(std::move(task));
    }
}

bool ProcessTable::attach_task(pid_t pid, LiveProcess& live, TaskRecord& task, int& refused) {
    const pid_t tid = task.tid;
    if (!spec_.counting.events.empty() && !open_task_counters(live, task, refused)) return false;
    if (sampler_ && !refused) {
        const int error = sampler_->attach_task(tid);
        if (error == EACCES || error == EPERM)
            refused = error;
        else if (error == ESRCH)
            return false;  // the thread ended meanwhile
        else if (error == ENOMEM)
            notes_.add(
                fmt::format("sampling: thread {} of {} cannot be sampled: no ring buffer "
                            "could be mapped (see the locked-memory note)",
                            tid, pid));
        else if (error)
            notes_.add(fmt::format("sampling: thread {} of {} cannot be sampled: {}", tid, pid,
                                   pmu::explain_open_error(error, result_.sampling->event)));
    }
    if (spin_ && spin_->prepared() && !refused) {
        const int error = spin_->attach_task(pid, tid);
        if (error == ESRCH) return false;
        if (error) refused = error;
    }
    return true;
}

// False when the thread ended between listing and attaching: nothing to report.
bool ProcessTable::open_task_counters(LiveProcess& live, TaskRecord& task, int& refused) {
    std::vector<pmu::OpenFailure> failures;
    auto counters = pmu::ThreadCounters::open(spec_.counting.events, spec_.counting.groups,
                                              failures, {.task = task.tid});
    bool ended = false;
    for (const auto& f : failures) {
        if (f.error == EACCES || f.error == EPERM) refused = f.error;
        ended = ended || f.error == ESRCH;
    }
    if (ended && counters.open_descriptors() == 0) return false;
    if (counters.open_descriptors() > 0) {
        counters.start();
        live.counters.emplace(task.tid, std::move(counters));
        task.attached = true;
    }
    if (!refused && !ended) note_open_failures(notes_, spec_.counting, failures);
    return true;
}

void ProcessTable::poll() {
    std::vector<pid_t> gone;
    for (auto& [pid, live] : live_) {
        if (!read_process(pid, proc_root_)) {
            gone.push_back(pid);
            continue;
        }
        attach_new_tasks(pid);
    }
    for (pid_t pid : gone) {
        auto& p = result_.processes[live_.at(pid).index];
        p.exited = true;
        retire(pid);
    }
    refresh_live_modules();
}

// A process that exited: its counters keep their final values until read.
void ProcessTable::retire(pid_t pid) {
    auto node = live_.extract(pid);
    for (auto& [tid, counters] : node.mapped().counters)
        retired_.emplace_back(node.mapped().index, tid, std::move(counters));
}

void ProcessTable::refresh_live_modules() {
    const auto now = Clock::now();
    for (auto& [pid, live] : live_)
        if (now - live.refreshed >= kModuleRefresh) refresh_modules(pid);
}

void ProcessTable::refresh_modules(pid_t pid) {
    auto& live = live_.at(pid);
    live.refreshed = Clock::now();
    const bool probing = spin_ && spin_->prepared();
    const std::string text = read_all(fmt::format("{}/{}/maps", proc_root_, pid));
    if (probing)
        if (const auto page = uprobes_page(text)) uprobe_pages_[pid] = *page;
    auto executable = executable_mappings(symbols::maps_entries(text));
    if (executable.empty() || executable == live.executable) return;
    live.executable = std::move(executable);
    auto modules = symbols::modules_of_maps(text);
    if (modules.empty()) return;
    auto& p = result_.processes[live.index];
    p.modules = std::move(modules);
    if (auto info = read_process(pid, proc_root_)) {
        p.info.exe = info->exe;
        p.info.comm = info->comm;
    }
    // Not while the first probes are planned (the initial processes are searched whole). A
    // command's probes are inherited ones, opened before it ran, and are not extended.
    if (probing && spec_.mode != Mode::command) spin_->extend(p, live_tasks(), kModuleRefresh);
}

std::vector<std::pair<pid_t, pid_t>> ProcessTable::live_tasks() const {
    std::vector<std::pair<pid_t, pid_t>> out;
    for (const auto& [pid, live] : live_)
        for (pid_t tid : live.tasks) out.emplace_back(pid, tid);
    return out;
}

void ProcessTable::ended(pid_t pid) {
    result_.processes[known_.at(pid)].exited = true;
    live_.erase(pid);
}

const std::vector<measure::MappedModule>* ProcessTable::modules_of(std::uint32_t pid) const {
    const auto it = known_.find(static_cast<pid_t>(pid));
    if (it == known_.end() || result_.processes[it->second].modules.empty()) return nullptr;
    return &result_.processes[it->second].modules;
}

void ProcessTable::read_counters() {
    for (auto& [pid, live] : live_)
        for (auto& [tid, counters] : live.counters)
            retired_.emplace_back(live.index, tid, std::move(counters));
    for (auto& [index, tid, counters] : retired_) {
        counters.stop();
        for (auto& t : result_.processes[index].threads)
            if (t.tid == tid) t.counters = counters.read();
    }
    retired_.clear();
}

}  // namespace lockprof::record
