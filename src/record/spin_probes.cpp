// `record --spin`'s probes during a recording, and the entries' stacks kept per call site
// (spin_probes.hpp).
#include "record/spin_probes.hpp"

#include <algorithm>
#include <cerrno>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/arch/call_abi.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/symbols/elf_lookup.hpp"

namespace lockprof::record {
namespace {

pmu::UprobePmu find_uprobe_pmu(const std::string& root) {
    std::string why;
    auto found = pmu::uprobe_pmu(why, root.empty() ? "/sys" : root + "/sys");
    if (!found) throw Error("--spin: " + why);
    return *found;
}

std::vector<sampling::UprobeTarget> targets_of(const std::vector<SpinProbe>& probes) {
    std::vector<sampling::UprobeTarget> targets;
    for (const auto& p : probes) targets.push_back({p.path, p.file_offset, p.function});
    return targets;
}

// The key of keep()'s reservoirs: the call site as analyse_spin() reads it.
std::string site_key(const SpinRecording& recording, const SpinHit& hit) {
    return recording.probes[hit.probe].arguments == SpinArguments::pg_s_lock
               ? fmt::format("{}:{:x}:{}:{:x}", hit.probe, hit.file_pointer, hit.line,
                             hit.func_pointer)
               : fmt::format("{}:{:x}", hit.probe, hit.return_address.value_or(0));
}

}  // namespace

void SpinStackReservoirs::keep(SpinRecording& recording, SpinHit hit, StackCopies& copies) {
    ++recording.stacks_seen;
    auto& reservoir = by_site_[site_key(recording, hit)];
    ++reservoir.seen;
    auto& hits = recording.hits;
    if (reservoir.kept.size() < kSpinStacksPerSite) {
        copies.hold_spin_stack(hits.size(), hit.user_stack.size());
        reservoir.kept.push_back(hits.size());
        hits.push_back(std::move(hit));
        return;
    }
    const auto slot = std::uniform_int_distribution<std::uint64_t>(0, reservoir.seen - 1)(random_);
    if (slot >= kSpinStacksPerSite) return;
    SpinHit& replaced = hits[reservoir.kept[slot]];
    copies.replace_spin_stack(reservoir.kept[slot], replaced.user_stack.size(),
                              hit.user_stack.size(), replaced.user_regs.empty());
    replaced = std::move(hit);
}

SpinProbes::SpinProbes(const RecordSpec& spec, std::optional<SpinRecording>& recording,
                       Notes& notes, StackCopies& copies)
    : spec_(spec),
      recording_(recording),
      notes_(notes),
      copies_(copies),
      pmu_(find_uprobe_pmu(spec.root)) {}

void SpinProbes::prepare(const std::vector<std::string>& binaries) {
    tried_.insert(binaries.begin(), binaries.end());
    auto plan = plan_spin(*spec_.spin, binaries);
    sampler_.emplace(pmu_, targets_of(plan.probes), spec_.spin_stack);
    sampler_->check_targets();
    for (std::size_t i = 0; i < plan.probes.size(); ++i)
        plan.probes[i].refused = sampler_->refusal(i);
    SpinRecording recording;
    recording.stack_size = spec_.spin_stack;
    recording.probes = std::move(plan.probes);
    recording.searched = std::move(plan.searched);
    recording_ = std::move(recording);
}

void SpinProbes::prepare_inheritance() {
    // Refused before the command runs, never run with probes that break its forks.
    std::string why;
    if (!sampler_->prepare_inheritance(why))
        throw Error(fmt::format(
            "--spin -- CMD: {}; a command's new threads and processes inherit only probes "
            "defined in tracefs (the uprobe PMU's make their fork fail with EFAULT, "
            "docs/record.md); run as root, or start the program and attach with --pid PID",
            why));
    if (sampler_->none_usable()) throw Error(nothing_probed());
}

std::string SpinProbes::attach_inherited(pid_t child, const std::vector<int>& cpus) {
    std::size_t failed = 0;
    if (const int error = sampler_->attach_inherited(child, cpus, failed))
        return attach_error(error, failed);
    if (sampler_->none_usable()) return nothing_probed();
    return "";
}

void SpinProbes::extend(const ProcessRecord& process,
                        const std::vector<std::pair<pid_t, pid_t>>& tasks,
                        std::chrono::milliseconds seen_within) {
    if (!sampler_) return;
    std::vector<std::string> fresh;
    for (auto& b : spin_binaries(process.info.exe, process.modules))
        if (tried_.insert(b).second) fresh.push_back(std::move(b));
    if (fresh.empty()) return;
    auto plan = record::extend_spin(*spec_.spin, fresh);
    auto& recording = *recording_;
    recording.searched.insert(recording.searched.end(), plan.searched.begin(), plan.searched.end());
    // A file another path of which was probed (a symlink) holds the same code.
    std::erase_if(plan.probes, [&](const SpinProbe& p) {
        return std::any_of(
            recording.probes.begin(), recording.probes.end(), [&](const SpinProbe& q) {
                return q.function == p.function &&
                       symbols::build_id_of(q.path) == symbols::build_id_of(p.path) &&
                       q.file_offset == p.file_offset;
            });
    });
    if (plan.probes.empty()) return;
    probe_new_targets(std::move(plan.probes), process, tasks, seen_within);
}

void SpinProbes::probe_new_targets(std::vector<SpinProbe> probes, const ProcessRecord& process,
                                   const std::vector<std::pair<pid_t, pid_t>>& tasks,
                                   std::chrono::milliseconds seen_within) {
    const std::size_t first = sampler_->add_targets(targets_of(probes));
    std::vector<std::string> found;
    for (std::size_t i = 0; i < probes.size(); ++i) {
        probes[i].refused = sampler_->refusal(first + i);
        found.push_back(fmt::format("{} in {}", probes[i].function, probes[i].path));
        recording_->probes.push_back(std::move(probes[i]));
    }
    notes_.add(fmt::format(
        "spin: {} mapped by process {} ({}) after the recording started: probed from when "
        "lockprof saw it (within {} ms), calls before that are not counted",
        fmt::join(found, ", "), process.info.pid, process.info.comm, seen_within.count()));
    for (const auto& [pid, tid] : tasks) {
        std::size_t failed = 0;
        const int error = sampler_->attach_task(tid, failed, first);
        if (error && error != ESRCH)
            notes_.add(
                fmt::format("spin: thread {} of {}: {}", tid, pid, attach_error(error, failed)));
    }
}

int SpinProbes::attach_task(pid_t pid, pid_t tid) {
    std::size_t failed = 0;
    const int error = sampler_->attach_task(tid, failed);
    if (error == EACCES || error == EPERM) {
        if (!attached_) throw Error(attach_error(error, failed));
        return error;
    }
    if (error == ESRCH) return error;
    if (error)
        notes_.add(fmt::format("spin: thread {} of {}: {}", tid, pid, attach_error(error, failed)));
    else if (sampler_->none_usable())
        throw Error(nothing_probed());
    else
        attached_ = true;
    return 0;
}

std::string SpinProbes::attach_error(int error, std::size_t failed) const {
    const auto& p = recording_->probes.at(failed);
    return pmu::explain_uprobe_error(error, p.function, p.path);
}

// Every function was refused by the kernel: one line, the first refusal.
std::string SpinProbes::nothing_probed() const {
    const auto notes = sampler_->notes();
    return notes.empty() ? "--spin: no function could be probed"
                         : notes.front().substr(notes.front().find("--spin:"));
}

std::optional<std::string> SpinProbes::target_string(std::uint32_t pid, std::uint64_t address) {
    if (address == 0) return std::nullopt;
    const auto key = std::make_pair(pid, address);
    if (auto it = strings_.find(key); it != strings_.end()) return it->second;
    auto text = read_process_string(static_cast<pid_t>(pid), address);
    if (text) strings_[key] = *text;
    return text;
}

SpinHit SpinProbes::hit_of(sampling::UprobeHit& h, const std::function<void(pid_t)>& on_entry) {
    const auto& abi = arch::call_abi();
    SpinHit hit;
    std::tie(hit.probe, hit.is_return, hit.pid, hit.tid, hit.time_ns, hit.return_value) =
        std::tie(h.probe, h.is_return, h.pid, h.tid, h.time_ns, h.return_value);
    if (!h.is_return) {
        on_entry(static_cast<pid_t>(h.pid));
        hit.lock = arch::argument(abi, h.regs, 0).value_or(0);
        hit.return_address = h.return_address;
        if (recording_->probes[h.probe].arguments == SpinArguments::pg_s_lock) {
            hit.file_pointer = arch::argument(abi, h.regs, 1).value_or(0);
            hit.line = static_cast<int>(arch::argument(abi, h.regs, 2).value_or(0));
            hit.func_pointer = arch::argument(abi, h.regs, 3).value_or(0);
            hit.file = target_string(h.pid, hit.file_pointer).value_or("");
            hit.func = target_string(h.pid, hit.func_pointer).value_or("");
        }
    }
    if (h.is_stack) {
        hit.is_stack = true;
        hit.user_regs = std::move(h.user_regs);
        hit.user_stack = std::move(h.user_stack);
    }
    return hit;
}

void SpinProbes::drain(const std::function<void(pid_t)>& on_entry) {
    if (!sampler_) return;
    for (auto& h : sampler_->drain()) {
        SpinHit hit = hit_of(h, on_entry);
        if (hit.is_stack)
            reservoirs_.keep(*recording_, std::move(hit), copies_);
        else
            recording_->hits.push_back(std::move(hit));
    }
}

void SpinProbes::finish(const std::function<void(pid_t)>& on_entry,
                        const StackCopies::ModulesOf& modules_of) {
    if (!sampler_) return;
    sampler_->stop();
    drain(on_entry);
    auto& recording = *recording_;
    for (const auto& c : sampler_->counts()) recording.kernel_entries.push_back(c.entries);
    recording.lost = sampler_->lost();
    recording.found_full = sampler_->found_full();
    recording.unreadable = sampler_->unreadable();
    recording.stacks_lost = sampler_->stacks_lost();
    for (auto& n : sampler_->notes()) notes_.add(std::move(n));
    // Strings of processes that ended before they were read: from their mapped files.
    for (auto& h : recording.hits) {
        if (h.is_return || recording.probes[h.probe].arguments != SpinArguments::pg_s_lock)
            continue;
        const auto* modules = modules_of(h.pid);
        if (!modules) continue;
        if (h.file.empty() && h.file_pointer)
            h.file = read_mapped_string(*modules, h.file_pointer).value_or("");
        if (h.func.empty() && h.func_pointer)
            h.func = read_mapped_string(*modules, h.func_pointer).value_or("");
    }
}

}  // namespace lockprof::record
