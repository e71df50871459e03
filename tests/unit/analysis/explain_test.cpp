// The explanation rules, fed synthetic evidence: the 2020 thread's ARM profiles (83.93% of TAS
// samples on stxr, 81.29% of CAS samples on b.ne), LSE builds, x86 rmw counts, and the
// verdicts of the one engine (verdict.hpp): faster/slower, equivalent, inconclusive, too few.
#include "lockprof/analysis/explain.hpp"

#include <algorithm>

#include <gtest/gtest.h>

namespace lockprof::analysis {
namespace {

Spread spread(std::vector<double> values) {
    return summarize(std::move(values));
}

CellEvidence cell(std::string lock, std::string algorithm, unsigned threads,
                  std::vector<double> rate, double rmw, double spins) {
    CellEvidence e;
    e.lock = std::move(lock);
    e.algorithm = std::move(algorithm);
    e.threads = threads;
    e.acquires_per_second = spread(std::move(rate));
    e.rmw_per_acquire = spread({rmw, rmw, rmw});
    e.spins_per_acquire = spread({spins, spins, spins});
    return e;
}

// The Kunpeng 920 perf annotate of the thread (TAS: ldxr 15.57, stxr 83.93).
CellEvidence arm_tas() {
    auto e = cell("tas@llsc", "tas", 512, {1.0e6, 1.1e6, 1.05e6}, 3.9, 2.9);
    e.flavour = "llsc";
    e.samples = 20000;
    e.instructions = {{"ldxr", 0.1557, true, "mov"}, {"stxr", 0.8393, true, "ldxr"}};
    e.acquire_loop_mnemonics = {"ldxr", "stxr", "cbnz"};
    e.events_per_acquire = {{"stxr_fail", spread({2.9, 2.8, 3.0})}};
    return e;
}

// ... and CAS: b.ne 81.29, ldaxr 9.86, cmp 8.84.
CellEvidence arm_cas() {
    auto e = cell("cas@llsc", "cas", 512, {2.0e6, 1.9e6, 2.1e6}, 1.2, 6.0);
    e.flavour = "llsc";
    e.samples = 20000;
    e.instructions = {
        {"b.ne", 0.8129, true, "cbz"}, {"ldaxr", 0.0986, true, ""}, {"cmp", 0.0884, true, "ldaxr"}};
    e.acquire_loop_mnemonics = {"b.ne", "ldaxr", "cmp", "b.ne", "stxr"};
    e.events_per_acquire = {{"stxr_fail", spread({0.2, 0.2, 0.3})}};
    return e;
}

std::string all_text(const PairDiagnosis& d) {
    std::string s;
    for (const auto& f : d.findings) s += f.text + "\n";
    return s;
}

TEST(Explain, ThreadProfilesOfTasAndCasOnLlsc) {
    const auto diagnoses = explain({arm_tas(), arm_cas()});
    ASSERT_EQ(diagnoses.size(), 1u);
    const auto text = all_text(diagnoses[0]);
    EXPECT_EQ(diagnoses[0].baseline, "tas@llsc");
    EXPECT_EQ(diagnoses[0].other, "cas@llsc");
    EXPECT_NE(text.find("tas@llsc: 84% of samples on the store-exclusive (stxr) and 2.9 stxr "
                        "failures per acquire - every failed attempt writes the lock's cache line"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("cas@llsc: 81% of samples on the branch after the load-exclusive (b.ne), "
                        "0.2 stxr failures per acquire - it waits with loads"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("cas@llsc is 1.9x faster than tas@llsc at 512 threads"), std::string::npos)
        << text;
    EXPECT_FALSE(diagnoses[0].inconclusive);
}

TEST(Explain, LseBuildSaysStxrEventsDoNotApply) {
    auto tas = cell("tas@lse", "tas", 8, {5e6, 5.1e6, 5.2e6}, 1.5, 0.5);
    tas.flavour = "lse";
    tas.samples = 5000;
    tas.instructions = {{"swpal", 0.62, true, "mov"}, {"cbnz", 0.30, true, "swpal"}};
    tas.events_per_acquire = {{"stxr_fail", spread({0, 0, 0})}};
    auto cas = cell("cas@lse", "cas", 8, {4e6, 4.1e6, 4.2e6}, 1.4, 0.4);
    cas.flavour = "lse";
    cas.samples = 5000;
    cas.instructions = {{"casa", 0.71, true, "mov"}};
    cas.events_per_acquire = {{"stxr_fail", spread({0, 0, 0})}};
    const auto text = all_text(explain({tas, cas})[0]);
    EXPECT_NE(text.find("LSE build: no store-exclusive instructions executed, stxr events do not "
                        "apply - compare swpal vs casa instead"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("every failed attempt"), std::string::npos) << text;
}

TEST(Explain, LseRecognisedFromSamplesOfAnOutlineBuild) {
    // outline atomics on an LSE CPU: the helper runs swpal; no exclusives were sampled.
    auto tas = cell("tas@outline", "tas", 8, {5e6, 5.1e6, 5.2e6}, 1.5, 0.5);
    tas.flavour = "outline";
    tas.samples = 1000;
    tas.instructions = {{"swpal", 0.7, false, "mov"}};
    auto cas = cell("cas@outline", "cas", 8, {5e6, 5.1e6, 5.2e6}, 1.5, 0.5);
    cas.flavour = "outline";
    cas.samples = 1000;
    cas.instructions = {{"casa", 0.7, false, "mov"}};
    const auto text = all_text(explain({tas, cas})[0]);
    EXPECT_NE(text.find("compare swpal vs casa instead"), std::string::npos) << text;
    // ... but an LL/SC outline build (ldaxr/stxr sampled) is not LSE.
    tas.instructions = {{"stxr", 0.7, true, "ldaxr"}};
    cas.instructions = {{"ldaxr", 0.7, true, ""}};
    EXPECT_EQ(all_text(explain({tas, cas})[0]).find("LSE build"), std::string::npos);
}

TEST(Explain, RmwPerAcquireRuleNeedsNoPmu) {
    // tas vs ttas on x86 without samples or events: only AttemptStats.
    auto tas = cell("tas", "tas", 2, {10e6, 11e6, 12e6}, 37, 36);
    auto ttas = cell("ttas", "ttas", 2, {20e6, 21e6, 22e6}, 1.3, 12);
    const auto text = all_text(explain({tas, ttas})[0]);
    EXPECT_NE(text.find("tas issues 37 atomic exchanges per acquire, ttas 1.3: the rest are plain "
                        "loads (12 polls of the held lock per acquire)"),
              std::string::npos)
        << text;
}

// The 2020 thread's pg-slock at 2 threads slept while tas spun: the explanation says so
// instead of crediting only the exchanges; without sleeps it names descheduling; close CPU
// use, overlapping trials or no recorded CPU time say nothing.
TEST(Explain, CpuUseRuleSaysWhichLockWaitedOffCpu) {
    auto tas = cell("tas", "tas", 2, {10e6, 11e6, 12e6}, 1.5, 0.5);
    auto pg = cell("pg-slock", "pg-slock", 2, {14e6, 15e6, 16e6}, 1.4, 0.4);
    tas.cpus_used = spread({1.95, 1.97, 1.99});
    pg.cpus_used = spread({1.1, 1.2, 1.3});
    pg.sleeps_per_acquire = spread({1e-5, 1e-5, 1e-5});
    auto text = all_text(explain({tas, pg})[0]);
    EXPECT_NE(text.find("pg-slock's threads ran on 1.2 CPUs on average, tas's on 2.0: pg-slock "
                        "waits off-CPU, sleeping 75 times a second per thread"),
              std::string::npos)
        << text;
    pg.sleeps_per_acquire = spread({0, 0, 0});
    text = all_text(explain({tas, pg})[0]);
    EXPECT_NE(text.find("pg-slock spent more of the window descheduled"), std::string::npos)
        << text;
    for (auto quiet : {spread({1.8, 1.9, 2.0}), spread({1.2, 1.6, 2.0}), spread({0, 0, 0})}) {
        pg.cpus_used = quiet;
        const auto diagnoses = explain({tas, pg});
        for (const auto& f : diagnoses[0].findings) EXPECT_NE(f.rule, "cpu_use") << f.text;
    }
}

// The explanation has no per-family rules: its rules read evidence. A spin-then-sleep lock's
// sleeps reach the cpu_use rule whatever the lock: InnoDB's event-mutex against the kernel's
// qspinlock, with its own rmw noun from its header.
TEST(Explain, EventMutexSleepsAreExplainedByCpuUse) {
    auto qspin = cell("qspinlock", "qspinlock", 4, {10e6, 11e6, 12e6}, 1.2, 30);
    auto event = cell("event-mutex", "event-mutex", 4, {4e6, 4.1e6, 4.2e6}, 12, 60);
    qspin.cpus_used = spread({3.9, 3.95, 4.0});
    event.cpus_used = spread({1.4, 1.5, 1.6});
    event.sleeps_per_acquire = spread({1e-3, 1e-3, 1e-3});
    const auto text = all_text(explain({qspin, event})[0]);
    EXPECT_NE(text.find("event-mutex's threads ran on 1.5 CPUs on average, qspinlock's on 4.0: "
                        "event-mutex waits off-CPU, sleeping 1025 times a second per thread"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("event-mutex issues 12 compare-and-swaps of the owner word per acquire"),
              std::string::npos)
        << text;
}

TEST(Explain, RmwRuleSilentWhenCountsAreClose) {
    auto tas = cell("tas", "tas", 2, {10e6, 11e6, 12e6}, 1.5, 0.5);
    auto cas = cell("cas", "cas", 2, {10.5e6, 11.5e6, 12.5e6}, 1.4, 0.4);
    const auto d = explain({tas, cas})[0];
    for (const auto& f : d.findings) EXPECT_NE(f.rule, "rmw_per_acquire") << f.text;
}

// Overlapping trials are not "the same": the throughput is inconclusive, with what would
// settle it.
TEST(Explain, OverlappingTrialsAreInconclusiveNotTheSame) {
    auto tas = cell("tas", "tas", 2, {10e6, 12e6, 14e6}, 1.5, 0.5);
    auto cas = cell("cas", "cas", 2, {11e6, 13e6, 15e6}, 1.4, 0.4);
    const auto d = explain({tas, cas})[0];
    const auto text = all_text(d);
    EXPECT_NE(text.find("throughput inconclusive: cas 11-15 vs tas 10-14 M acquires/s, ratio "
                        "1.0"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("reaches across an edge of the ±2% equivalence band; about "),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("trials per side would likely settle it at the observed spread"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("noise"), std::string::npos) << text;
    EXPECT_TRUE(d.inconclusive);
}

// A trial in which the hypervisor took `share` of both CPUs of a 1 s window.
workload::TrialResult trial_with_steal(double share) {
    workload::TrialResult trial;
    trial.steal = workload::TrialSteal{
        {0, 1}, static_cast<std::uint64_t>(share * 2e9), 1'000'000'000, 10'000'000};
    return trial;
}

// An inconclusive verdict beside trials the host disturbed names the steal; the same steal
// beside a settled verdict is no finding.
TEST(Explain, HighStealIsNamedWhenTheVerdictIsInconclusive) {
    auto tas = cell("tas", "tas", 2, {10e6, 12e6, 14e6}, 1.5, 0.5);
    auto cas = cell("cas", "cas", 2, {11e6, 13e6, 15e6}, 1.4, 0.4);
    for (double share : {0.12, 0.0, 0.01}) tas.steal.add(trial_with_steal(share));
    for (double share : {0.09, 0.0, 0.0}) cas.steal.add(trial_with_steal(share));
    const auto d = explain({tas, cas})[0];
    const auto steal = std::find_if(d.findings.begin(), d.findings.end(),
                                    [](const Finding& f) { return f.rule == "steal"; });
    ASSERT_NE(steal, d.findings.end()) << all_text(d);
    EXPECT_EQ(steal->text,
              "hypervisor steal in the trials of cas and tas: the hypervisor took 9-12% of the "
              "threads' CPUs in 2 of 6 trials; the spread that leaves the verdict open may be the "
              "host's, not the locks'; run on an idle or dedicated host");
    EXPECT_FALSE(steal->explains);
    EXPECT_TRUE(d.inconclusive);

    auto faster = cell("cas", "cas", 2, {20e6, 21e6, 22e6}, 1.4, 0.4);
    faster.steal = cas.steal;
    const auto settled = explain({tas, faster})[0];
    EXPECT_EQ(all_text(settled).find("hypervisor steal"), std::string::npos) << all_text(settled);
    auto quiet = cas;
    quiet.steal = {};
    auto quiet_tas = tas;
    quiet_tas.steal = {};
    EXPECT_EQ(all_text(explain({quiet_tas, quiet})[0]).find("hypervisor steal"), std::string::npos);
}

TEST(Explain, TightEqualThroughputIsEquivalentAndNeedsNoExplanation) {
    auto tas = cell("tas", "tas", 2, {10e6, 10.01e6, 9.99e6, 10e6}, 1.5, 0.5);
    auto cas = cell("cas", "cas", 2, {10.02e6, 10.01e6, 10.0e6, 10.03e6}, 1.4, 0.4);
    const auto d = explain({tas, cas})[0];
    const auto text = all_text(d);
    EXPECT_NE(text.find("cas and tas are equivalent at 2 threads: ratio 1.00"), std::string::npos)
        << text;
    EXPECT_NE(text.find("lies inside the ±2% equivalence band"), std::string::npos) << text;
    EXPECT_FALSE(d.inconclusive);
    EXPECT_EQ(text.find("no measured evidence says why"), std::string::npos) << text;
    // A narrower band than the interval: no longer equivalent.
    ExplainThresholds narrow;
    narrow.verdict.equivalence = 0.0001;
    EXPECT_EQ(all_text(explain({tas, cas}, narrow)[0]).find("equivalent"), std::string::npos);
}

// A sweep's pairs are one family: each interval is widened by Bonferroni.
TEST(Explain, ThePairsOfASweepAreCorrectedTogether) {
    std::vector<CellEvidence> cells;
    for (unsigned threads : {1u, 2u, 4u}) {
        cells.push_back(cell("tas", "tas", threads, {10e6, 11e6, 12e6}, 1.5, 0.5));
        cells.push_back(cell("cas", "cas", threads, {20e6, 21e6, 22e6}, 1.4, 0.4));
    }
    const auto d = explain(cells);
    ASSERT_EQ(d.size(), 3u);
    EXPECT_NE(all_text(d[0]).find("98.3333% interval of the ratio ["), std::string::npos)
        << all_text(d[0]);
    EXPECT_NE(all_text(d[0]).find("Bonferroni over 3 pairs"), std::string::npos) << all_text(d[0]);
}

TEST(Explain, OneTrialIsAStatedLimit) {
    auto tas = cell("tas", "tas", 4, {10e6}, 1.5, 0.5);
    auto cas = cell("cas", "cas", 4, {20e6}, 1.4, 0.4);
    const auto d = explain({tas, cas})[0];
    EXPECT_NE(all_text(d).find("1 trial per side: too few for an interval (at least 3 per "
                               "side); run --trials 5 or more (cas 20 vs tas 10 M acquires/s)"),
              std::string::npos)
        << all_text(d);
    EXPECT_TRUE(d.inconclusive);
}

// The emulated arm64 system's run: one trial, cycles and instructions counted and different.
// The closing line must not deny the differences the findings above it state.
TEST(Explain, SingleTrialWithCountedEventsDoesNotDenyTheirDifference) {
    auto tas = cell("tas@llsc", "tas", 1, {35.6e6}, 1.0, 0.0);
    auto cas = cell("cas@llsc", "cas", 1, {32.2e6}, 1.0, 0.0);
    tas.events_per_acquire = {{"cycles", spread({28})}, {"instructions", spread({28})}};
    cas.events_per_acquire = {{"cycles", spread({31})}, {"instructions", spread({31})}};
    const auto d = explain({tas, cas})[0];
    const auto text = all_text(d);
    EXPECT_NE(text.find("31 instructions per acquire, tas@llsc 28"), std::string::npos) << text;
    EXPECT_TRUE(d.inconclusive);
    EXPECT_EQ(text.find("no measured difference"), std::string::npos) << text;
    EXPECT_NE(text.find("tells them apart"), std::string::npos) << text;
}

TEST(Explain, FewSamplesMakeNoInstructionClaim) {
    auto tas = arm_tas();
    auto cas = arm_cas();
    tas.samples = cas.samples = 50;
    const auto text = all_text(explain({tas, cas})[0]);
    EXPECT_EQ(text.find("84%"), std::string::npos) << text;
    EXPECT_NE(text.find("only 50 samples"), std::string::npos) << text;
}

TEST(Explain, SkidPointsAtThePrecedingAtomic) {
    auto tas = cell("tas", "tas", 2, {10e6, 11e6, 12e6}, 1.5, 0.5);
    tas.samples = 1000;
    tas.instructions = {{"lea", 0.58, true, "xchg"}, {"mov", 0.32, true, "pause"}};
    auto cas = cell("cas", "cas", 2, {10e6, 11e6, 12e6}, 1.5, 0.5);
    const auto text = all_text(explain({tas, cas})[0]);
    EXPECT_NE(text.find("tas: 58% of samples on lea in its acquire loop, right after the locked "
                        "read-modify-write (xchg): with skid the cost is most likely there"),
              std::string::npos)
        << text;
    // With precise sampling the instruction is taken at its word.
    tas.precise = true;
    EXPECT_EQ(all_text(explain({tas, cas})[0]).find("skid"), std::string::npos);
}

TEST(Explain, ExclusiveFailuresWithoutSamples) {
    auto tas = arm_tas();
    auto cas = arm_cas();
    tas.samples = cas.samples = 0;
    tas.instructions.clear();
    cas.instructions.clear();
    const auto text = all_text(explain({tas, cas})[0]);
    EXPECT_NE(text.find("tas@llsc fails its store-exclusive 2.9 times per acquire, cas@llsc 0.2"),
              std::string::npos)
        << text;
}

// tas@llsc vs cas@llsc in the qemu-system-aarch64 guest: cycles and instructions counted (with
// -icount they are equal), the exclusive events open but count 0, no samples.
std::pair<CellEvidence, CellEvidence> guest_pair() {
    auto tas = cell("tas@llsc", "tas", 2, {1.0e6, 1.1e6, 1.05e6}, 1.6, 0.8);
    auto cas = cell("cas@llsc", "cas", 2, {2.0e6, 2.1e6, 2.05e6}, 1.2, 0.4);
    tas.flavour = cas.flavour = "llsc";
    tas.events_per_acquire = {{"cycles", spread({812, 800, 830})},
                              {"instructions", spread({812, 800, 830})},
                              {"stxr_fail", spread({0, 0, 0})},
                              {"stxr_pass", spread({0, 0, 0})}};
    cas.events_per_acquire = {{"cycles", spread({401, 395, 410})},
                              {"instructions", spread({401, 395, 410})},
                              {"stxr_fail", spread({0, 0, 0})},
                              {"stxr_pass", spread({0, 0, 0})}};
    return {tas, cas};
}

TEST(Explain, EveryCountedEventIsEvidence) {
    auto [tas, cas] = guest_pair();
    const auto d = explain({tas, cas})[0];
    const auto text = all_text(d);
    EXPECT_NE(text.find("cas@llsc counts 401 cycles per acquire, tas@llsc 812: 2.0x fewer "
                        "(interval of the ratio ["),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("cas@llsc counts 401 instructions per acquire, tas@llsc 812: 2.0x fewer"),
              std::string::npos)
        << text;
    // Zero for both on LL/SC code is the PMU not counting, not evidence that they are alike.
    EXPECT_NE(text.find("counted 0 for both: stxr_fail, stxr_pass - yet cas@llsc and tas@llsc "
                        "execute store-exclusives (LL/SC code), so this PMU does not count them "
                        "here: no evidence either way"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("no measured evidence"), std::string::npos) << text;
    EXPECT_EQ(text.find("fails its store-exclusive"), std::string::npos) << text;
    EXPECT_FALSE(d.inconclusive);
    for (const auto& f : d.findings)
        if (f.text.find("counted 0") != std::string::npos) {
            EXPECT_FALSE(f.explains) << f.text;
        }
}

TEST(Explain, DerivedMetricsAndLibpfmNamesAreCited) {
    auto [tas, cas] = guest_pair();
    tas.derived = {{"ipc", "IPC", false, spread({0.25, 0.24, 0.26})}};
    cas.derived = {{"ipc", "IPC", false, spread({0.40, 0.41, 0.39})}};
    tas.events_per_acquire.push_back({"arm_n1::STREX_PASS_SPEC", spread({2.5, 2.4, 2.6})});
    cas.events_per_acquire.push_back({"arm_n1::STREX_PASS_SPEC", spread({1.1, 1.0, 1.2})});
    tas.events_per_acquire.push_back({"perf_raw::r6e", spread({1.5, 1.4, 1.6})});
    cas.events_per_acquire.push_back({"perf_raw::r6e", spread({1.5, 1.3, 1.7})});
    const auto text = all_text(explain({tas, cas})[0]);
    EXPECT_NE(text.find("cas@llsc IPC 0.40, tas@llsc 0.25: 1.6x higher (interval of the ratio "
                        "["),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("cas@llsc counts 1.1 arm_n1::STREX_PASS_SPEC per acquire, tas@llsc 2.5: "
                        "2.3x fewer"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("not told apart (inconclusive at these trials): perf_raw::r6e per acquire "
                        "cas@llsc 1.3-1.7, tas@llsc 1.4-1.6"),
              std::string::npos)
        << text;
}

TEST(Explain, InconclusiveEventsDoNotExplain) {
    auto tas = cell("tas", "tas", 2, {10e6, 11e6, 12e6}, 1.5, 0.5);
    auto cas = cell("cas", "cas", 2, {20e6, 21e6, 22e6}, 1.4, 0.4);
    tas.events_per_acquire = {{"cycles", spread({100, 110, 120})},
                              {"context_switches", spread({0, 0, 0})}};
    cas.events_per_acquire = {{"cycles", spread({105, 115, 125})},
                              {"context_switches", spread({0, 0, 0})}};
    const auto d = explain({tas, cas})[0];
    const auto text = all_text(d);
    EXPECT_NE(text.find("not told apart (inconclusive at these trials): cycles per acquire cas "
                        "105-125, tas 100-120"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("counted 0 for both: context_switches\n"), std::string::npos) << text;
    // Something was counted, so "no measured evidence" would be false.
    EXPECT_EQ(text.find("no measured evidence"), std::string::npos) << text;
    EXPECT_NE(text.find("the counted events do not tell them apart: add --sample"),
              std::string::npos)
        << text;
    // With the throughput inconclusive too the pair is inconclusive, numbers quoted.
    cas.acquires_per_second = spread({10.5e6, 11.5e6, 12.5e6});
    const auto noisy = explain({tas, cas})[0];
    EXPECT_TRUE(noisy.inconclusive);
    EXPECT_NE(all_text(noisy).find("not told apart (inconclusive at these trials): cycles"),
              std::string::npos);
}

TEST(Explain, NoMeasuredEvidenceOnlyWhenNothingWasCountedOrSampled) {
    auto tas = cell("tas", "tas", 2, {10e6, 11e6, 12e6}, 1.5, 0.5);
    auto cas = cell("cas", "cas", 2, {20e6, 21e6, 22e6}, 1.4, 0.4);
    EXPECT_NE(all_text(explain({tas, cas})[0]).find("no measured evidence says why"),
              std::string::npos);
}

TEST(Explain, OneTrialEventsAreQuotedAsTooFewForAnInterval) {
    auto tas = cell("tas", "tas", 4, {10e6}, 1.5, 0.5);
    auto cas = cell("cas", "cas", 4, {20e6}, 1.4, 0.4);
    tas.events_per_acquire = {{"cycles", spread({200})}, {"cycles_zero", spread({0})}};
    cas.events_per_acquire = {{"cycles", spread({100})}, {"cycles_zero", spread({0})}};
    const auto d = explain({tas, cas})[0];
    const auto text = all_text(d);
    EXPECT_NE(text.find("cas counts 100 cycles per acquire, tas 200: 2.0x fewer (1 trial: too "
                        "few for an interval)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("counted 0 for both: cycles_zero - yet every acquire executes "
                        "instructions, so this PMU does not count it here"),
              std::string::npos)
        << text;
    EXPECT_TRUE(d.inconclusive);
}

TEST(Explain, ZeroFailuresForBothAreNotReadAsWaitingWithLoads) {
    auto tas = arm_tas();
    auto cas = arm_cas();
    tas.events_per_acquire = {{"stxr_fail", spread({0, 0, 0})}};
    cas.events_per_acquire = {{"stxr_fail", spread({0, 0, 0})}};
    const auto text = all_text(explain({tas, cas})[0]);
    EXPECT_EQ(text.find("stxr failures per acquire"), std::string::npos) << text;
    EXPECT_NE(text.find("cas@llsc: 81% of samples on the branch after the load-exclusive (b.ne)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("counted 0 for both: stxr_fail"), std::string::npos) << text;
}

TEST(Explain, PairsPerThreadCountWithTheFirstLockAsBaseline) {
    const auto d =
        explain({cell("tas", "tas", 1, {1, 1, 1}, 1, 0), cell("cas", "cas", 1, {1, 1, 1}, 1, 0),
                 cell("tas", "tas", 2, {1, 1, 1}, 1, 0), cell("cas", "cas", 2, {1, 1, 1}, 1, 0),
                 cell("ttas", "ttas", 2, {1, 1, 1}, 1, 0)});
    ASSERT_EQ(d.size(), 3u);
    EXPECT_EQ(d[0].threads, 1u);
    EXPECT_EQ(d[2].other, "ttas");
    EXPECT_EQ(d[2].baseline, "tas");
    const std::string rendered = render_explanation(d);
    EXPECT_NE(rendered.find("ttas vs tas, 2 threads:\n    1. "), std::string::npos) << rendered;
}

// The instruction classes are symbols/mnemonics.hpp's (tests/unit/symbols/mnemonics_test.cpp).
TEST(Explain, FormatsFigures) {
    EXPECT_EQ(format_figure(37.2), "37");
    EXPECT_EQ(format_figure(1.34), "1.3");
    EXPECT_EQ(format_figure(0.2), "0.2");
}

bool has_rule(const PairDiagnosis& d, std::string_view rule) {
    return std::any_of(d.findings.begin(), d.findings.end(),
                       [&](const Finding& f) { return f.rule == rule; });
}

// Queue locks spin locally: mcs waited 40 polls per acquire with 1.1 swaps, while tas retried
// its exchange 37 times; the rule says so and explains the pair. It stays silent when the
// queue lock did not wait, when it issued many RMWs, and for a lock that is no queue lock.
TEST(Explain, QueueLockSpinsLocallyOnlyWhenItsCountsSaySo) {
    auto tas = cell("tas", "tas", 4, {10e6, 11e6, 12e6}, 37, 36);
    auto mcs = cell("mcs", "mcs", 4, {20e6, 21e6, 22e6}, 1.1, 40);
    const auto d = explain({tas, mcs})[0];
    const auto text = all_text(d);
    EXPECT_NE(text.find("mcs spins locally: 40 polls per acquire but only 1.1 atomic swaps per "
                        "acquire"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("tas issued 37 atomic exchanges per acquire"), std::string::npos) << text;
    EXPECT_TRUE(std::any_of(d.findings.begin(), d.findings.end(), [](const Finding& f) {
        return f.rule == "queue_local_spin" && f.explains;
    }));

    auto idle = cell("mcs", "mcs", 4, {20e6, 21e6, 22e6}, 1.0, 0.2);  // hardly waited
    EXPECT_FALSE(has_rule(explain({tas, idle})[0], "queue_local_spin"));
    auto busy = cell("mcs", "mcs", 4, {20e6, 21e6, 22e6}, 6.0, 40);  // many RMWs
    EXPECT_FALSE(has_rule(explain({tas, busy})[0], "queue_local_spin"));
    auto ttas = cell("ttas", "ttas", 4, {20e6, 21e6, 22e6}, 1.1, 40);  // not a queue lock
    EXPECT_FALSE(has_rule(explain({tas, ttas})[0], "queue_local_spin"));
}

CellEvidence rw_cell(double read_p50, double read_p99, double write_p50, double write_p99) {
    auto e = cell("rw-cas", "rw-cas", 4, {5e6, 5.1e6, 5.2e6}, 1.2, 3);
    e.read_per_second = 4.5e6;
    e.write_per_second = 0.5e6;
    LatencySummary r, w;
    r.p50_ns = read_p50, r.p99_ns = read_p99, r.samples = 9000;
    w.p50_ns = write_p50, w.p99_ns = write_p99, w.samples = 1000;
    e.read_latency = r;
    e.write_latency = w;
    return e;
}

// rw locks trade writer latency for reader throughput: said with both kinds' latency and rate
// when writers waited at least twice as long; not when the kinds waited alike, nor without
// latency measured.
TEST(Explain, ReaderWriterRuleNeedsBothKindsMeasuredAndApart) {
    auto tas = cell("tas", "tas", 4, {10e6, 11e6, 12e6}, 37, 36);
    const auto text = all_text(explain({tas, rw_cell(100, 400, 900, 20000)})[0]);
    EXPECT_NE(text.find("rw-cas trades writer latency for reader throughput: its writers waited "
                        "900.0 ns (median) and 20.00 us (p99) per acquire, its readers 100.0 ns "
                        "and 400.0 ns (9.0x at the median, 50.0x at p99), while readers "
                        "completed 4.5 M acquires/s and writers 0.5 M"),
              std::string::npos)
        << text;
    EXPECT_FALSE(has_rule(explain({tas, rw_cell(100, 400, 120, 500)})[0], "reader_writer"));
    auto unmeasured = rw_cell(100, 400, 900, 20000);
    unmeasured.read_latency.reset();
    unmeasured.write_latency.reset();
    EXPECT_FALSE(has_rule(explain({tas, unmeasured})[0], "reader_writer"));
}

// Where the observer-effect check found the instruments changed a cell's throughput, the pair's
// explanation says so, in brief too: its samples describe another run than the verdict's.
TEST(Explain, AnInstrumentThatChangedThroughputIsSaidInThePairsEvidence) {
    auto tas = arm_tas();
    auto cas = arm_cas();
    cas.perturbation = "sampling raised cas@llsc's throughput by 24% [15%, 33%] at 512 threads";
    const auto d = explain({tas, cas})[0];
    const auto effect = std::find_if(d.findings.begin(), d.findings.end(),
                                     [](const Finding& f) { return f.rule == "observer_effect"; });
    ASSERT_NE(effect, d.findings.end()) << all_text(d);
    EXPECT_EQ(effect->text, cas.perturbation);
    EXPECT_FALSE(effect->explains);
    EXPECT_NE(render_explanation({d}, Detail::brief).find(cas.perturbation), std::string::npos)
        << render_explanation({d}, Detail::brief);
    cas.perturbation.clear();
    EXPECT_EQ(all_text(explain({tas, cas})[0]).find("raised"), std::string::npos);
}

}  // namespace
}  // namespace lockprof::analysis
