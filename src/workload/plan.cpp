#include "lockprof/workload/plan.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/workload/lock_page.hpp"
#include "lockprof/workload/sched.hpp"

namespace lockprof::workload {

void check_instruction_work(const WorkSpec& work) {
    const auto check = [](const char* option, std::uint64_t ns,
                          const std::optional<std::uint64_t>& instructions) {
        if (!instructions) return;
        if (ns != 0)
            throw UsageError(fmt::format(
                "--{}-ins: not with --{}-ns (the work is counted in instructions or timed in "
                "nanoseconds, not both); drop one",
                option, option));
        constexpr std::uint64_t kTrip = arch::kBurnInstructionsPerTrip;
        if (*instructions % kTrip != 0)
            throw UsageError(fmt::format(
                "--{}-ins: {} is not a multiple of {}, the instructions of one trip of the work "
                "loop (a decrement and a branch); give {} or {}",
                option, *instructions, kTrip, *instructions / kTrip * kTrip,
                (*instructions / kTrip + 1) * kTrip));
    };
    check("critical", work.critical_ns, work.critical_instructions);
    check("parallel", work.parallel_ns, work.parallel_instructions);
}

const RunnableLock& resolve_lock(const std::string& name) {
    if (const RunnableLock* lock = find_lock(name)) return *lock;
    std::vector<std::string> names;
    for (const auto& entry : lock_catalog()) names.push_back(entry.name);
    const std::string suggestion = did_you_mean(name, names);
    throw UsageError(
        fmt::format("unknown lock '{}'{}; known locks: {} (see `lockprof list-locks`)", name,
                    suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", suggestion),
                    fmt::join(names, ", ")));
}

TrialSpec Plan::trial_spec(const PlannedCell& cell, std::uint64_t trial) const {
    TrialSpec t;
    t.threads = cell.threads;
    t.delay = cell.delay;
    t.duration_ns = spec.duration_ns;
    t.acquires_per_thread = spec.acquires_per_thread;
    t.work = spec.work;
    t.cpu_of_thread = assign_cpus(spec.pin, cell.threads, cpus);
    t.sched = spec.sched;
    t.latency = spec.latency;
    t.seed = spec.seed + trial;
    t.watchdog_ns = spec.watchdog_ns;
    return t;
}

Plan make_plan(const RunSpec& spec, const Calibration& calibration) {
    Plan plan;
    plan.spec = spec;
    plan.calibration = calibration;
    plan.cpus = allowed_cpus();
    if (spec.locks.empty()) throw UsageError("--lock: no lock given; try --lock=tas,ttas,cas");
    if (spec.threads.empty())
        throw UsageError("--threads: no thread count given; try --threads=1,2,4");
    if (spec.trials == 0) throw UsageError("--trials: must be at least 1");
    if (spec.duration_ns && *spec.duration_ns == 0)
        throw UsageError("--duration: must be longer than 0; try --duration=1s");
    if (spec.acquires_per_thread && *spec.acquires_per_thread == 0)
        throw UsageError("--acquires: must be at least 1");
    if (!(spec.work.read_fraction >= 0 && spec.work.read_fraction <= 1))
        throw UsageError(fmt::format(
            "--read-fraction: {} is outside 0 to 1 (it is a share of the acquires); write e.g. 0.9",
            spec.work.read_fraction));
    if (spec.work.shared_lines > 4096)
        throw UsageError("--shared-lines: at most 4096 lines (256 KiB) are supported");
    check_instruction_work(spec.work);

    std::vector<std::pair<const RunnableLock*, arch::Delay>> locks;
    for (const auto& name : spec.locks) {
        const RunnableLock& lock = resolve_lock(name);
        arch::Delay delay = lock.default_delay();
        if (spec.delay) {
            delay = *spec.delay;
            if (!arch::delay_available(delay))
                throw UsageError(
                    fmt::format("--delay: '{}' does not exist on {}; choose one of "
                                "the policies `lockprof list-locks` shows",
                                arch::delay_name(delay), arch::kArchName));
            if (!lock.accepts(delay)) {
                std::vector<std::string> accepted;
                for (auto d : arch::kAllDelays)
                    if (lock.accepts(d)) accepted.emplace_back(arch::delay_name(d));
                throw UsageError(fmt::format(
                    "--delay: lock '{}' does not accept '{}' (it accepts: {}); run it separately "
                    "or pick another delay",
                    lock.name, arch::delay_name(delay), fmt::join(accepted, ", ")));
            }
        }
        if (lock.needs_lse && !arch::cpu_has_lse())
            throw UsageError(fmt::format(
                "lock '{}' needs ARMv8.1 LSE atomics, which this CPU lacks (no HWCAP_ATOMICS); "
                "use '{}@llsc' or '{}@outline'",
                lock.name, lock.algorithm, lock.algorithm));
        locks.emplace_back(&lock, delay);
    }
    for (unsigned threads : spec.threads)
        for (const auto& [lock, delay] : locks) plan.cells.push_back({lock, delay, threads});
    // --lock-page huge: refused here, before any trial, when the pool cannot hold the largest
    // lock's region (never a silent fall back to the heap).
    if (spec.work.lock_page == LockPage::huge) {
        std::size_t size = 0, align = 1;
        for (const auto& [lock, delay] : locks) {
            const LoopKernel& kernel = lock->kernel(delay, spec.latency);
            size = std::max(size, kernel.lock_size);
            align = std::max(align, kernel.lock_align);
        }
        (void)check_lock_page(spec.work.lock_page, size, align, spec.work.shared_lines);
    }
    // Validate pinning once, up front, with the largest thread count.
    (void)assign_cpus(spec.pin, *std::max_element(spec.threads.begin(), spec.threads.end()),
                      plan.cpus);
    // --sched fifo: no more workers than the CPUs they run on, unless --force.
    if (spec.sched == SchedPolicy::fifo)
        for (unsigned threads : spec.threads) {
            std::vector<int> assigned = assign_cpus(spec.pin, threads, plan.cpus);
            std::sort(assigned.begin(), assigned.end());
            const auto distinct = static_cast<unsigned>(
                std::unique(assigned.begin(), assigned.end()) - assigned.begin());
            check_fifo_oversubscription(
                threads, assigned.empty() ? static_cast<unsigned>(plan.cpus.size()) : distinct,
                spec.force);
        }
    return plan;
}

namespace {

using Clock = std::chrono::steady_clock;

// Nanoseconds `repeat` calls of burn(trips) take: the best of `runs` timed runs, so a run that
// was preempted or interrupted does not make the work look slow.
double best_burn_ns(std::uint64_t trips, std::uint64_t repeat, int runs) {
    double best_ns = 1e300;
    for (int i = 0; i < runs; ++i) {
        const auto start = Clock::now();
        for (std::uint64_t r = 0; r < repeat; ++r) arch::burn(trips);
        const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
        best_ns = std::min(best_ns, ns);
    }
    return std::max(best_ns, 1.0);
}

// Trips per nanosecond of burn(); kTrips take some 0.1 ms, long against the clock's cost.
double burn_rate() {
    constexpr std::uint64_t kTrips = 300'000;
    return static_cast<double>(kTrips) / best_burn_ns(kTrips, 1, 7);
}

// How long one burn(trips) takes: enough repetitions for some 0.1 ms per timed run.
double burn_duration_ns(std::uint64_t trips) {
    if (trips == 0) return 0;
    const std::uint64_t repeat = std::max<std::uint64_t>(1, 300'000 / trips);
    return best_burn_ns(trips, repeat, 5) / static_cast<double>(repeat);
}

std::uint64_t trips_for(std::uint64_t ns, double rate) {
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(ns) * rate));
}

}  // namespace

WorkCalibration calibrate_work(const WorkSpec& work) {
    WorkCalibration c;
    // Measured in both cases: with instruction counts it only says what they cost here.
    c.burn_iterations_per_ns = burn_rate();
    c.critical_iterations = work.critical_instructions
                                ? *work.critical_instructions / arch::kBurnInstructionsPerTrip
                                : trips_for(work.critical_ns, c.burn_iterations_per_ns);
    c.parallel_iterations = work.parallel_instructions
                                ? *work.parallel_instructions / arch::kBurnInstructionsPerTrip
                                : trips_for(work.parallel_ns, c.burn_iterations_per_ns);
    c.critical_ns = burn_duration_ns(c.critical_iterations);
    c.parallel_ns = burn_duration_ns(c.parallel_iterations);
    return c;
}

Calibration calibrate() {
    Calibration c;
    c.burn_iterations_per_ns = burn_rate();

    const auto start = Clock::now();
    const std::uint64_t start_ticks = arch::ticks();
    while (Clock::now() - start < std::chrono::milliseconds(20)) {
    }
    const std::uint64_t ticks = arch::ticks() - start_ticks;
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    c.ticks_per_ns = static_cast<double>(ticks) / ns;
    return c;
}

}  // namespace lockprof::workload
