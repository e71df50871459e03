// Both samplers on a real thread that spins in a known function: samples must land in it,
// carry a call chain, and nothing may be lost at the default rate.
#include "lockprof/sampling/sampler.hpp"

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <csignal>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lockprof/arch/context.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "support/thread_cpu.hpp"

namespace lockprof::sampling {
namespace {

using test::thread_cpu_ns;

std::atomic<std::uint64_t> g_sink{0};

// Burns `cpu_ns` of this thread's CPU time (not wall time: the machine is shared).
extern "C" __attribute__((noinline)) void lockprof_sampler_test_spin(std::uint64_t cpu_ns) {
    const std::uint64_t end = thread_cpu_ns() + cpu_ns;
    std::uint64_t x = 0;
    while (thread_cpu_ns() < end)
        // Long stretches between clock reads: the read is a syscall (glibc has no frame
        // pointers, so its samples could not be traced back here).
        for (int i = 0; i < 1'000'000; ++i) {
            x = x * 6364136223846793005ull + 1;
            asm volatile("" : "+r"(x));
        }
    g_sink.fetch_add(x, std::memory_order_relaxed);
}

struct Collected {
    measure::ThreadMeasurements result;
    bool attached = false;
};

// Runs the spin on a fresh thread under `sampler`, the way the trial runner does.
Collected sample_spin(Sampler& sampler, std::uint64_t cpu_ns) {
    Collected c;
    std::thread worker([&] {
        auto instrument = sampler.attach_current_thread(0);
        c.attached = instrument != nullptr;
        if (!instrument) return;
        instrument->start();
        lockprof_sampler_test_spin(cpu_ns);
        instrument->stop();
        instrument->collect(c.result);
    });
    worker.join();
    return c;
}

// Share of the samples' weight inside lockprof_sampler_test_spin and callees it inlined;
// clock_gettime's vDSO time counts as outside.
double share_in_spin(const measure::ThreadMeasurements& r,
                     const symbols::SymbolResolver& resolver) {
    double in = 0, all = 0;
    for (const auto& s : r.samples) {
        all += static_cast<double>(s.weight);
        const auto loc = resolver.resolve(s.ip);
        bool spin = loc.symbol.find("lockprof_sampler_test_spin") != std::string::npos;
        // Inside clock_gettime the spin function is the caller.
        for (auto ret : s.callchain)
            spin |= resolver.resolve(ret - 1).symbol.find("lockprof_sampler_test_spin") !=
                    std::string::npos;
        if (spin) in += static_cast<double>(s.weight);
    }
    return all > 0 ? in / all : 0;
}

TEST(TimerSampler, SamplesLandInTheSpinningFunction) {
    measure::SamplingInfo info;
    info.sampler = "timer";
    auto sampler = make_timer_sampler(1'000'000, 2'000'000'000ull, info);
    const auto c = sample_spin(*sampler, 300'000'000);
    ASSERT_TRUE(c.attached);
    EXPECT_TRUE(c.result.sampled);
    // Timer expirations come with the scheduler tick (CONFIG_HZ >= 100): 300 ms of CPU time
    // gives at least ~30 signals.
    ASSERT_GE(c.result.samples.size(), 10u);
    EXPECT_EQ(c.result.samples_lost, 0u);
    const auto resolver = symbols::SymbolResolver::for_process();
    EXPECT_GT(share_in_spin(c.result, resolver), 0.8);
    std::uint64_t weight = 0;
    bool chain = false;
    for (const auto& s : c.result.samples) {
        weight += s.weight;
        chain |= !s.callchain.empty();
    }
    // Overruns fold into weights: the total stands for the CPU time spent, give or take ticks.
    EXPECT_GT(weight, 150'000'000u);
    EXPECT_TRUE(chain);
}

// The buffer holds what it was sized for and counts the rest as lost. The signals are sent by
// the thread itself: how many a CPU-time timer delivers depends on the load (CI once got 9 in
// 300 ms of CPU time, the ticks merging the rest into overruns, and never filled 16 slots).
TEST(TimerSampler, FullBufferCountsLostSamples) {
    measure::SamplingInfo info;
    // A window of 0 ns leaves the minimum 16 slots; a period of an hour keeps the timer quiet.
    auto sampler = make_timer_sampler(3'600'000'000'000ull, 0, info);
    measure::ThreadMeasurements result;
    bool attached = false;
    std::thread worker([&] {
        auto instrument = sampler->attach_current_thread(0);
        attached = instrument != nullptr;
        if (!instrument) return;
        instrument->start();
        // A signal a thread sends itself, unblocked, is handled before pthread_kill returns.
        for (int i = 0; i < 20; ++i) pthread_kill(pthread_self(), SIGPROF);
        instrument->stop();
        instrument->collect(result);
    });
    worker.join();
    ASSERT_TRUE(attached);
    EXPECT_EQ(result.samples.size(), 16u);
    EXPECT_EQ(result.samples_lost, 4u);
}

TEST(PerfSampler, SamplesCpuClockWithCallChainsAndNoLoss) {
    SamplerRequest request;
    request.kind = SamplerKind::automatic;
    request.event = "cpu-clock";
    auto sampler = make_sampler(request);
    if (sampler->info().sampler != "perf")
        GTEST_SKIP() << "perf_event unavailable here: " << sampler->info().sampler_reason;
    EXPECT_EQ(sampler->info().event, "cpu-clock");
    EXPECT_EQ(sampler->info().precise_ip, 0);
    const auto c = sample_spin(*sampler, 500'000'000);
    ASSERT_TRUE(c.attached) << (sampler->notes().empty() ? "" : sampler->notes()[0]);
    // 1000 Hz over 500 ms of CPU time.
    ASSERT_GE(c.result.samples.size(), 100u);
    EXPECT_EQ(c.result.samples_lost, 0u);
    const auto resolver = symbols::SymbolResolver::for_process();
    EXPECT_GT(share_in_spin(c.result, resolver), 0.8);
    bool chain = false;
    for (const auto& s : c.result.samples) chain |= !s.callchain.empty();
    EXPECT_TRUE(chain);
}

// --call-graph dwarf: each sample copies the registers and stack, and collect() hands them
// over unwound: the spin's samples then name its caller, the thread's entry, and the copies
// are gone.
TEST(PerfSampler, DwarfSamplesAreUnwoundWhenCollected) {
    SamplerRequest request;
    request.kind = SamplerKind::automatic;
    request.event = "cpu-clock";
    request.dwarf_stack = 4096;
    auto sampler = make_sampler(request);
    if (sampler->info().sampler != "perf")
        GTEST_SKIP() << "perf_event unavailable here: " << sampler->info().sampler_reason;
    EXPECT_EQ(sampler->info().call_graph, "dwarf");
    EXPECT_EQ(sampler->info().stack_size, 4096u);
    const auto c = sample_spin(*sampler, 300'000'000);
    ASSERT_TRUE(c.attached) << (sampler->notes().empty() ? "" : sampler->notes()[0]);
    ASSERT_GE(c.result.samples.size(), 50u);
    const auto resolver = symbols::SymbolResolver::for_process();
    std::size_t in_spin = 0, from_worker = 0;
    for (const auto& s : c.result.samples) {
        EXPECT_TRUE(s.user_regs.empty());
        EXPECT_TRUE(s.user_stack.empty());
        if (resolver.resolve(s.ip).symbol.find("lockprof_sampler_test_spin") == std::string::npos)
            continue;
        ++in_spin;
        // The worker lambda of sample_spin called the spin: its frame is the first caller.
        if (!s.callchain.empty() &&
            resolver.resolve(s.callchain[0] - 1).symbol.find("sample_spin") != std::string::npos)
            ++from_worker;
    }
    ASSERT_GT(in_spin, 0u);
    EXPECT_GE(from_worker * 10, in_spin * 9);
    EXPECT_EQ(sampler->info().unwound, c.result.samples.size());
}

TEST(MakeSampler, DwarfCallGraphNeedsThePerfSampler) {
    SamplerRequest timer;
    timer.kind = SamplerKind::timer;
    timer.dwarf_stack = 8192;
    EXPECT_THROW(make_sampler(timer), UsageError);
}

TEST(PerfSampler, CyclesNeedAHardwarePmu) {
    SamplerRequest request;
    request.kind = SamplerKind::perf;
    std::unique_ptr<Sampler> sampler;
    try {
        sampler = make_sampler(request);
    } catch (const Error& e) {
        GTEST_SKIP() << "perf_event unavailable here: " << e.what();
    }
    if (sampler->info().event != "cycles")
        GTEST_SKIP() << "no hardware PMU, sampling fell back: " << sampler->info().event_note;
    // With a PMU: cycles sampled, and precise_ip recorded as granted.
    EXPECT_GE(sampler->info().precise_ip, 0);
    const auto c = sample_spin(*sampler, 200'000'000);
    ASSERT_TRUE(c.attached);
    EXPECT_GT(c.result.samples.size(), 10u);
}

TEST(PerfSampler, FallsBackToCpuClockAndSaysWhy) {
    SamplerRequest request;  // default: cycles
    auto sampler = make_sampler(request);
    const auto& info = sampler->info();
    if (info.sampler == "perf" && info.event == "cycles")
        GTEST_SKIP() << "this machine samples cycles; no fallback to check";
    EXPECT_EQ(info.event, "cpu-clock");
    EXPECT_FALSE(info.event_note.empty() && info.sampler == "perf");
    EXPECT_NE(info.precise_note.find("skid"), std::string::npos);
    EXPECT_EQ(info.skid, measure::Skid::arbitrary);
}

TEST(MakeSampler, RejectsContradictoryRequests) {
    SamplerRequest both;
    both.period = 1000;
    both.frequency = 1000;
    EXPECT_THROW(make_sampler(both), UsageError);
    SamplerRequest zero;
    zero.frequency = 0;
    EXPECT_THROW(make_sampler(zero), UsageError);
    SamplerRequest unknown;
    unknown.event = "no_such_event_anywhere";
    EXPECT_THROW(make_sampler(unknown), UsageError);
}

// What a granted precise_ip means, per architecture: the facts are parameters, so every
// machine's case is checked here.
TEST(SkidMeaning, Arm64CorePmusNeverRemoveSkid) {
    // The arm64 kernel grants precise_ip 2 on PMUv3 (qemu-system-aarch64, Neoverse servers) and
    // ignores it.
    for (int granted : {1, 2, 3}) {
        const auto m = skid_meaning(pmu::Isa::aarch64, true, granted, "cycles");
        EXPECT_EQ(m.skid, measure::Skid::arbitrary) << granted;
        EXPECT_NE(m.note.find(fmt::format("precise_ip {} accepted for cycles, but arm64 core "
                                          "PMUs have no skid-free sampling",
                                          granted)),
                  std::string::npos)
            << m.note;
        EXPECT_EQ(m.note.find("samples name the instruction"), std::string::npos) << m.note;
        EXPECT_NE(m.note.find("skid"), std::string::npos) << m.note;
        EXPECT_NE(m.note.find("SPE (arm_spe_0, not exposed here) would name the instruction"),
                  std::string::npos)
            << m.note;
    }
    EXPECT_NE(skid_meaning(pmu::Isa::aarch64, true, 2, "stxr_fail", true)
                  .note.find("SPE (arm_spe_0, present here)"),
              std::string::npos);
    const auto none = skid_meaning(pmu::Isa::aarch64, true, 0, "cycles");
    EXPECT_EQ(none.skid, measure::Skid::arbitrary);
    EXPECT_EQ(none.note.rfind("precise_ip not granted for cycles: samples land on the "
                              "instruction after the stalling one (skid)",
                              0),
              0u)
        << none.note;
}

TEST(SkidMeaning, X86LevelsAsPerfEventOpenDefinesThem) {
    const auto zero_granted = skid_meaning(pmu::Isa::x86_64, true, 0, "cycles");
    EXPECT_EQ(zero_granted.skid, measure::Skid::arbitrary);
    EXPECT_EQ(zero_granted.note.rfind("precise_ip not granted for cycles: samples land", 0), 0u);
    const auto constant = skid_meaning(pmu::Isa::x86_64, true, 1, "cycles");
    EXPECT_EQ(constant.skid, measure::Skid::constant);
    EXPECT_NE(constant.note.find("precise_ip 1 granted for cycles (constant skid"),
              std::string::npos)
        << constant.note;
    EXPECT_NE(constant.note.find("the one before it was waiting"), std::string::npos);
    const auto requested = skid_meaning(pmu::Isa::x86_64, true, 2, "cycles");
    EXPECT_EQ(requested.skid, measure::Skid::zero);
    EXPECT_EQ(requested.note,
              "precise_ip 2 granted for cycles (zero skid requested: Intel PEBS with the IP "
              "fix-up, AMD IBS): samples name the instruction that caused the event");
    const auto required = skid_meaning(pmu::Isa::x86_64, true, 3, "cycles");
    EXPECT_EQ(required.skid, measure::Skid::zero);
    EXPECT_NE(required.note.find("precise_ip 3 granted for cycles (zero skid required"),
              std::string::npos)
        << required.note;
}

TEST(SkidMeaning, SoftwareEventsHaveNoPreciseMode) {
    for (auto isa : {pmu::Isa::x86_64, pmu::Isa::aarch64}) {
        const auto m = skid_meaning(isa, false, 0, "cpu-clock");
        EXPECT_EQ(m.skid, measure::Skid::arbitrary);
        EXPECT_EQ(m.note.rfind("cpu-clock is a software event, precise_ip does not apply: "
                               "samples land on the instruction after the stalling one (skid)",
                               0),
                  0u)
            << m.note;
    }
}

TEST(FramePointerWalk, FollowsRecordsUpTheStackAndStopsAtGarbage) {
    // A fake stack: three frame records growing upward, then a record pointing down.
    alignas(16) std::uintptr_t stack[16] = {};
    const auto base = reinterpret_cast<std::uintptr_t>(stack);
    auto at = [&](int i) { return base + static_cast<std::uintptr_t>(i) * sizeof(std::uintptr_t); };
    stack[0] = at(4), stack[1] = 0x1111;  // frame 0 -> frame at 4
    stack[4] = at(8), stack[5] = 0x2222;
    stack[8] = at(2), stack[9] = 0x3333;  // points back down: the walk must stop after it
    std::uint64_t out[8];
    const auto n = arch::walk_frame_pointers(at(0), base, base + sizeof stack, out, 8);
    ASSERT_EQ(n, 3u);
    EXPECT_EQ(out[0], 0x1111u);
    EXPECT_EQ(out[1], 0x2222u);
    EXPECT_EQ(out[2], 0x3333u);
    EXPECT_EQ(arch::walk_frame_pointers(at(0), base, base + sizeof stack, out, 2), 2u);
    // Outside the stack bounds: nothing is read.
    EXPECT_EQ(arch::walk_frame_pointers(base + 4096 * 16, base, base + sizeof stack, out, 8), 0u);
    EXPECT_EQ(arch::walk_frame_pointers(at(0) + 1, base, base + sizeof stack, out, 8), 0u);
}

}  // namespace
}  // namespace lockprof::sampling
