#include "lockprof/record/recorder.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/arch/call_abi.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/common/signal_name.hpp"
#include "lockprof/pmu/events.hpp"
#include "lockprof/pmu/uprobe.hpp"
#include "lockprof/record/uretprobe_frames.hpp"
#include "lockprof/sampling/task_sampler.hpp"
#include "lockprof/sampling/uprobe_sampler.hpp"
#include "lockprof/symbols/elf_lookup.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/symbols/unwinder.hpp"
#include "lockprof/workload/cpu_order.hpp"

namespace lockprof::record {
namespace {

using Clock = std::chrono::steady_clock;

// File mappings are re-read this often (a process may dlopen), and whenever a process is
// first seen; samples are resolved against the last snapshot taken while it was alive.
constexpr auto kModuleRefresh = std::chrono::milliseconds(200);
// --call-graph dwarf: the stack copies held before the recording unwinds them (those of
// processes whose mappings are known), rather than at its end. 64 MiB is ~8,000 samples of
// 8 KiB: 8 s of one busy thread at the default rate.
constexpr std::size_t kHeldStackBytes = std::size_t{64} << 20;
// The calibration samples at 10 kHz whatever the recording's rate: the per-sample cost is the
// same, and ten times the default rate lifts it well above the calibration's noise.
constexpr std::uint64_t kCalibrationFrequency = 10000;

// The executable mappings of a /proc/PID/maps text: what symbols resolve against. Data
// mappings come and go (PostgreSQL's dynamic shared memory segments) without changing that.
std::vector<profiling::MappedModule> executable_mappings(
    const std::vector<profiling::MappedModule>& entries) {
    std::vector<profiling::MappedModule> out;
    for (const auto& m : entries)
        if (m.permissions.size() > 2 && m.permissions[2] == 'x') out.push_back(m);
    return out;
}

// The CPUs a command's inherited events go on: the online ones, or every CPU sysconf counts
// where /sys does not say.
std::vector<int> event_cpus(const std::string& root) {
    std::vector<int> cpus = workload::online_cpus(root);
    if (cpus.empty())
        for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN); ++c)
            cpus.push_back(static_cast<int>(c));
    return cpus;
}

// Each attached thread needs a descriptor per counter group and one per sampler; thousands of
// threads exceed the usual soft limit of 1024.
void raise_descriptor_limit() {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

struct LiveProcess {
    std::size_t index = 0;                            // into RecordResult::processes
    std::vector<profiling::MappedModule> executable;  // last read, to skip unchanged re-reads
    Clock::time_point refreshed{};
    std::map<pid_t, pmu::ThreadCounters> counters;  // by tid
    std::set<pid_t> tasks;                          // attached (or refused) tids
};

class Recorder {
  public:
    Recorder(const RecordSpec& spec, const std::vector<std::string>& argv,
             const std::atomic<int>& stop)
        : spec_(spec), stop_(stop) {
        result_.provenance =
            workload::collect_provenance(argv, spec.root.empty() ? "/" : spec.root);
        result_.mode = spec.mode;
        result_.pids = spec.pids;
        result_.match = spec.match;
        result_.command = spec.command;
        for (const auto& e : spec.counting.events) result_.events.push_back(e.requested);
        context_ = attach_context();
    }

    RecordResult run() {
        raise_descriptor_limit();
        if (spec_.sampling) prepare_sampler();
        if (spec_.spin) check_uprobes();
        if (spec_.calibrate && (spec_.sampling || spec_.spin)) calibrate();
        start_ = Clock::now();
        if (spec_.mode == Mode::command)
            run_command();
        else
            run_attached();
        // Also when the signal ended a command before the loop saw it (Ctrl-C reaches both).
        if (const int signal = stop_.load()) {
            result_.interrupted = true;
            result_.interrupted_by = signal_name(signal);
        }
        finish();
        return std::move(result_);
    }

  private:
    double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

    void prepare_sampler() {
        auto choice = sampling::choose_perf_event(*spec_.sampling);
        if (!choice.error.empty())
            throw Error(choice.error +
                        "; record samples other processes with perf_event only (the timer "
                        "sampler works inside lockprof's own runs); run without --sample to "
                        "count only");
        choice.info.sampler_reason = "record samples other processes with perf_event";
        sampler_.emplace(choice.attr, choice.info);
        sampling_attr_ = choice.attr;
        result_.sampling = choice.info;
    }

    // What the instruments cost here, before any is attached (a fraction of a second).
    void calibrate() {
        InstrumentCalibration c;
        std::string why;
        if (uprobe_pmu_) {
            c.probe_call = sampling::probe_call_cost(*uprobe_pmu_, spec_.spin_stack, why);
            if (!c.probe_call) c.problems.push_back("spin probes: " + why);
        }
        if (sampler_) {
            why.clear();
            // Under the kernel's ceiling, which slow machines lower below 10 kHz.
            c.sample_frequency =
                pmu::allowed_sample_frequency(kCalibrationFrequency, pmu::max_sample_rate());
            c.sample = sampling::sample_cost(sampling_attr_, c.sample_frequency, why);
            if (!c.sample) c.problems.push_back("sampling: " + why);
        }
        result_.calibration = std::move(c);
    }

    // --- spin probes -----------------------------------------------------------------------

    void check_uprobes() {
        std::string why;
        uprobe_pmu_ = pmu::uprobe_pmu(why, spec_.root.empty() ? "/sys" : spec_.root + "/sys");
        if (!uprobe_pmu_) throw Error("--spin: " + why);
    }

    // Finds the functions in `binaries` and makes the sampler for them.
    void prepare_spin(const std::vector<std::string>& binaries) {
        spin_tried_.insert(binaries.begin(), binaries.end());
        auto plan = plan_spin(*spec_.spin, binaries);
        std::vector<sampling::UprobeTarget> targets;
        for (const auto& p : plan.probes) targets.push_back({p.path, p.file_offset, p.function});
        spin_.emplace(*uprobe_pmu_, std::move(targets), spec_.spin_stack);
        spin_->check_targets();
        for (std::size_t i = 0; i < plan.probes.size(); ++i)
            plan.probes[i].refused = spin_->refusal(i);
        SpinRecording recording;
        recording.stack_size = spec_.spin_stack;
        recording.probes = std::move(plan.probes);
        recording.searched = std::move(plan.searched);
        result_.spin = std::move(recording);
    }

    // A process mapped files after the start (dlopen, or a process --match found later):
    // those not searched yet are, and what they define of the --spin functions is probed from
    // now on in every attached thread (threads attached later get every probe anyway). A
    // command's probes are inherited ones, opened before it ran, and are not extended.
    void extend_spin(const ProcessRecord& process) {
        if (!spin_ || spec_.mode == Mode::command) return;
        std::vector<std::string> fresh;
        for (auto& b : spin_binaries(process.info.exe, process.modules))
            if (spin_tried_.insert(b).second) fresh.push_back(std::move(b));
        if (fresh.empty()) return;
        auto plan = record::extend_spin(*spec_.spin, fresh);
        auto& recording = *result_.spin;
        recording.searched.insert(recording.searched.end(), plan.searched.begin(),
                                  plan.searched.end());
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
        std::vector<sampling::UprobeTarget> targets;
        for (const auto& p : plan.probes) targets.push_back({p.path, p.file_offset, p.function});
        const std::size_t first = spin_->add_targets(std::move(targets));
        std::vector<std::string> found;
        for (std::size_t i = 0; i < plan.probes.size(); ++i) {
            plan.probes[i].refused = spin_->refusal(first + i);
            found.push_back(fmt::format("{} in {}", plan.probes[i].function, plan.probes[i].path));
            recording.probes.push_back(std::move(plan.probes[i]));
        }
        note(fmt::format(
            "spin: {} mapped by process {} ({}) after the recording started: probed from when "
            "lockprof saw it (within {} ms), calls before that are not counted",
            fmt::join(found, ", "), process.info.pid, process.info.comm, kModuleRefresh.count()));
        for (auto& [pid, live] : live_)
            for (pid_t tid : live.tasks) {
                std::size_t failed = 0;
                const int error = spin_->attach_task(tid, failed, first);
                if (error && error != ESRCH)
                    note(fmt::format("spin: thread {} of {}: {}", tid, pid,
                                     spin_error(error, failed)));
            }
    }

    std::string spin_error(int error, std::size_t failed) const {
        const auto& p = result_.spin->probes.at(failed);
        return pmu::explain_uprobe_error(error, p.function, p.path);
    }

    // Every function was refused by the kernel: one line, the first refusal.
    std::string nothing_probed() const {
        const auto notes = spin_->notes();
        return notes.empty() ? "--spin: no function could be probed"
                             : notes.front().substr(notes.front().find("--spin:"));
    }

    std::optional<std::string> target_string(std::uint32_t pid, std::uint64_t address) {
        if (address == 0) return std::nullopt;
        const auto key = std::make_pair(pid, address);
        if (auto it = strings_.find(key); it != strings_.end()) return it->second;
        auto text = read_process_string(static_cast<pid_t>(pid), address);
        if (text) strings_[key] = *text;
        return text;
    }

    void drain_spin() {
        if (!spin_) return;
        const auto& abi = arch::call_abi();
        for (auto& h : spin_->drain()) {
            SpinHit hit;
            hit.probe = h.probe;
            hit.is_return = h.is_return;
            hit.pid = h.pid;
            hit.tid = h.tid;
            hit.time_ns = h.time_ns;
            hit.return_value = h.return_value;
            if (!h.is_return) {
                know_command_process(static_cast<pid_t>(h.pid));
                hit.lock = arch::argument(abi, h.regs, 0).value_or(0);
                hit.return_address = h.return_address;
                if (result_.spin->probes[h.probe].arguments == SpinArguments::pg_s_lock) {
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
                keep_stack(std::move(hit));
                continue;
            }
            result_.spin->hits.push_back(std::move(hit));
        }
    }

    // Reservoir sampling per call site: a site's first kSpinStacksPerSite stacks are kept,
    // then its n-th replaces a kept one at random with probability kSpinStacksPerSite / n, so
    // what is kept is a uniform sample of the site's stacks, in bounded memory.
    void keep_stack(SpinHit hit) {
        ++result_.spin->stacks_seen;
        const std::string site =
            result_.spin->probes[hit.probe].arguments == SpinArguments::pg_s_lock
                ? fmt::format("{}:{:x}:{}:{:x}", hit.probe, hit.file_pointer, hit.line,
                              hit.func_pointer)
                : fmt::format("{}:{:x}", hit.probe, hit.return_address.value_or(0));
        auto& reservoir = stack_reservoirs_[site];
        ++reservoir.seen;
        auto& hits = result_.spin->hits;
        if (reservoir.kept.size() < kSpinStacksPerSite) {
            held_stack_bytes_ += hit.user_stack.size();
            reservoir.kept.push_back(hits.size());
            pending_spin_stacks_.push_back(hits.size());
            hits.push_back(std::move(hit));
            return;
        }
        const auto slot =
            std::uniform_int_distribution<std::uint64_t>(0, reservoir.seen - 1)(random_);
        if (slot >= kSpinStacksPerSite) return;
        SpinHit& replaced = hits[reservoir.kept[slot]];
        held_stack_bytes_ -= std::min(held_stack_bytes_, replaced.user_stack.size());
        held_stack_bytes_ += hit.user_stack.size();
        if (replaced.user_regs.empty()) pending_spin_stacks_.push_back(reservoir.kept[slot]);
        replaced = std::move(hit);
    }

    // --- call stacks (--call-graph dwarf) --------------------------------------------------

    // The mappings of process `pid` as last read; nullptr when it was never seen alive.
    const std::vector<profiling::MappedModule>* modules_of(std::uint32_t pid) const {
        const auto it = known_.find(static_cast<pid_t>(pid));
        if (it == known_.end() || result_.processes[it->second].modules.empty()) return nullptr;
        return &result_.processes[it->second].modules;
    }

    // Unwinds the stack copies held so far: those of processes with known mappings, or with
    // `all` (at the end) every one, unknown processes giving empty stacks.
    void unwind_stacks(bool all) {
        static const std::vector<profiling::MappedModule> kNone;
        std::size_t held = 0;
        for (std::size_t i = first_unwound_; i < result_.samples.size(); ++i) {
            auto& sample = result_.samples[i];
            if (sample.user_regs.empty()) continue;
            const auto* modules = modules_of(sample.pid);
            if (modules || all)
                unwinder_.unwind(sample, modules ? *modules : kNone);
            else
                held += sample.user_stack.size();
        }
        if (held == 0) first_unwound_ = result_.samples.size();
        std::size_t spin_held = 0;
        if (result_.spin) {
            auto& hits = result_.spin->hits;
            std::vector<std::size_t> still_pending;
            for (const std::size_t i : pending_spin_stacks_) {
                auto& h = hits[i];
                if (h.user_regs.empty()) continue;
                const auto* modules = modules_of(h.pid);
                if (!modules && !all) {
                    spin_held += h.user_stack.size();
                    still_pending.push_back(i);
                    continue;
                }
                auto chain =
                    spin_unwinder_.unwind(h.user_regs, h.user_stack, modules ? *modules : kNone);
                // The caller's frame comes first, from the return address read at entry (what
                // the unwinder finds there too, unless the stack copy is too short for it).
                if (h.return_address && (chain.empty() || chain.front() != *h.return_address))
                    chain.insert(chain.begin(), *h.return_address);
                h.callchain = std::move(chain);
                h.user_regs = {};
                h.user_stack = {};
            }
            pending_spin_stacks_ = std::move(still_pending);
        }
        held_stack_bytes_ = held + spin_held;
    }

    // Copies of processes not known yet stay held: the next unwinding waits until another
    // budget's worth has come in.
    void unwind_if_over_budget() {
        if (held_stack_bytes_ <= unwind_threshold_) return;
        unwind_stacks(false);
        unwind_threshold_ = held_stack_bytes_ + kHeldStackBytes;
    }

    void finish_spin() {
        if (!spin_) return;
        spin_->stop();
        drain_spin();
        for (const auto& c : spin_->counts()) result_.spin->kernel_entries.push_back(c.entries);
        result_.spin->lost = spin_->lost();
        result_.spin->stacks_lost = spin_->stacks_lost();
        for (auto& n : spin_->notes()) note(std::move(n));
        // Strings of processes that ended before they were read: from their mapped files.
        for (auto& h : result_.spin->hits) {
            if (h.is_return || result_.spin->probes[h.probe].arguments != SpinArguments::pg_s_lock)
                continue;
            const auto known = known_.find(static_cast<pid_t>(h.pid));
            if (known == known_.end()) continue;
            const auto& modules = result_.processes[known->second].modules;
            if (h.file.empty() && h.file_pointer)
                h.file = read_mapped_string(modules, h.file_pointer).value_or("");
            if (h.func.empty() && h.func_pointer)
                h.func = read_mapped_string(modules, h.func_pointer).value_or("");
        }
    }

    // --- command --------------------------------------------------------------------------

    void run_command() {
        if (spec_.spin) {
            // Probes are placed in files: the program and the libraries it will load.
            std::string program = find_program(spec_.command[0]);
            std::error_code ec;
            if (auto canonical = std::filesystem::canonical(program, ec); !ec)
                program = canonical.string();
            if (!program.empty()) {
                std::vector<std::string> binaries{program};
                for (auto& lib : symbols::needed_libraries(program))
                    binaries.push_back(std::move(lib));
                prepare_spin(binaries);
                // Refused before the command runs, never run with probes that break its forks.
                std::string why;
                if (!spin_->prepare_inheritance(why))
                    throw Error(fmt::format(
                        "--spin -- CMD: {}; a command's new threads and processes inherit only "
                        "probes defined in tracefs (the uprobe PMU's make their fork fail with "
                        "EFAULT, docs/record.md); run as root, or start the program and attach "
                        "with --pid PID",
                        why));
                if (spin_->none_usable()) throw Error(nothing_probed());
            }
        }
        // A signal while lockprof was starting: the command is not started at all.
        if (const int signal = stop_.load()) {
            const std::string step = fmt::format("{}: not started, {} came first", spec_.command[0],
                                                 signal_name(signal));
            if (spec_.on_stop_step) spec_.on_stop_step(step);
            note(step);
            return;
        }
        int gate[2], status_pipe[2];
        if (pipe2(gate, O_CLOEXEC) != 0 || pipe2(status_pipe, O_CLOEXEC) != 0)
            throw Error(fmt::format("cannot start '{}': pipe failed ({})", spec_.command[0],
                                    std::strerror(errno)));
        std::vector<char*> args;
        for (const auto& a : spec_.command) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        const pid_t child = fork();
        if (child < 0)
            throw Error(fmt::format("cannot start '{}': fork failed ({})", spec_.command[0],
                                    std::strerror(errno)));
        if (child == 0) {
            // Wait until the parent has opened the counters, then become CMD.
            char go = 0;
            while (::read(gate[0], &go, 1) < 0 && errno == EINTR) {
            }
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            execvp(args[0], args.data());
            const int error = errno;
            [[maybe_unused]] auto ignored = ::write(status_pipe[1], &error, sizeof error);
            _exit(127);
        }
        ::close(gate[0]);
        ::close(status_pipe[1]);

        ProcessRecord p;
        p.info.pid = child;
        p.info.comm = spec_.command[0];
        p.info.uid = geteuid();
        const std::size_t index = add_process(std::move(p), false);
        if (!spec_.counting.events.empty()) {
            std::vector<pmu::OpenFailure> failures;
            command_counters_ =
                pmu::ThreadCounters::open(spec_.counting.events, spec_.counting.groups, failures,
                                          {.task = child, .inherit = true, .enable_on_exec = true});
            note_failures(failures);
        }
        if (sampler_) {
            if (const int error = sampler_->attach_inherited(child, event_cpus(spec_.root)))
                result_.notes.push_back(
                    fmt::format("sampling: the command cannot be sampled: {}",
                                pmu::explain_open_error(error, result_.sampling->event)));
        }
        if (spin_) {
            std::size_t failed = 0;
            if (const int error = spin_->attach_inherited(child, event_cpus(spec_.root), failed)) {
                kill(child, SIGKILL);
                waitpid(child, nullptr, 0);
                throw Error(spin_error(error, failed));
            }
            if (spin_->none_usable()) {
                kill(child, SIGKILL);
                waitpid(child, nullptr, 0);
                throw Error(nothing_probed());
            }
        }
        const char go = 1;
        [[maybe_unused]] auto ignored = ::write(gate[1], &go, 1);
        ::close(gate[1]);
        int exec_error = 0;
        ssize_t got;
        do {
            got = ::read(status_pipe[0], &exec_error, sizeof exec_error);
        } while (got < 0 && errno == EINTR);
        ::close(status_pipe[0]);
        if (got == static_cast<ssize_t>(sizeof exec_error)) {
            waitpid(child, nullptr, 0);
            const bool missing = exec_error == ENOENT || exec_error == ENOTDIR;
            throw CommandError(
                fmt::format("{}: {}: {}", spec_.command[0],
                            missing ? "command not found" : std::strerror(exec_error),
                            missing ? "check the name and PATH (exit 127, as a shell)"
                                    : "check its permissions (exit 126, as a shell)"),
                missing ? 127 : 126);
        }

        refresh_modules(child);  // exec'd: its own program is mapped now
        int status = 0;
        while (true) {
            drain_samples();
            refresh_live_modules();
            const pid_t done = waitpid(child, &status, WNOHANG);
            if (done == child) break;
            if (const int signal = stop_.load()) stop_command(child, signal);
            for (int i = 0; i < 5; ++i) {
                drain_between_polls();
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
        result_.exit_status = WIFEXITED(status)     ? WEXITSTATUS(status)
                              : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                                    : 1;
        result_.processes[index].exited = true;
        live_.erase(child);
    }

    // A signal asked the recording to stop: the command is asked to end, then made to (see
    // record()). Called every poll until it has exited.
    void stop_command(pid_t child, int signal) {
        const auto now = Clock::now();
        const auto grace = spec_.stop_grace;
        const double grace_s = std::chrono::duration<double>(grace).count();
        const std::string who = fmt::format("'{}' (pid {})", spec_.command[0], child);
        if (!stopping_since_) {
            stopping_since_ = now;
            result_.interrupted = true;
            // Ctrl-C reaches the command from the terminal too; a SIGTERM is for lockprof.
            if (signal == SIGTERM)
                send_stop(child, SIGTERM,
                          fmt::format("{}: passed SIGTERM on to {}", kStopping, who));
            return;
        }
        if (!terminated_since_ && now - *stopping_since_ >= grace)
            send_stop(child, SIGTERM,
                      fmt::format("{}: {} was still running {:.1f} s after SIGINT; sent it SIGTERM",
                                  kStopping, who, grace_s));
        else if (terminated_since_ && !killed_ && now - *terminated_since_ >= grace) {
            killed_ = true;
            send_stop(
                child, SIGKILL,
                fmt::format("{}: {} was still running {:.1f} s after SIGTERM; sent it SIGKILL",
                            kStopping, who, grace_s));
        }
    }

    void send_stop(pid_t child, int signal, std::string step) {
        if (signal == SIGTERM) terminated_since_ = Clock::now();
        kill(child, signal);
        if (spec_.on_stop_step) spec_.on_stop_step(step);
        note(std::move(step));
    }

    static constexpr const char* kStopping = "stopping the command";

    // --- pid / match ----------------------------------------------------------------------

    void run_attached() {
        std::optional<NameMatcher> matcher;
        if (spec_.mode == Mode::match) matcher.emplace(spec_.match);
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
        if (spec_.spin) {
            std::vector<std::string> binaries;
            for (const auto& info : pending)
                for (auto& b : spin_binaries(info.exe, modules_now(info.pid)))
                    if (std::find(binaries.begin(), binaries.end(), b) == binaries.end())
                        binaries.push_back(std::move(b));
            prepare_spin(binaries);
        }
        for (const auto& info : pending) attach_process(info);
        bool any = false;
        for (const auto& p : result_.processes) any |= p.problem.empty();
        if (!any) throw Error(result_.processes.front().problem);

        const auto deadline = spec_.duration_ns
                                  ? start_ + std::chrono::nanoseconds(*spec_.duration_ns)
                                  : Clock::time_point::max();
        while (true) {
            if (stop_.load() != 0) {
                result_.interrupted = true;
                break;
            }
            if (Clock::now() >= deadline) break;
            if (matcher)
                for (pid_t pid : find_processes(*matcher, getpid(), proc_root_))
                    if (!known_.count(pid))
                        if (const auto info = read_process(pid, proc_root_)) attach_process(*info);
            poll_processes();
            drain_samples();
            if (live_.empty() && !matcher) {
                result_.notes.push_back(fmt::format(
                    "every recorded process exited after {:.1f} s; recording ended there",
                    seconds()));
                break;
            }
            auto next = Clock::now() + kPollInterval;
            if (next > deadline) next = deadline;
            while (Clock::now() < next && stop_.load() == 0) {
                drain_between_polls();
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
    }

    // `snapshot`: read its mappings now (not for a forked child that has not exec'd yet).
    std::size_t add_process(ProcessRecord p, bool snapshot = true) {
        p.seen_at_s = seconds();
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

    void attach_process(const ProcessInfo& info) {
        ProcessRecord p;
        p.info = info;
        add_process(std::move(p));
        attach_new_tasks(info.pid);
    }

    void attach_new_tasks(pid_t pid) {
        auto& live = live_.at(pid);
        auto& process = result_.processes[live.index];
        for (pid_t tid : list_tasks(pid, proc_root_)) {
            if (!live.tasks.insert(tid).second) continue;
            TaskRecord task;
            task.tid = tid;
            task.comm = task_comm(pid, tid, proc_root_);
            int refused = 0;
            if (!spec_.counting.events.empty()) {
                std::vector<pmu::OpenFailure> failures;
                auto counters = pmu::ThreadCounters::open(
                    spec_.counting.events, spec_.counting.groups, failures, {.task = tid});
                bool ended = false;  // between listing and attaching: nothing to report
                for (const auto& f : failures) {
                    if (f.error == EACCES || f.error == EPERM) refused = f.error;
                    ended = ended || f.error == ESRCH;
                }
                if (ended && counters.open_descriptors() == 0) continue;
                if (counters.open_descriptors() > 0) {
                    counters.start();
                    live.counters.emplace(tid, std::move(counters));
                    task.attached = true;
                }
                if (!refused && !ended) note_failures(failures);
            }
            if (sampler_ && !refused) {
                const int error = sampler_->attach_task(tid);
                if (error == EACCES || error == EPERM)
                    refused = error;
                else if (error == ESRCH)
                    continue;  // the thread ended meanwhile
                else if (error == ENOMEM)
                    note(
                        fmt::format("sampling: thread {} of {} cannot be sampled: no ring buffer "
                                    "could be mapped (see the locked-memory note)",
                                    tid, pid));
                else if (error)
                    note(fmt::format("sampling: thread {} of {} cannot be sampled: {}", tid, pid,
                                     pmu::explain_open_error(error, result_.sampling->event)));
            }
            if (spin_ && !refused) {
                std::size_t failed = 0;
                const int error = spin_->attach_task(tid, failed);
                if (error == EACCES || error == EPERM) {
                    if (!spin_attached_) throw Error(spin_error(error, failed));
                    refused = error;
                } else if (error == ESRCH) {
                    continue;
                } else if (error) {
                    note(fmt::format("spin: thread {} of {}: {}", tid, pid,
                                     spin_error(error, failed)));
                } else if (spin_->none_usable()) {
                    throw Error(nothing_probed());
                } else {
                    spin_attached_ = true;
                }
            }
            if (refused && process.problem.empty())
                process.problem = explain_attach_refusal(process.info, context_);
            process.threads.push_back(std::move(task));
        }
    }

    void poll_processes() {
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
    void retire(pid_t pid) {
        auto node = live_.extract(pid);
        for (auto& [tid, counters] : node.mapped().counters)
            retired_.emplace_back(node.mapped().index, tid, std::move(counters));
    }

    void refresh_live_modules() {
        const auto now = Clock::now();
        for (auto& [pid, live] : live_)
            if (now - live.refreshed >= kModuleRefresh) refresh_modules(pid);
    }

    // A process's mappings as of now; none once it has exited (a matched process may end
    // between any two reads of its /proc files, and that is no error).
    std::vector<profiling::MappedModule> modules_now(pid_t pid) const {
        return symbols::modules_of_maps(read_all(fmt::format("{}/{}/maps", proc_root_, pid)));
    }

    // Re-reads the mappings when they changed (exec, dlopen), and the name with them.
    void refresh_modules(pid_t pid) {
        auto& live = live_.at(pid);
        live.refreshed = Clock::now();
        const std::string text = read_all(fmt::format("{}/{}/maps", proc_root_, pid));
        if (spin_)
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
        // Not while the first probes are planned (the initial processes are searched whole).
        if (spin_) extend_spin(p);
    }

    // Samples from processes not attached by pid (children of a command) make them known,
    // with their mappings, while they are alive.
    void know_command_process(pid_t pid) {
        if (pid > 0 && !known_.count(pid) && spec_.mode == Mode::command) {
            ProcessRecord p;
            p.info.pid = pid;
            if (auto info = read_process(pid, proc_root_)) p.info = *info;
            add_process(std::move(p));
            if (result_.processes.back().modules.empty()) {
                result_.processes.back().exited = true;
                live_.erase(pid);
            }
        }
    }

    void drain_samples() {
        drain_spin();
        if (!sampler_) return;
        for (auto& s : sampler_->drain()) {
            know_command_process(static_cast<pid_t>(s.pid));
            held_stack_bytes_ += s.user_stack.size();
            result_.samples.push_back(std::move(s));
        }
        for (auto& e : sampler_->take_events()) task_events_.push_back(std::move(e));
    }

    // Between two polls: the probes' buffers every 10 ms, and with stack copies (big records)
    // the sampling buffers too.
    void drain_between_polls() {
        if (stacks_) {
            drain_samples();
            unwind_if_over_budget();
        } else {
            drain_spin();
        }
    }

    void note_failures(const std::vector<pmu::OpenFailure>& failures) {
        for (const auto& f : failures)
            note(pmu::explain_open_error(f.error, spec_.counting.events[f.event].requested));
    }

    void note(std::string line) {
        if (noted_.insert(line).second) result_.notes.push_back(std::move(line));
    }

    void finish() {
        result_.duration_s = seconds();
        finish_spin();
        if (sampler_) {
            sampler_->stop();
            drain_samples();
            // Children that ended before their mappings were read, or before a later read
            // saw all of them, resolve through the kernel's records of them.
            auto replayed = replay_task_events(std::move(task_events_));
            for (auto& p : result_.processes) {
                auto it = replayed.find(p.info.pid);
                if (it == replayed.end()) continue;
                p.modules = with_replayed_mappings(std::move(p.modules), it->second.modules);
                p.before_exec = std::move(it->second.before_exec);
                if (p.info.comm.empty()) p.info.comm = it->second.comm;
            }
            result_.samples_lost = sampler_->lost();
            for (auto& n : sampler_->notes()) note(std::move(n));
        }
        if (stacks_) {
            unwind_stacks(true);
            if (result_.sampling) {
                const auto& stats = unwinder_.stats();
                result_.sampling->unwound = stats.stacks;
                result_.sampling->unwound_without_callers = stats.without_callers;
                result_.sampling->unwind_seconds = stats.seconds;
            }
            if (result_.spin)
                result_.spin->stacks_unwound_without_callers =
                    spin_unwinder_.stats().without_callers;
        }
        // Samples in a function under a uretprobe: their callers, which the trampoline hides.
        if (result_.spin && !result_.samples.empty())
            restore_uretprobe_callers(result_.samples, result_.spin->hits, uprobe_pages_);
        if (command_counters_.open_descriptors() > 0)
            result_.processes.front().inherited = command_counters_.read();
        if (spec_.mode == Mode::command)
            for (auto& p : result_.processes)
                p.exited = p.exited || !read_process(p.info.pid, proc_root_);
        for (auto& [pid, live] : live_)
            for (auto& [tid, counters] : live.counters)
                retired_.emplace_back(live.index, tid, std::move(counters));
        for (auto& [index, tid, counters] : retired_) {
            counters.stop();
            for (auto& t : result_.processes[index].threads)
                if (t.tid == tid) t.counters = counters.read();
        }
        retired_.clear();
        for (const auto& p : result_.processes)
            if (!p.problem.empty()) note(p.problem);
        if (result_.samples_lost)
            note(fmt::format(
                "sampling: {} samples were lost (ring buffers full); shares are from the {} "
                "kept. Lower --sample-freq",
                result_.samples_lost, result_.samples.size()));
    }

    const RecordSpec& spec_;
    const std::string proc_root_ = spec_.root + "/proc";
    const std::atomic<int>& stop_;
    RecordResult result_;
    AttachContext context_;
    Clock::time_point start_{};
    std::optional<sampling::TaskSampler> sampler_;
    perf_event_attr sampling_attr_{};  // the sampler's, for the calibration
    // --call-graph dwarf: samples' and probes' stack copies, unwound per process image.
    const bool stacks_ =
        (spec_.sampling && spec_.sampling->dwarf_stack > 0) || (spec_.spin && spec_.spin_stack > 0);
    symbols::UnwinderCache unwinder_, spin_unwinder_;
    std::size_t held_stack_bytes_ = 0;
    std::size_t unwind_threshold_ = kHeldStackBytes;
    std::size_t first_unwound_ = 0;  // samples before it are unwound
    // --spin's stacks: per call site (keep_stack's key), the stacks seen and the hits kept;
    // the kept hits not unwound yet.
    struct StackReservoir {
        std::uint64_t seen = 0;
        std::vector<std::size_t> kept;  // into result_.spin->hits
    };
    std::map<std::string, StackReservoir> stack_reservoirs_;
    std::vector<std::size_t> pending_spin_stacks_;
    std::mt19937_64 random_{0x5eed5eedu};  // fixed: a recording's sample is reproducible
    std::optional<pmu::UprobePmu> uprobe_pmu_;
    std::optional<sampling::UprobeSampler> spin_;
    bool spin_attached_ = false;        // some thread has probes: later refusals are notes
    std::set<std::string> spin_tried_;  // files searched for --spin functions
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::string> strings_;  // read so far
    std::map<pid_t, CodeRange> uprobe_pages_;  // where each probed process's trampoline is
    pmu::ThreadCounters command_counters_;
    std::map<pid_t, std::size_t> known_;  // every process seen -> index
    std::map<pid_t, LiveProcess> live_;
    std::vector<std::tuple<std::size_t, pid_t, pmu::ThreadCounters>> retired_;
    std::set<std::string> noted_;
    std::vector<sampling::TaskEvent> task_events_;  // command: its processes' mmaps, execs
    // command, stopped by a signal: when the signal was seen, when SIGTERM was sent, SIGKILL.
    std::optional<Clock::time_point> stopping_since_, terminated_since_;
    bool killed_ = false;
};

bool overlap(const profiling::MappedModule& a, const profiling::MappedModule& b) {
    return a.start < b.end && b.start < a.end;
}

void sort_by_start(std::vector<profiling::MappedModule>& modules) {
    std::sort(modules.begin(), modules.end(),
              [](const auto& a, const auto& b) { return a.start < b.start; });
}

}  // namespace

std::map<pid_t, ReplayedProcess> replay_task_events(std::vector<sampling::TaskEvent> events) {
    using Kind = sampling::TaskEvent::Kind;
    std::stable_sort(events.begin(), events.end(),
                     [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; });
    std::map<pid_t, ReplayedProcess> out;
    std::map<std::string, std::string> build_ids;
    for (const auto& e : events) {
        switch (e.kind) {
            case Kind::fork:
                // A new thread is a fork within its process; only new processes count.
                if (e.pid != e.parent) {
                    auto parent = out.find(e.parent);
                    auto& child = out[e.pid];
                    child = parent != out.end() ? parent->second : ReplayedProcess{};
                    child.before_exec.clear();  // the parent's past is not the child's
                }
                break;
            case Kind::comm: {
                auto& p = out[e.pid];
                if (e.exec && !p.modules.empty())
                    p.before_exec.push_back({e.time_ns, std::exchange(p.modules, {})});
                if (e.pid == e.tid) p.comm = e.name;
                break;
            }
            case Kind::mmap: {
                // "//anon" is anonymous memory (JIT code): no file to resolve against.
                const bool file = e.name.starts_with('/') && !e.name.starts_with("//");
                if (!(file || e.name == symbols::kVdso) || e.address < e.file_offset) break;
                profiling::MappedModule m;
                m.path = e.name;
                m.start = e.address - e.file_offset;
                m.end = e.address + e.length;
                m.permissions = "r-xp";
                auto [id, added] = build_ids.try_emplace(m.path);
                if (added && m.path != symbols::kVdso) id->second = symbols::build_id_of(m.path);
                m.build_id = id->second;
                auto& modules = out[e.pid].modules;
                std::erase_if(modules, [&](const auto& old) { return overlap(old, m); });
                modules.push_back(std::move(m));
                break;
            }
        }
    }
    for (auto& [pid, p] : out) {
        sort_by_start(p.modules);
        for (auto& earlier : p.before_exec) sort_by_start(earlier.modules);
    }
    return out;
}

std::vector<profiling::MappedModule> with_replayed_mappings(
    std::vector<profiling::MappedModule> snapshot,
    const std::vector<profiling::MappedModule>& replayed) {
    const std::size_t read = snapshot.size();
    for (const auto& m : replayed)
        if (std::none_of(snapshot.begin(), snapshot.begin() + static_cast<std::ptrdiff_t>(read),
                         [&](const auto& old) { return overlap(old, m); }))
            snapshot.push_back(m);
    sort_by_start(snapshot);
    return snapshot;
}

const char* mode_name(Mode mode) {
    switch (mode) {
        case Mode::command:
            return "command";
        case Mode::pid:
            return "pid";
        case Mode::match:
            return "match";
    }
    return "?";
}

RecordResult record(const RecordSpec& spec, const std::vector<std::string>& argv,
                    const std::atomic<int>& stop) {
    return Recorder(spec, argv, stop).run();
}

}  // namespace lockprof::record
