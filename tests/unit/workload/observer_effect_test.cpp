// The observer-effect check (RunSpec::perturbation_check): run_sweep() pairs every measured trial
// with a plain twin, and analysis::summarize() judges instrumented against plain. Two test
// instruments stand in for sampling and counting, with effects known by construction:
//  - HalfTimeInstrument: a per-thread CPU-time timer whose signal handler burns, each time it
//    runs, as much CPU time as the thread ran since the handler last returned, so the loop gets
//    about half of the thread's CPU time. It adds up what it burned: the loop kept 1 - burned /
//    the workers' CPU time of their windows, and that is the throughput ratio to expect (about
//    0.52: the stretch after the last signal of a trial goes unburned);
//  - IdleInstrument: attaches to every worker and does nothing: 1x, equivalent.
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/measure/instrument.hpp"
#include "lockprof/workload/plan.hpp"
#include "lockprof/workload/sweep.hpp"
#include "support/sanitizers.hpp"
#include "support/thread_cpu.hpp"

// Its own namespace: the unit tests compile in unity batches.
namespace lockprof::workload::observer_effect_test {
namespace {

using test::thread_cpu_ns;

// When the handler last returned, on this thread (CPU time); 0: not armed.
thread_local std::uint64_t last_return_ns = 0;
// CPU time every handler burned, all threads.
std::atomic<std::uint64_t> burned_ns{0};

void burn_as_long_as_the_thread_ran(int) {
    const int saved = errno;
    const std::uint64_t entry = thread_cpu_ns();
    if (last_return_ns != 0 && entry > last_return_ns) {
        const std::uint64_t until = entry + (entry - last_return_ns);
        while (thread_cpu_ns() < until) {
        }
    }
    last_return_ns = thread_cpu_ns();
    burned_ns.fetch_add(last_return_ns - entry, std::memory_order_relaxed);
    errno = saved;
}

class HalfTime : public measure::ThreadInstrument {
  public:
    HalfTime() {
        sigevent event{};
        event.sigev_notify = SIGEV_THREAD_ID;
        event.sigev_signo = SIGRTMIN + 3;
        event._sigev_un._tid = static_cast<pid_t>(::syscall(SYS_gettid));
        created_ = timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer_) == 0;
    }
    ~HalfTime() override {
        if (created_) timer_delete(timer_);
    }
    void start() override {
        ASSERT_TRUE(created_) << std::strerror(errno);
        last_return_ns = thread_cpu_ns();
        itimerspec every{};
        every.it_value.tv_nsec = every.it_interval.tv_nsec = 500'000;  // 0.5 ms of CPU time
        timer_settime(timer_, 0, &every, nullptr);
    }
    void stop() override {
        itimerspec off{};
        timer_settime(timer_, 0, &off, nullptr);
        last_return_ns = 0;
    }
    void collect(measure::ThreadMeasurements&) override {}

  private:
    timer_t timer_{};
    bool created_ = false;
};

struct HalfTimeInstrument : measure::Instrumentation {
    HalfTimeInstrument() {
        struct sigaction action {};
        action.sa_handler = burn_as_long_as_the_thread_ran;
        action.sa_flags = SA_RESTART;
        sigemptyset(&action.sa_mask);
        sigaction(SIGRTMIN + 3, &action, &previous);
    }
    ~HalfTimeInstrument() override { sigaction(SIGRTMIN + 3, &previous, nullptr); }
    std::unique_ptr<measure::ThreadInstrument> attach_current_thread(unsigned) override {
        return std::make_unique<HalfTime>();
    }
    struct sigaction previous {};
};

// Counts the workers it was attached to: which trials ran instrumented.
struct IdleInstrument : measure::Instrumentation {
    struct Idle : measure::ThreadInstrument {
        void start() override {}
        void stop() override {}
        void collect(measure::ThreadMeasurements&) override {}
    };
    std::unique_ptr<measure::ThreadInstrument> attach_current_thread(unsigned) override {
        ++attached;
        return std::make_unique<Idle>();
    }
    std::atomic<unsigned> attached{0};
};

RunSpec one_lock(unsigned trials, std::uint64_t duration_ns) {
    RunSpec spec;
    spec.locks = {"tas"};
    spec.threads = {1};
    spec.duration_ns = duration_ns;
    spec.trials = trials;
    spec.perturbation_check = true;
    return spec;
}

RunResult sweep(const RunSpec& spec, measure::Instrumentation& instrument,
                std::vector<std::string>* progress = nullptr) {
    RunControl control;
    control.instruments.push_back(&instrument);
    SweepHooks hooks;
    if (progress)
        hooks.progress = [progress](const std::string& line) { progress->push_back(line); };
    RunResult run = run_sweep(make_plan(spec, calibrate()), control, hooks);
    return run;
}

TEST(ObserverEffect, EveryMeasuredTrialGetsAPlainTwinInAlternatingOrder) {
    RunSpec spec = one_lock(3, 5'000'000);
    spec.locks = {"tas", "ticket"};
    IdleInstrument idle;
    std::vector<std::string> progress;
    const RunResult run = sweep(spec, idle, &progress);
    EXPECT_EQ(progress, (std::vector<std::string>{
                            "checking exclusion: tas with 1 thread",
                            "checking exclusion: ticket with 1 thread",
                            "tas with 1 thread, trial 1/3",
                            "tas with 1 thread, trial 1/3 without instruments",
                            "ticket with 1 thread, trial 1/3",
                            "ticket with 1 thread, trial 1/3 without instruments",
                            "tas with 1 thread, trial 2/3 without instruments",
                            "tas with 1 thread, trial 2/3",
                            "ticket with 1 thread, trial 2/3 without instruments",
                            "ticket with 1 thread, trial 2/3",
                            "tas with 1 thread, trial 3/3",
                            "tas with 1 thread, trial 3/3 without instruments",
                            "ticket with 1 thread, trial 3/3",
                            "ticket with 1 thread, trial 3/3 without instruments",
                        }));
    // Instruments only in the measured trials: not in the verification, not in the twins.
    EXPECT_EQ(idle.attached.load(), 6u);
    for (const auto& cell : run.cells) {
        ASSERT_EQ(cell.trials.size(), 3u);
        ASSERT_EQ(cell.plain_trials.size(), 3u);
        for (unsigned i = 0; i < 3; ++i) {
            EXPECT_EQ(cell.plain_trials[i].trial, i);
            EXPECT_EQ(cell.plain_trials[i].threads.size(), 1u);
            EXPECT_GT(cell.plain_trials[i].threads[0].acquires, 0u);
        }
        EXPECT_TRUE(cell.complete);
    }
}

TEST(ObserverEffect, NoTwinsWithoutTheCheckOrWithoutInstruments) {
    RunSpec spec = one_lock(2, 2'000'000);
    spec.perturbation_check = false;
    IdleInstrument idle;
    RunResult run = sweep(spec, idle);
    EXPECT_TRUE(run.cells.at(0).plain_trials.empty());
    spec.perturbation_check = true;
    RunControl bare;  // nothing to compare with
    run = run_sweep(make_plan(spec, calibrate()), bare, {});
    EXPECT_TRUE(run.cells.at(0).plain_trials.empty());
    EXPECT_FALSE(analysis::summarize(run).at(0).perturbation);
}

// The instrument takes about half of the worker's CPU time from the loop: the check must say
// lowered, with the share the loop kept inside its interval.
TEST(ObserverEffect, AnInstrumentThatTakesHalfTheCpuTimeIsReportedAsLoweringThroughputByHalf) {
#ifdef LOCKPROF_TEST_TSAN
    GTEST_SKIP() << "TSan defers a signal's handler to its next interceptor, which the measured "
                    "loop never calls: the burn would fall after the trial's window";
#endif
    HalfTimeInstrument half;
    burned_ns = 0;
    const RunResult run = sweep(one_lock(5, 60'000'000), half);
    std::uint64_t cpu_ns = 0;
    for (const auto& t : run.cells.at(0).trials)
        for (const auto& th : t.threads) cpu_ns += th.cpu_ns;
    const double share = 1 - static_cast<double>(burned_ns.load()) / static_cast<double>(cpu_ns);
    ASSERT_GT(share, 0.4) << "the instrument burned " << burned_ns << " of " << cpu_ns << " ns";
    ASSERT_LT(share, 0.6) << "the instrument burned " << burned_ns << " of " << cpu_ns << " ns";
    // What the instrument left the loop as acquires/s sees it: the loop's CPU time per second
    // of window, instrumented over plain. On an idle machine that is the share above; where
    // other load deschedules the worker, the twins' windows and the instrumented ones hold
    // different CPU time, and acquires/s follow the CPU time (CI with the aarch64 stages beside
    // measured 0.684 against a share of 0.504).
    const auto loop_cpu_per_ns = [](const std::vector<TrialResult>& trials, double burned) {
        double cpu = 0, wall = 0;
        for (const auto& t : trials) {
            wall += static_cast<double>(t.wall_ns);
            for (const auto& th : t.threads) cpu += static_cast<double>(th.cpu_ns);
        }
        return (cpu - burned) / wall;
    };
    const double kept =
        loop_cpu_per_ns(run.cells.at(0).trials, static_cast<double>(burned_ns.load())) /
        loop_cpu_per_ns(run.cells.at(0).plain_trials, 0);
    const auto summaries = analysis::summarize(run);
    ASSERT_TRUE(summaries.at(0).perturbation);
    const analysis::Effect& e = *summaries[0].perturbation;
    EXPECT_EQ(e.verdict, analysis::Verdict::slower) << e.ratio << " " << analysis::interval_text(e);
    EXPECT_STREQ(analysis::perturbation_verdict_name(e.verdict), "lowered");
    ASSERT_TRUE(e.interval);
    EXPECT_LE(e.interval->low, kept) << "ratio " << e.ratio;
    EXPECT_GE(e.interval->high, kept) << "ratio " << e.ratio;
    EXPECT_EQ(e.base_trials, 5u);
    EXPECT_EQ(e.other_trials, 5u);
    // The throughput the table prints and `vs first` compares is the plain trials'.
    const double instrumented = analysis::geometric_mean(analysis::trial_throughputs(run.cells[0]));
    EXPECT_NEAR(summaries[0].throughput * e.ratio, instrumented, instrumented * 1e-9);
    EXPECT_NE(analysis::perturbation_claim(summaries[0]).find("lowered tas's throughput by "),
              std::string::npos)
        << analysis::perturbation_claim(summaries[0]);
}

// An instrument that does nothing leaves throughput as it is: the pairs find no effect, neither
// raised nor lowered. Live trials on a shared machine cannot promise "equivalent": beside the
// other tests on the 2-core CI machine one thread's 30 ms trials spread by up to 25% (an
// interval of [0.81, 1.28] seen at 8 pairs while the aarch64 stage ran), so the check is judged
// at 99.9% (a false "raised" or "lowered" 1 time in 1000 from noise alone) and says equivalent
// only where the machine allows; Summary.PerturbationComparesInstrumentedWithPlainTrials...
// checks that trials without an effect are called equivalent, from figures built by construction.
TEST(ObserverEffect, AnInstrumentThatDoesNothingFindsNoEffect) {
    IdleInstrument idle;
    const RunResult run = sweep(one_lock(8, 30'000'000), idle);
    analysis::VerdictOptions strict;
    strict.confidence = 0.999;
    strict.equivalence = 0.25;
    const auto summaries = analysis::summarize(run, strict);
    ASSERT_TRUE(summaries.at(0).perturbation);
    const analysis::Effect& e = *summaries[0].perturbation;
    EXPECT_TRUE(e.verdict == analysis::Verdict::equivalent ||
                e.verdict == analysis::Verdict::inconclusive)
        << e.ratio << " " << analysis::interval_text(e);
    EXPECT_EQ(analysis::perturbation_claim(summaries[0]), "");
}

}  // namespace
}  // namespace lockprof::workload::observer_effect_test
