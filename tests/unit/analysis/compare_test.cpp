#include "lockprof/analysis/compare.hpp"

#include <gtest/gtest.h>

#include "support/synthetic_cells.hpp"

#include <algorithm>

namespace lockprof::analysis {
namespace {

workload::CellResult cell(const std::string& lock, unsigned threads,
                          const std::vector<double>& per_second) {
    return test::synthetic_cell(lock, threads, per_second);
}

workload::RunResult run_with(std::vector<workload::CellResult> cells) {
    workload::RunResult r;
    r.provenance.arch = "x86_64";
    r.provenance.cpu_model = "Test CPU";
    r.provenance.compiler = "GNU 12.2.0";
    r.provenance.compiler_flags = "-O2 -g";
    r.provenance.build_type = "RelWithDebInfo";
    r.provenance.kernel = "6.1.0";
    r.provenance.logical_cpus = 2;
    r.spec.duration_ns = 1'000'000'000;
    r.spec.trials = 5;
    r.cells = std::move(cells);
    return r;
}

TEST(Compare, FasterSlowerAndInconclusiveThroughTheOneEngine) {
    const auto base = run_with({cell("tas", 1, {100e6, 101e6, 99e6, 100.5e6, 99.5e6}),
                                cell("cas", 1, {50e6, 51e6, 49e6, 50.5e6, 49.5e6}),
                                cell("ttas", 1, {80e6, 90e6, 70e6, 85e6, 75e6})});
    const auto other = run_with({cell("tas", 1, {120e6, 121e6, 119e6, 120.5e6, 119.5e6}),
                                 cell("cas", 1, {40e6, 41e6, 39e6, 40.5e6, 39.5e6}),
                                 cell("ttas", 1, {82e6, 88e6, 71e6, 86e6, 76e6})});
    const auto r = compare_runs(base, other);
    ASSERT_EQ(r.cells.size(), 3u);
    EXPECT_EQ(r.family, 3u) << "Bonferroni over the three cells";
    const auto& fast = r.cells[0].effect;
    EXPECT_EQ(fast.verdict, Verdict::faster);
    EXPECT_NEAR(fast.ratio, 1.2, 1e-3) << "ratio of geometric means";
    ASSERT_TRUE(fast.interval);
    EXPECT_GT(fast.interval->low, 1.02) << "above the band, not just above 1";
    EXPECT_LE(fast.interval->low, fast.ratio);
    EXPECT_GE(fast.interval->high, fast.ratio);
    EXPECT_NEAR(fast.level, 1 - 0.05 / 3, 1e-12);
    EXPECT_EQ(r.cells[1].effect.verdict, Verdict::slower);
    EXPECT_LT(r.cells[1].effect.interval->high, 0.98);
    // ttas: the ranges overlap and the interval straddles the band: inconclusive, with the
    // trials that would likely settle it, never "the same".
    const auto& open = r.cells[2].effect;
    EXPECT_EQ(open.verdict, Verdict::inconclusive);
    EXPECT_LT(open.interval->low, 0.98);
    EXPECT_GT(open.interval->high, 1.02);
    EXPECT_TRUE(open.trials_to_settle);
    EXPECT_TRUE(r.warnings.empty());
    EXPECT_EQ(r.caveat, "") << "like-for-like";
    EXPECT_EQ(verdict_line(fast, r.caveat), "faster");
    EXPECT_TRUE(r.only_in_base.empty());
    EXPECT_TRUE(r.only_in_other.empty());
}

TEST(Compare, TooFewTrialsIsAStatedLimit) {
    const auto r = compare_runs(run_with({cell("tas", 2, {100e6, 101e6})}),
                                run_with({cell("tas", 2, {300e6, 301e6, 302e6})}));
    ASSERT_EQ(r.cells.size(), 1u);
    const auto& e = r.cells[0].effect;
    EXPECT_EQ(e.verdict, Verdict::too_few_trials);
    EXPECT_FALSE(e.interval);
    EXPECT_NEAR(e.ratio, 3.0, 0.02);
    EXPECT_NE(e.limit.find("too few for an interval"), std::string::npos) << e.limit;
    EXPECT_NE(e.limit.find("run --trials 5 or more"), std::string::npos) << e.limit;
}

TEST(Compare, TheEquivalenceBandDecidesEquivalentAndInconclusive) {
    const auto base = run_with({cell("tas", 1, {100e6, 100.4e6, 99.6e6, 100.2e6, 99.8e6})});
    const auto other = run_with({cell("tas", 1, {103e6, 103.4e6, 102.6e6, 103.2e6, 102.8e6})});
    // 3% faster with a tight spread: faster outside a 2% band, equivalent inside a 5% one.
    EXPECT_EQ(compare_runs(base, other).cells[0].effect.verdict, Verdict::faster);
    VerdictOptions wide;
    wide.equivalence = 0.05;
    EXPECT_EQ(compare_runs(base, other, wide).cells[0].effect.verdict, Verdict::equivalent);
    wide.equivalence = 0.03;
    EXPECT_EQ(compare_runs(base, other, wide).cells[0].effect.verdict, Verdict::inconclusive)
        << "the interval reaches across the band's edge";
}

TEST(Compare, MismatchedCellsAreListedOnBothSides) {
    const auto base = run_with({cell("tas", 1, {1e6, 1e6}), cell("tas", 8, {2e6, 2e6})});
    const auto other = run_with({cell("tas", 1, {1e6, 1e6}), cell("mcs", 4, {3e6, 3e6})});
    const auto r = compare_runs(base, other);
    ASSERT_EQ(r.cells.size(), 1u);
    ASSERT_EQ(r.only_in_base.size(), 1u);
    EXPECT_EQ(r.only_in_base[0].lock, "tas");
    EXPECT_EQ(r.only_in_base[0].threads, 8u);
    ASSERT_EQ(r.only_in_other.size(), 1u);
    EXPECT_EQ(r.only_in_other[0].lock, "mcs");
    EXPECT_EQ(r.only_in_other[0].threads, 4u);
    // 2 trials per side: a stated limit, not a verdict.
    EXPECT_EQ(r.cells[0].effect.verdict, Verdict::too_few_trials);
}

TEST(Compare, WarnsAboutAssertionsCpuBuildAndWorkload) {
    auto base = run_with({cell("tas", 1, {1e6, 1e6})});
    auto other = base;
    EXPECT_TRUE(provenance_warnings(base, other).empty());
    other.provenance.assertions = true;
    other.provenance.cpu_model = "Other CPU";
    other.provenance.compiler_flags = "-O0 -g";
    other.provenance.vm_hint = "kvm";
    other.spec.work.critical_ns = 100;
    const auto w = provenance_warnings(base, other);
    std::vector<std::string> fields;
    for (const auto& x : w) fields.push_back(x.field);
    ASSERT_FALSE(w.empty());
    EXPECT_EQ(fields[0], "assertions") << "the thread's mistake is named first";
    EXPECT_NE(w[0].message.find("new build only"), std::string::npos) << w[0].message;
    for (const char* f : {"cpu_model", "compiler_flags", "vm_hint", "workload.critical_ns"})
        EXPECT_NE(std::find(fields.begin(), fields.end(), f), fields.end()) << f;
    EXPECT_EQ(std::find(fields.begin(), fields.end(), "kernel"), fields.end());

    base.provenance.assertions = true;
    other = base;
    const auto both = provenance_warnings(base, other);
    ASSERT_EQ(both.size(), 1u);
    EXPECT_NE(both[0].message.find("both builds"), std::string::npos);
}

// The 2020 thread's mistake cannot print a clean "faster": every difference that makes the
// runs not like-for-like is part of the verdict line.
TEST(Compare, AVerdictFromDifferentBuildsOrMachinesSaysItIsNotLikeForLike) {
    const auto base = run_with({cell("tas", 1, {100e6, 101e6, 99e6, 100.5e6, 99.5e6})});
    auto other = run_with({cell("tas", 1, {200e6, 201e6, 199e6, 200.5e6, 199.5e6})});
    EXPECT_EQ(verdict_line(compare_runs(base, other).cells[0].effect, ""), "faster");
    other.provenance.assertions = true;
    auto r = compare_runs(base, other);
    EXPECT_EQ(r.caveat,
              "the builds differ (assertions on in new only): not a like-for-like comparison");
    EXPECT_EQ(verdict_line(r.cells[0].effect, r.caveat),
              "faster, but the builds differ (assertions on in new only): not a like-for-like "
              "comparison");

    using Mutation = void (*)(workload::RunResult&);
    const std::vector<std::pair<const char*, Mutation>> mutations = {
        {"assertions on in both", [](workload::RunResult& r) { r.provenance.assertions = true; }},
        {"build type RelWithDebInfo vs Debug",
         [](workload::RunResult& r) { r.provenance.build_type = "Debug"; }},
        {"lockprof 0.1.0 vs 0.2.0",
         [](workload::RunResult& r) { r.provenance.lockprof_version = "0.2.0"; }},
        {"the kernel differs", [](workload::RunResult& r) { r.provenance.kernel = "6.9.0"; }},
        {"the pinning differs",
         [](workload::RunResult& r) { r.spec.pin.mode = workload::PinMode::compact; }},
        {"the CPU frequency governor differs",
         [](workload::RunResult& r) { r.provenance.cpufreq_governor = "powersave"; }},
        {"the CPU boost differs", [](workload::RunResult& r) { r.provenance.cpu_boost = "off"; }},
        {"the VM status differs", [](workload::RunResult& r) { r.provenance.vm_hint = "kvm"; }},
    };
    auto like = base;
    like.provenance.lockprof_version = "0.1.0";
    for (const auto& [phrase, mutate] : mutations) {
        auto b = like, o = like;
        if (std::string(phrase) == "assertions on in both") mutate(b);
        mutate(o);
        const auto caveat = like_for_like_caveat(b, o);
        EXPECT_NE(caveat.find(phrase), std::string::npos) << phrase << ": " << caveat;
        EXPECT_NE(caveat.find("not a like-for-like comparison"), std::string::npos) << caveat;
    }
}

// Every field of the workload that changes what the measured loop does is named when the two
// runs differ in it; one mutation at a time, so a field the check forgets fails on its own.
TEST(Compare, WarnsAboutEveryWorkloadField) {
    const auto base = run_with({cell("tas", 1, {1e6, 1e6})});
    using Mutation = void (*)(workload::RunSpec&);
    const std::vector<std::pair<const char*, Mutation>> mutations = {
        {"workload.stop", [](workload::RunSpec& s) { s.duration_ns = 123; }},
        {"workload.critical_ns", [](workload::RunSpec& s) { s.work.critical_ns = 7; }},
        {"workload.parallel_ns", [](workload::RunSpec& s) { s.work.parallel_ns = 7; }},
        {"workload.critical_instructions",
         [](workload::RunSpec& s) { s.work.critical_instructions = 100; }},
        {"workload.parallel_instructions",
         [](workload::RunSpec& s) { s.work.parallel_instructions = 100; }},
        {"workload.lock_page",
         [](workload::RunSpec& s) { s.work.lock_page = workload::LockPage::huge; }},
        {"workload.shared_lines", [](workload::RunSpec& s) { s.work.shared_lines = 3; }},
        {"workload.data",
         [](workload::RunSpec& s) { s.work.data = workload::DataPlacement::same_line; }},
        {"workload.pin", [](workload::RunSpec& s) { s.pin.mode = workload::PinMode::compact; }},
        {"workload.delay", [](workload::RunSpec& s) { s.delay = arch::Delay::none; }},
        {"workload.latency", [](workload::RunSpec& s) { s.latency = true; }},
    };
    for (const auto& [field, mutate] : mutations) {
        auto other = base;
        mutate(other.spec);
        const auto w = provenance_warnings(base, other);
        ASSERT_EQ(w.size(), 1u) << field;
        EXPECT_EQ(w[0].field, field);
    }
}

// Two runs on huge pages: a different physical page is a provenance warning where both runs
// recorded their addresses (as root), and nothing is said where either did not.
TEST(Compare, HugePagesAtDifferentPhysicalAddressesWarn) {
    const auto huge = [](std::optional<std::uint64_t> address) {
        auto run = run_with({cell("tas", 1, {1e6, 1e6})});
        run.spec.work.lock_page = workload::LockPage::huge;
        for (auto& t : run.cells[0].trials) t.lock_page = workload::LockPageUse{2u << 20, address};
        return run;
    };
    const auto a = huge(0x40000000), b = huge(0x40200000), unknown = huge(std::nullopt);
    EXPECT_TRUE(provenance_warnings(a, a).empty());
    EXPECT_TRUE(provenance_warnings(a, unknown).empty());
    const auto w = provenance_warnings(a, b);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].field, "workload.lock_page.physical_address");
    EXPECT_NE(w[0].message.find("base: '0x40000000', new: '0x40200000'"), std::string::npos)
        << w[0].message;
    // Heap against huge page: also a like-for-like caveat on every verdict.
    EXPECT_NE(like_for_like_caveat(run_with({}), a).find("lock placement differs"),
              std::string::npos);
}

TEST(Compare, CellsWithoutTrialsAreNotCompared) {
    auto base = run_with({cell("tas", 1, {1e6, 1e6}), cell("cas", 1, {})});
    const auto r = compare_runs(base, base);
    EXPECT_EQ(r.cells.size(), 1u);
    EXPECT_TRUE(r.only_in_base.empty());
}

}  // namespace
}  // namespace lockprof::analysis

namespace lockprof::analysis {
namespace {

// Runs made with --processes 3 or more are compared process by process, as their own verdicts
// were (one value per process, its trials' geometric mean); with fewer, trial by trial. The
// method line says which.
TEST(Compare, RunsInSeveralProcessesAreComparedProcessByProcess) {
    auto tag = [](workload::RunResult run, unsigned processes) {
        run.spec.processes = processes;
        for (auto& c : run.cells)
            for (std::size_t i = 0; i < c.trials.size(); ++i)
                c.trials[i].process = static_cast<unsigned>(i % processes);
        return run;
    };
    const std::vector<double> trials = {100e6, 120e6, 80e6, 101e6, 119e6, 81e6};
    const auto base = run_with({cell("tas", 1, trials)});
    std::vector<double> faster;
    for (double v : trials) faster.push_back(v * 1.5);
    const auto other = run_with({cell("tas", 1, faster)});

    const auto by_process = compare_runs(tag(base, 3), tag(other, 3));
    EXPECT_TRUE(by_process.over_processes);
    ASSERT_EQ(by_process.cells.size(), 1u);
    EXPECT_EQ(by_process.cells[0].effect.base_trials, 3u) << "one value per process";
    EXPECT_EQ(by_process.cells[0].effect.other_trials, 3u);
    EXPECT_NE(by_process.resampling.find("resampled over processes (3 in base, 3 in new"),
              std::string::npos)
        << by_process.resampling;

    const auto mixed = compare_runs(tag(base, 3), tag(other, 2));
    EXPECT_FALSE(mixed.over_processes);
    EXPECT_EQ(mixed.cells[0].effect.base_trials, 6u);
    EXPECT_NE(mixed.resampling.find("needs --processes 3 or more in both runs"), std::string::npos)
        << mixed.resampling;

    const auto plain = compare_runs(base, other);
    EXPECT_FALSE(plain.over_processes);
    EXPECT_EQ(plain.resampling, "resampled over trials within one process per run");
}

// --read-fraction: each matched cell carries both runs' reads and writes per second, a run
// without reads has none, and a different read fraction is a workload warning.
TEST(Compare, ReadsAndWritesAreSplitAndADifferentReadFractionWarns) {
    auto reads_of = [](workload::CellResult c, double share) {
        for (auto& t : c.trials)
            for (auto& th : t.threads)
                th.read_acquires = static_cast<std::uint64_t>(share * th.acquires);
        return c;
    };
    auto base = run_with({reads_of(cell("rw-cas", 1, {100e6, 101e6, 99e6}), 0.9)});
    base.spec.work.read_fraction = 0.9;
    const auto other = run_with({cell("rw-cas", 1, {100e6, 101e6, 99e6})});
    const auto r = compare_runs(base, other);
    ASSERT_EQ(r.cells.size(), 1u);
    ASSERT_TRUE(r.cells[0].base_reads);
    EXPECT_NEAR(r.cells[0].base_reads->median, 90e6, 1e3);
    EXPECT_NEAR(r.cells[0].base_writes->median, 10e6, 1e3);
    EXPECT_FALSE(r.cells[0].other_reads) << "the new run took no reads";
    EXPECT_TRUE(std::any_of(r.warnings.begin(), r.warnings.end(), [](const auto& w) {
        return w.field == "workload.read_fraction" && w.base_value == "0.9" && w.other_value == "0";
    }));
}

}  // namespace
}  // namespace lockprof::analysis
