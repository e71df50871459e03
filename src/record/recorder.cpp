// `lockprof record` (recorder.hpp): the Recorder that coordinates a recording's pieces, which
// live in their own files: the processes attached and polled (process_table.hpp), the command
// started and stopped (command_child.hpp), the spin probes (spin_probes.hpp) and the stack
// copies held for --call-graph dwarf (stack_copies.hpp). Also the replay of a command's task
// events into mappings.
#include "lockprof/record/recorder.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "lockprof/common/files.hpp"
#include "lockprof/common/signal_name.hpp"
#include "lockprof/pmu/events.hpp"
#include "lockprof/record/uretprobe_frames.hpp"
#include "lockprof/sampling/task_sampler.hpp"
#include "lockprof/sampling/uprobe_sampler.hpp"
#include "lockprof/symbols/elf_lookup.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/workload/cpu_order.hpp"
#include "record/command_child.hpp"
#include "record/notes.hpp"
#include "record/process_table.hpp"
#include "record/spin_probes.hpp"
#include "record/stack_copies.hpp"

namespace lockprof::record {
namespace {

using Clock = std::chrono::steady_clock;

// The calibration samples at 10 kHz whatever the recording's rate: the per-sample cost is the
// same, and ten times the default rate lifts it well above the calibration's noise.
constexpr std::uint64_t kCalibrationFrequency = 10000;

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
    }

    RecordResult run() {
        raise_descriptor_limit();
        if (spec_.sampling) prepare_sampler();
        if (spec_.spin) spin_.emplace(spec_, result_.spin, notes_, copies_);
        if (spec_.calibrate && (spec_.sampling || spec_.spin)) calibrate();
        start_ = Clock::now();
        if (spec_.mode == Mode::command)
            record_child();
        else
            record_attached();
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
        if (spin_) {
            c.probe_call = sampling::probe_call_cost(spin_->pmu(), spec_.spin_stack, why);
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

    // --- command: start the child, poll until it ends --------------------------------------

    void record_child() {
        if (spin_) probe_command_files();
        // A signal while lockprof was starting: the command is not started at all.
        if (const int signal = stop_.load()) {
            const std::string step = fmt::format("{}: not started, {} came first", spec_.command[0],
                                                 signal_name(signal));
            if (spec_.on_stop_step) spec_.on_stop_step(step);
            notes_.add(step);
            return;
        }
        CommandChild child(spec_.command);
        ProcessRecord p;
        p.info.pid = child.pid();
        p.info.comm = spec_.command[0];
        p.info.uid = geteuid();
        processes_.add(std::move(p), false);
        open_inherited_instruments(child);
        child.release();
        processes_.refresh_modules(child.pid());  // exec'd: its own program is mapped now
        result_.exit_status = wait_for(child);
        processes_.ended(child.pid());
    }

    // Probes are placed in files: the program and the libraries it will load.
    void probe_command_files() {
        std::string program = find_program(spec_.command[0]);
        std::error_code ec;
        if (auto canonical = std::filesystem::canonical(program, ec); !ec)
            program = canonical.string();
        if (program.empty()) return;
        std::vector<std::string> binaries{program};
        for (auto& lib : symbols::needed_libraries(program)) binaries.push_back(std::move(lib));
        spin_->prepare(binaries);
        spin_->prepare_inheritance();
    }

    // Counters, sampler and probes on the child, inherited by all it starts, before it execs.
    void open_inherited_instruments(CommandChild& child) {
        if (!spec_.counting.events.empty()) {
            std::vector<pmu::OpenFailure> failures;
            command_counters_ = pmu::ThreadCounters::open(
                spec_.counting.events, spec_.counting.groups, failures,
                {.task = child.pid(), .inherit = true, .enable_on_exec = true});
            note_open_failures(notes_, spec_.counting, failures);
        }
        if (sampler_) {
            if (const int error = sampler_->attach_inherited(child.pid(), event_cpus(spec_.root)))
                result_.notes.push_back(
                    fmt::format("sampling: the command cannot be sampled: {}",
                                pmu::explain_open_error(error, result_.sampling->event)));
        }
        if (spin_ && spin_->prepared()) {
            const std::string error = spin_->attach_inherited(child.pid(), event_cpus(spec_.root));
            if (!error.empty()) {
                child.kill_and_reap();
                throw Error(error);
            }
        }
    }

    // The poll loop until the child ends; its exit status.
    int wait_for(CommandChild& child) {
        CommandStop stopping(spec_.command[0], spec_.stop_grace, spec_.on_stop_step, notes_);
        while (true) {
            drain_samples();
            processes_.refresh_live_modules();
            if (const auto status = child.poll()) return *status;
            if (const int signal = stop_.load()) {
                result_.interrupted = true;
                stopping.step(child.pid(), signal);
            }
            for (int i = 0; i < 5; ++i) {
                drain_between_polls();
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
    }

    // --- pid / match: attach, poll until the end --------------------------------------------

    void record_attached() {
        std::optional<NameMatcher> matcher;
        if (spec_.mode == Mode::match) matcher.emplace(spec_.match);
        const auto pending = processes_.initial_targets(matcher ? &*matcher : nullptr);
        if (spin_) {
            std::vector<std::string> binaries;
            for (const auto& info : pending)
                for (auto& b : spin_binaries(info.exe, processes_.modules_now(info.pid)))
                    if (std::find(binaries.begin(), binaries.end(), b) == binaries.end())
                        binaries.push_back(std::move(b));
            spin_->prepare(binaries);
        }
        for (const auto& info : pending) processes_.attach(info);
        bool any = false;
        for (const auto& p : result_.processes) any |= p.problem.empty();
        if (!any) throw Error(result_.processes.front().problem);
        poll_attached(matcher ? &*matcher : nullptr);
    }

    void poll_attached(const NameMatcher* matcher) {
        const auto deadline = spec_.duration_ns
                                  ? start_ + std::chrono::nanoseconds(*spec_.duration_ns)
                                  : Clock::time_point::max();
        while (true) {
            if (stop_.load() != 0) {
                result_.interrupted = true;
                break;
            }
            if (Clock::now() >= deadline) break;
            if (matcher) processes_.attach_new_matches(*matcher);
            processes_.poll();
            drain_samples();
            if (!processes_.any_live() && !matcher) {
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

    // --- draining and the end ------------------------------------------------------------

    void know(pid_t pid) { processes_.know_command_process(pid); }

    void drain_samples() {
        if (spin_) spin_->drain([this](pid_t pid) { know(pid); });
        if (!sampler_) return;
        for (auto& s : sampler_->drain()) {
            know(static_cast<pid_t>(s.pid));
            copies_.hold_sample(s.user_stack.size());
            result_.samples.push_back(std::move(s));
        }
        for (auto& e : sampler_->take_events()) task_events_.push_back(std::move(e));
    }

    // Between two polls: the probes' buffers every 10 ms, and with stack copies (big records)
    // the sampling buffers too.
    void drain_between_polls() {
        if (stacks_) {
            drain_samples();
            copies_.unwind_if_over_budget();
        } else if (spin_) {
            spin_->drain([this](pid_t pid) { know(pid); });
        }
    }

    void finish() {
        result_.duration_s = seconds();
        if (spin_)
            spin_->finish([this](pid_t pid) { know(pid); },
                          [this](std::uint32_t pid) { return processes_.modules_of(pid); });
        if (sampler_) finish_sampling();
        if (stacks_) finish_stacks();
        // Samples in a function under a uretprobe: their callers, which the trampoline hides.
        if (result_.spin && !result_.samples.empty())
            restore_uretprobe_callers(result_.samples, result_.spin->hits,
                                      processes_.uprobe_pages());
        if (command_counters_.open_descriptors() > 0)
            result_.processes.front().inherited = command_counters_.read();
        if (spec_.mode == Mode::command)
            for (auto& p : result_.processes)
                p.exited = p.exited || !read_process(p.info.pid, proc_root_);
        processes_.read_counters();
        for (const auto& p : result_.processes)
            if (!p.problem.empty()) notes_.add(p.problem);
        if (result_.samples_lost)
            notes_.add(fmt::format(
                "sampling: {} samples were lost (ring buffers full); shares are from the {} "
                "kept. Lower --sample-freq",
                result_.samples_lost, result_.samples.size()));
    }

    void finish_sampling() {
        sampler_->stop();
        drain_samples();
        // Children that ended before their mappings were read, or before a later read saw all
        // of them, resolve through the kernel's records of them.
        auto replayed = replay_task_events(std::move(task_events_));
        for (auto& p : result_.processes) {
            auto it = replayed.find(p.info.pid);
            if (it == replayed.end()) continue;
            p.modules = with_replayed_mappings(std::move(p.modules), it->second.modules);
            p.before_exec = std::move(it->second.before_exec);
            if (p.info.comm.empty()) p.info.comm = it->second.comm;
        }
        result_.samples_lost = sampler_->lost();
        for (auto& n : sampler_->notes()) notes_.add(std::move(n));
    }

    void finish_stacks() {
        copies_.unwind(true);
        if (result_.sampling) {
            const auto& stats = copies_.sample_stats();
            result_.sampling->unwound = stats.stacks;
            result_.sampling->unwound_without_callers = stats.without_callers;
            result_.sampling->unwind_seconds = stats.seconds;
        }
        if (result_.spin)
            result_.spin->stacks_unwound_without_callers = copies_.spin_stats().without_callers;
    }

    const RecordSpec& spec_;
    const std::string proc_root_ = spec_.root + "/proc";
    const std::atomic<int>& stop_;
    RecordResult result_;
    Notes notes_{result_.notes};
    Clock::time_point start_{};
    std::optional<sampling::TaskSampler> sampler_;
    perf_event_attr sampling_attr_{};  // the sampler's, for the calibration
    // --call-graph dwarf: samples' and probes' stack copies, unwound per process image.
    const bool stacks_ =
        (spec_.sampling && spec_.sampling->dwarf_stack > 0) || (spec_.spin && spec_.spin_stack > 0);
    StackCopies copies_{result_.samples, result_.spin,
                        [this](std::uint32_t pid) { return processes_.modules_of(pid); }};
    std::optional<SpinProbes> spin_;  // --spin
    ProcessTable processes_{spec_, result_, notes_, sampler_, spin_, [this] { return seconds(); }};
    pmu::ThreadCounters command_counters_;
    std::vector<sampling::TaskEvent> task_events_;  // command: its processes' mmaps, execs
};

bool overlap(const measure::MappedModule& a, const measure::MappedModule& b) {
    return a.start < b.end && b.start < a.end;
}

void sort_by_start(std::vector<measure::MappedModule>& modules) {
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
                measure::MappedModule m;
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

std::vector<measure::MappedModule> with_replayed_mappings(
    std::vector<measure::MappedModule> snapshot,
    const std::vector<measure::MappedModule>& replayed) {
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
