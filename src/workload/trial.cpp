#include "lockprof/workload/trial.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "lockprof/common/error.hpp"
#include "lockprof/workload/lock_page.hpp"
#include "lockprof/workload/pinning.hpp"
#include "lockprof/workload/plan.hpp"
#include "lockprof/workload/sched.hpp"
#include "lockprof/workload/steal.hpp"
#include "lockprof/common/number_format.hpp"

namespace lockprof::workload {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t since_ns(Clock::time_point origin) {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin).count());
}

// Everything the workers share. On a stall it is deliberately leaked: threads that never
// return may still be reading it while main reports the error and exits.
struct TrialState {
    const TrialSpec* spec = nullptr;
    const LoopKernel* kernel = nullptr;
    RunControl* control = nullptr;
    // The lock and the shared lines (--lock-page); `lock` is the lock built in it.
    std::optional<LockMemory> memory;
    void* lock = nullptr;
    SharedLine* lines = nullptr;

    // Whether the workers were told to stop (stop_workers: each sees kStop in its Progress).
    std::atomic<bool> stop{false};
    std::unique_ptr<Progress[]> progress;
    std::vector<ThreadResult> results;
    std::vector<std::uint64_t> start_ticks;
    std::vector<std::uint64_t> end_ticks;
    std::unique_ptr<std::atomic<bool>[]> finished_flags;
    std::atomic<unsigned> finished{0};
    std::atomic<unsigned> awake{0};
    std::atomic<unsigned> calibrated{0};  // workers done calibrating; all: the window opens

    std::mutex gate_mutex;
    std::condition_variable gate;
    unsigned ready = 0;
    bool released = false;
    Clock::time_point release_time;
};

// Tells every worker to stop (kernel.hpp's Progress); request_progress() repeats it at every
// poll, in case a worker's answer to an earlier request overwrote it.
void stop_workers(TrialState& s) {
    s.stop.store(true);
    for (unsigned i = 0; i < s.spec->threads; ++i)
        s.progress[i].request.store(Progress::kStop, std::memory_order_relaxed);
}

// Asks every worker to publish its acquire count, which it does at its next acquire; once the
// workers were told to stop, tells them again.
void request_progress(TrialState& s) {
    const std::uint8_t request = s.stop.load() ? Progress::kStop : Progress::kPublish;
    for (unsigned i = 0; i < s.spec->threads; ++i)
        s.progress[i].request.store(request, std::memory_order_relaxed);
}

struct WorkerArgs {
    TrialState* state;
    unsigned index;
};

// Pins the calling worker to its CPU when the trial is pinned; result.cpu is -1 when that fails.
void pin_worker(const TrialSpec& spec, ThreadResult& result) {
    if (spec.cpu_of_thread.empty()) return;
    result.cpu = spec.cpu_of_thread[result.index];
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(result.cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) result.cpu = -1;
}

// Waits at the start gate, then until every worker is awake: the condition variable wakes
// threads one by one, and a short thread would finish its acquires before the last one wakes.
void wait_for_start(TrialState& s) {
    {
        std::unique_lock lock(s.gate_mutex);
        ++s.ready;
        s.gate.notify_all();
        s.gate.wait(lock, [&] { return s.released; });
    }
    s.awake.fetch_add(1, std::memory_order_acq_rel);
    while (s.awake.load(std::memory_order_acquire) < s.spec->threads) sched_yield();
}

// Calibrates the busy work here, on this worker's CPU, while every other worker does the
// same: what one thread measures alone at start-up (no sibling busy, another frequency) is
// not what the trial runs. Returns once all have calibrated.
WorkCalibration calibrate_worker(TrialState& s, ThreadResult& result) {
    const WorkCalibration work = calibrate_work(s.spec->work);
    result.burn_iterations_per_ns = work.burn_iterations_per_ns;
    result.critical_iterations = work.critical_iterations;
    result.parallel_iterations = work.parallel_iterations;
    result.critical_work_ns = work.critical_ns;
    result.parallel_work_ns = work.parallel_ns;
    s.calibrated.fetch_add(1, std::memory_order_acq_rel);
    while (s.calibrated.load(std::memory_order_acquire) < s.spec->threads) sched_yield();
    return work;
}

// The measured loop's arguments for worker `index`.
LoopArgs loop_args(TrialState& s, unsigned index, const WorkCalibration& work,
                   ThreadResult& result) {
    LoopArgs loop;
    loop.progress = &s.progress[index];
    loop.lines = s.lines;
    loop.line_count = s.spec->work.shared_lines;
    loop.first_line_on_lock = s.spec->work.data == DataPlacement::same_line;
    loop.acquire_limit = s.spec->acquires_per_thread.value_or(UINT64_MAX);
    loop.critical_iterations = work.critical_iterations;
    loop.parallel_iterations = work.parallel_iterations;
    // Distinct, non-zero xorshift seeds per thread, derived from --seed and the trial.
    loop.seed = (s.spec->seed * 0x9E3779B97F4A7C15ull + index) | 1;
    // The read/write mix: its own generator, seeded from the thread's seed so that it draws
    // independently of the lock's; recorded in the result (ThreadResult::mix_seed).
    loop.mix_seed = (loop.seed ^ 0xD1B54A32D192ED03ull) * 0xBF58476D1CE4E5B9ull | 1;
    result.mix_seed = loop.mix_seed;
    loop.read_threshold = static_cast<std::uint64_t>(
        std::clamp(s.spec->work.read_fraction, 0.0, 1.0) * 9007199254740992.0);  // * 2^53
    loop.result = &result;
    return loop;
}

void* worker_main(void* raw) {
    auto* args = static_cast<WorkerArgs*>(raw);
    TrialState& s = *args->state;
    const unsigned index = args->index;
    ThreadResult& result = s.results[index];
    result.index = index;
    pin_worker(*s.spec, result);

    std::vector<std::unique_ptr<measure::ThreadInstrument>> instruments;
    for (measure::Instrumentation* instrumentation : s.control->instruments)
        if (auto attached = instrumentation->attach_current_thread(index))
            instruments.push_back(std::move(attached));

    wait_for_start(s);
    const WorkCalibration work = calibrate_worker(s, result);

    for (auto& instrument : instruments) instrument->start();
    result.start_ns = since_ns(s.release_time);
    s.start_ticks[index] = arch::ticks();
    const std::uint64_t cpu_start = thread_cpu_ns();
    LoopArgs loop = loop_args(s, index, work, result);
    (s.spec->verify ? s.kernel->verify_loop : s.kernel->run_loop)(s.lock, loop);
    result.cpu_ns = thread_cpu_ns() - cpu_start;
    result.end_ns = since_ns(s.release_time);
    s.end_ticks[index] = arch::ticks();
    for (auto& instrument : instruments) instrument->stop();
    for (auto& instrument : instruments) instrument->collect(result);
    instruments.clear();

    s.finished_flags[index].store(true, std::memory_order_release);
    s.finished.fetch_add(1, std::memory_order_release);
    return nullptr;
}

[[noreturn]] void stalled(TrialState* state, std::vector<pthread_t>& threads,
                          const RunnableLock& lock, const std::string& what) {
    stop_workers(*state);
    // Give threads that are merely slow a last chance to leave, then abandon them.
    const auto deadline = Clock::now() + std::chrono::seconds(1);
    while (state->finished.load() < threads.size() && Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        request_progress(*state);
    }
    for (auto t : threads) pthread_detach(t);
    throw StallError(
        fmt::format("lock '{}' with {} made no progress: {}; the lock may be broken or a thread "
                    "starved. Raise --watchdog if heavy oversubscription makes this expected",
                    lock.name, threads_text(state->spec->threads), what));
}

// The workers, with small stacks (1024-thread runs stay cheap; sanitizer builds need more).
// When one cannot be created, those already started are let through the gate to stop at once,
// joined, and the lock destroyed before the error is thrown.
std::vector<pthread_t> start_workers(TrialState& state, std::vector<WorkerArgs>& worker_args) {
    const unsigned n = state.spec->threads;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1u << 20);
    if (state.spec->sched == SchedPolicy::fifo) {  // --sched fifo: checked before the sweep
        sched_param param{};
        param.sched_priority = kFifoWorkerPriority;
        pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
        pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
        pthread_attr_setschedparam(&attr, &param);
    }
    std::vector<pthread_t> threads;
    threads.reserve(n);
    for (unsigned i = 0; i < n; ++i) {
        worker_args[i] = {&state, i};
        pthread_t thread;
        const int rc = pthread_create(&thread, &attr, worker_main, &worker_args[i]);
        if (rc != 0) {
            pthread_attr_destroy(&attr);
            stop_workers(state);
            {
                std::lock_guard lock_guard(state.gate_mutex);
                state.released = true;
            }
            state.gate.notify_all();
            for (auto t : threads) pthread_join(t, nullptr);
            state.kernel->destroy_lock(state.lock);
            throw Error(
                fmt::format("cannot create thread {} of {}: {}; lower --threads or raise the limit "
                            "(ulimit -u, /proc/sys/kernel/threads-max)",
                            i + 1, n, std::strerror(rc)));
        }
        threads.push_back(thread);
    }
    pthread_attr_destroy(&attr);
    return threads;
}

// The hypervisor's steal over the trial (workload/steal.hpp): /proc/stat read just before the
// gate opens and again once the watcher has seen the last worker stop, so the window encloses
// every thread's (it adds the workers' calibration, a few ms, and up to one 5 ms poll).
class StealWindow {
  public:
    void open() {
        before_ = read_cpu_times();
        from_ = Clock::now();
    }
    StealReading close(const std::vector<ThreadResult>& threads) const {
        const CpuTimesSnapshot after = read_cpu_times();
        const auto window =
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - from_);
        return steal_between(before_, after, steal_cpus(threads, affinity_cpus()),
                             static_cast<std::uint64_t>(window.count()), proc_stat_tick_ns());
    }

  private:
    CpuTimesSnapshot before_;
    Clock::time_point from_;
};

// Releases every worker through the start gate once all wait at it; the release time is every
// worker's time origin.
void open_gate(TrialState& state, StealWindow& steal) {
    {
        std::unique_lock gate_lock(state.gate_mutex);
        state.gate.wait(gate_lock, [&] { return state.ready == state.spec->threads; });
        steal.open();
        state.release_time = Clock::now();
        state.released = true;
    }
    state.gate.notify_all();
}

// What the watchdog remembers between polls: each thread's acquire count and the total, and
// when each last changed.
struct ProgressMarks {
    std::vector<std::uint64_t> last_seen;
    std::vector<Clock::time_point> last_change;
    std::uint64_t last_total = 0;
    Clock::time_point last_total_change;

    ProgressMarks(unsigned n, Clock::time_point origin)
        : last_seen(n, 0), last_change(n, origin), last_total_change(origin) {}

    void restart(Clock::time_point now) {
        last_total_change = now;
        std::fill(last_change.begin(), last_change.end(), now);
    }

    void update(const TrialState& state, Clock::time_point now) {
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < last_seen.size(); ++i) {
            const std::uint64_t v = state.progress[i].acquires.load(std::memory_order_relaxed);
            total += v;
            if (v != last_seen[i]) last_seen[i] = v, last_change[i] = now;
        }
        if (total != last_total) last_total = total, last_total_change = now;
    }
};

// What stalled, "" while the trial progresses: no acquire by anyone for the watchdog's time,
// or (with an acquire count) one unfinished thread without an acquire for that long.
std::string stall_of(const TrialState& state, const ProgressMarks& marks, Clock::time_point now) {
    const TrialSpec& spec = *state.spec;
    const auto watchdog = std::chrono::nanoseconds(spec.watchdog_ns);
    if (now - marks.last_total_change > watchdog)
        return fmt::format("no thread acquired it for {:.1f} s",
                           std::chrono::duration<double>(now - marks.last_total_change).count());
    if (!spec.acquires_per_thread || state.stop.load()) return "";
    for (std::size_t i = 0; i < marks.last_seen.size(); ++i) {
        if (state.finished_flags[i].load(std::memory_order_acquire)) continue;
        if (now - marks.last_change[i] > watchdog)
            return fmt::format("thread {} acquired it {} of {} times, then nothing for {:.1f} s", i,
                               marks.last_seen[i], *spec.acquires_per_thread,
                               std::chrono::duration<double>(now - marks.last_change[i]).count());
    }
    return "";
}

// Polls the workers every 5 ms until all have finished: stops them on an interrupt or when the
// duration is up, and gives up on them (stalled(), which throws) when the watchdog sees no
// progress. The duration and the watchdog count from when every worker has calibrated its
// work. Returns whether the trial was interrupted.
bool watch_workers(std::unique_ptr<TrialState>& owner, std::vector<pthread_t>& threads,
                   const RunnableLock& lock) {
    TrialState* state = owner.get();
    const TrialSpec& spec = *state->spec;
    const unsigned n = spec.threads;
    const std::atomic<bool>* interrupt = state->control->interrupted;
    bool interrupted = false;
    bool started = false;
    Clock::time_point start_time = state->release_time;
    ProgressMarks marks(n, start_time);
    while (state->finished.load(std::memory_order_acquire) < n) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const auto now = Clock::now();
        if (interrupt && interrupt->load() && !state->stop.load()) {
            interrupted = true;
            stop_workers(*state);
        }
        if (!started) {
            if (state->calibrated.load(std::memory_order_acquire) < n) continue;
            started = true;
            start_time = now;
            marks.restart(now);
        }
        if (spec.duration_ns && !state->stop.load() &&
            now - start_time >= std::chrono::nanoseconds(*spec.duration_ns))
            stop_workers(*state);
        marks.update(*state, now);
        request_progress(*state);  // read at the next poll
        if (std::string what = stall_of(*state, marks, now); !what.empty()) {
            owner.release();
            stalled(state, threads, lock, what);
        }
    }
    return interrupted;
}

// Increments of the first shared datum that an excluding lock lost: the word ends at one
// increment per exclusive acquire unless two holders overlapped (loop.hpp). A verification
// trial's check word is there even without shared lines (the word beside the lock), and its
// writers of a reader-writer lock add 2 each (checked_write_section). A measured trial
// increments the word only as the configured work: without shared lines there is nothing to
// compare, and the verification trial is the check.
std::uint64_t lost_updates(const TrialState& state, const RunnableLock& lock,
                           const std::vector<ThreadResult>& threads) {
    const TrialSpec& spec = *state.spec;
    const unsigned lines = spec.work.shared_lines;
    if (!spec.verify && lines == 0) return 0;
    std::uint64_t acquires = 0, writes = 0;
    for (const auto& thread : threads)
        acquires += thread.acquires, writes += thread.write_acquires();
    const bool on_lock = lines == 0 || spec.work.data == DataPlacement::same_line;
    const std::uint64_t counted = on_lock ? state.kernel->neighbour_words(state.lock)->datum.load()
                                          : state.lines[0].value.load();
    const std::uint64_t per_write = spec.verify && lock.shared ? 2 : 1;
    const std::uint64_t expected = per_write * (lock.shared ? writes : acquires);
    const std::uint64_t short_by = expected > counted ? expected - counted : 0;
    return (short_by + per_write - 1) / per_write;
}

// The trial's figures from the finished workers: the window from the first thread's start to
// the last thread's end, in ns and ticks, and for an excluding lock what the exclusion check
// found (lost_updates(); the overlaps are the threads').
void collect_outcome(TrialState& state, const RunnableLock& lock, TrialOutcome& outcome) {
    TrialResult& result = outcome.result;
    result.threads = std::move(state.results);
    std::uint64_t first_start = UINT64_MAX, last_end = 0;
    for (const auto& thread : result.threads) {
        first_start = std::min(first_start, thread.start_ns);
        last_end = std::max(last_end, thread.end_ns);
        outcome.overlaps += thread.overlaps;
    }
    result.wall_ns = last_end > first_start ? last_end - first_start : 0;
    const std::uint64_t first_tick =
        *std::min_element(state.start_ticks.begin(), state.start_ticks.end());
    const std::uint64_t last_tick =
        *std::max_element(state.end_ticks.begin(), state.end_ticks.end());
    result.ticks = last_tick > first_tick ? last_tick - first_tick : 0;
    if (lock.excludes) outcome.lost_updates = lost_updates(state, lock, result.threads);
}

}  // namespace

TrialOutcome run_trial(const RunnableLock& lock, const TrialSpec& spec, RunControl& control) {
    const LoopKernel& kernel = lock.kernel(spec.delay, spec.latency);
    if (!kernel)
        throw UsageError(fmt::format("lock '{}' does not accept delay '{}'", lock.name,
                                     arch::delay_name(spec.delay)));
    const unsigned n = spec.threads;

    auto* state = new TrialState;
    std::unique_ptr<TrialState> owner(state);
    state->spec = &spec;
    state->kernel = &kernel;
    state->control = &control;
    state->memory.emplace(spec.work.lock_page, kernel.lock_size, kernel.lock_align,
                          spec.work.shared_lines);
    state->lock = kernel.create_lock(state->memory->lock_storage());
    state->lines = state->memory->lines();
    state->progress = std::make_unique<Progress[]>(n);
    state->results.resize(n);
    state->start_ticks.assign(n, 0);
    state->end_ticks.assign(n, 0);
    state->finished_flags = std::make_unique<std::atomic<bool>[]>(n);

    // Under --sched fifo this thread watches one priority above the workers, or spinning
    // workers on every CPU would keep it from ending a timed trial or seeing a stall.
    const FifoScope watcher(spec.sched, kFifoWatcherPriority);
    std::vector<WorkerArgs> worker_args(n);
    std::vector<pthread_t> threads = start_workers(*state, worker_args);
    StealWindow steal;
    open_gate(*state, steal);
    TrialOutcome outcome;
    outcome.interrupted = watch_workers(owner, threads, lock);
    StealReading stolen = steal.close(state->results);
    for (auto t : threads) pthread_join(t, nullptr);
    collect_outcome(*state, lock, outcome);
    outcome.result.steal = std::move(stolen.steal);
    outcome.steal_unknown = std::move(stolen.unknown_because);
    if (spec.work.lock_page == LockPage::huge) {
        const PhysicalAddress where = state->memory->physical_address();
        outcome.result.lock_page = LockPageUse{state->memory->page_size(), where.address};
        outcome.physical_address_unknown = where.unknown_because;
    }
    kernel.destroy_lock(state->lock);
    return outcome;
}

}  // namespace lockprof::workload
