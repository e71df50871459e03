// The cross-host comparison: per-host verdicts through the one engine, where a conclusion holds,
// host names, provenance differences that explain a result, PMU evidence or why there is none.
#include "lockprof/analysis/hosts.hpp"

#include <gtest/gtest.h>

#include "support/synthetic_cells.hpp"

#include <algorithm>

#include "lockprof/common/error.hpp"

namespace lockprof::analysis {
namespace hosts_test {

workload::CellResult cell(const std::string& lock, unsigned threads,
                          const std::vector<double>& per_second) {
    return test::synthetic_cell(lock, threads, per_second);
}

std::vector<double> around(double value) {
    return {value, value * 1.005, value * 0.995, value * 1.002, value * 0.998};
}

HostInput host(const std::string& hostname, bool lse, std::vector<workload::CellResult> cells) {
    HostInput in;
    in.file = hostname + ".json";
    auto& p = in.run.provenance;
    p.hostname = hostname;
    p.arch = "aarch64";
    p.cpu_model = "Neoverse-N1";
    p.midr = "implementer 0x41 part 0xd0c variant 0x3 revision 0x1";
    p.lse = lse;
    p.logical_cpus = 4;
    p.compiler = "GNU 12.2.0";
    p.compiler_flags = "-O2 -g -DNDEBUG";
    p.build_type = "RelWithDebInfo";
    p.kernel = "6.1.0";
    p.lockprof_version = "0.1.0";
    in.run.spec.duration_ns = 1'000'000'000;
    in.run.spec.trials = 5;
    in.run.cells = std::move(cells);
    return in;
}

const HostField& field(const HostsComparison& c, const std::string& name) {
    const auto at = std::find_if(c.provenance.begin(), c.provenance.end(),
                                 [&](const HostField& f) { return f.field == name; });
    if (at == c.provenance.end()) throw std::runtime_error("no field " + name);
    return *at;
}

// The thread's question on three hosts: CAS beats TAS where LL/SC retries (two hosts), not with
// LSE (the third, equivalent); a fourth host's trials straddle the band.
TEST(Hosts, EachHostJudgedOnItsOwnTrialsAndTheConclusionSaysWhereItHolds) {
    std::vector<HostInput> inputs;
    inputs.push_back(host("kunpeng", false,
                          {cell("tas", 1, around(100e6)), cell("cas", 1, around(130e6)),
                           cell("tas", 4, around(20e6)), cell("cas", 4, around(40e6))}));
    inputs.push_back(host("graviton1", false,
                          {cell("tas", 1, around(90e6)), cell("cas", 1, around(120e6)),
                           cell("tas", 4, around(18e6)), cell("cas", 4, around(30e6))}));
    inputs.push_back(host("graviton2", true,
                          {cell("tas", 1, around(100e6)), cell("cas", 1, around(100.2e6)),
                           cell("tas", 4, around(30e6)), cell("cas", 4, around(30.05e6))}));
    // Only 1 and 2 threads, and noisy: inconclusive at 1 thread, no cell at 4.
    inputs.push_back(host("m1", true,
                          {cell("tas", 1, {100e6, 140e6, 70e6, 120e6, 90e6}),
                           cell("cas", 1, {110e6, 80e6, 130e6, 95e6, 100e6}),
                           cell("tas", 2, around(50e6)), cell("cas", 2, around(50e6))}));
    const auto c = compare_hosts(inputs);
    ASSERT_EQ(c.hosts.size(), 4u);
    EXPECT_EQ(c.threads, (std::vector<unsigned>{1, 2, 4})) << "every host's thread counts";
    EXPECT_EQ(c.locks, (std::vector<std::string>{"tas", "cas"}));
    ASSERT_EQ(c.pairs.size(), 1u);
    const auto& pair = c.pairs[0];
    EXPECT_EQ(pair.base, "tas");
    EXPECT_EQ(pair.other, "cas");
    // Kunpeng: faster at 1 and 4 threads; no cell at 2.
    const auto& kunpeng = pair.rows[0];
    ASSERT_EQ(kunpeng.cells.size(), 3u);
    ASSERT_TRUE(kunpeng.cells[0].effect);
    EXPECT_EQ(kunpeng.cells[0].effect->verdict, Verdict::faster);
    EXPECT_NEAR(kunpeng.cells[0].effect->ratio, 1.3, 1e-3);
    EXPECT_FALSE(kunpeng.cells[1].effect) << "kunpeng ran no 2-thread cell";
    EXPECT_EQ(kunpeng.cells[2].effect->verdict, Verdict::faster);
    EXPECT_EQ(kunpeng.verdicts, "faster");
    // Bonferroni over each host's own comparisons: two cells here.
    EXPECT_EQ(c.hosts[0].family, 2u);
    EXPECT_NEAR(kunpeng.cells[0].effect->level, 1 - 0.05 / 2, 1e-12);
    EXPECT_EQ(pair.rows[2].verdicts, "equivalent");
    EXPECT_EQ(pair.rows[3].cells[0].effect->verdict, Verdict::inconclusive);
    EXPECT_EQ(pair.rows[3].verdicts, "inconclusive at 1 thread, equivalent at 2 threads");
    EXPECT_EQ(pair.conclusion, "faster");
    EXPECT_EQ(pair.summary,
              "cas vs tas: faster on kunpeng (aarch64, no LSE); graviton1 (aarch64, no LSE). Not "
              "on graviton2 (aarch64, LSE): equivalent; m1 (aarch64, LSE): inconclusive at 1 "
              "thread, equivalent at 2 threads.");
    // LSE differs between hosts and can explain the result by itself.
    const auto& lse = field(c, "lse");
    EXPECT_TRUE(lse.differs);
    EXPECT_TRUE(lse.explains);
    EXPECT_EQ(lse.values, (std::vector<std::string>{"no", "no", "yes", "yes"}));
    EXPECT_FALSE(field(c, "cpu_model").differs);
    EXPECT_TRUE(field(c, "hostname").differs);
    EXPECT_FALSE(field(c, "hostname").explains) << "a name explains nothing";
    EXPECT_TRUE(c.warnings.empty());
}

// The 2020 thread's mistake: one file from an assert-enabled build is singled out even though
// nothing else differs, and the top of the report says which host.
TEST(Hosts, AnAssertionBuildIsSingledOut) {
    std::vector<HostInput> inputs;
    inputs.push_back(host("a", false, {cell("tas", 1, around(1e8)), cell("cas", 1, around(1e8))}));
    inputs.push_back(host("b", false, {cell("tas", 1, around(1e8)), cell("cas", 1, around(1e8))}));
    inputs[1].run.provenance.assertions = true;
    inputs[1].run.provenance.compiler_flags = "-O2 -g";
    const auto c = compare_hosts(inputs);
    const auto& assertions = field(c, "assertions");
    EXPECT_TRUE(assertions.explains);
    EXPECT_EQ(assertions.values, (std::vector<std::string>{"off", "ON"}));
    EXPECT_NE(assertions.why.find("2020 thread"), std::string::npos);
    EXPECT_TRUE(field(c, "compiler_flags").explains);
    ASSERT_FALSE(c.warnings.empty());
    EXPECT_EQ(c.warnings[0].find("assertions are ON in b's build"), 0u) << c.warnings[0];
    // Both on: still singled out, though the values agree.
    inputs[0].run.provenance.assertions = true;
    inputs[0].run.provenance.compiler_flags = "-O2 -g";
    const auto both = compare_hosts(inputs);
    EXPECT_FALSE(field(both, "assertions").differs);
    EXPECT_TRUE(field(both, "assertions").explains);
    ASSERT_FALSE(both.warnings.empty());
    EXPECT_EQ(both.warnings[0].find("assertions are ON in the builds of a; b: their numbers"), 0u)
        << both.warnings[0];
}

TEST(Hosts, NamesComeFromProvenanceAndStayDistinct) {
    // Two qemu-user runs on one machine: same hostname and CPU, LSE tells them apart.
    std::vector<HostInput> inputs;
    inputs.push_back(host("vm", true, {cell("tas", 1, around(1e8))}));
    inputs.push_back(host("vm", false, {cell("tas", 1, around(1e8))}));
    inputs.push_back(host("vm", false, {cell("tas", 1, around(1e8))}));
    inputs.push_back(host("", false, {cell("tas", 1, around(1e8))}));
    inputs.push_back(host("x", false, {cell("tas", 1, around(1e8))}));
    inputs[4].name = "laptop";
    auto c = compare_hosts(inputs);
    EXPECT_EQ(c.hosts[0].name, "vm/aarch64, LSE");
    EXPECT_EQ(c.hosts[0].label, "vm/aarch64, LSE") << "the label does not say LSE twice";
    EXPECT_EQ(c.hosts[1].name, "vm/Neoverse-N1/aarch64, no LSE");
    EXPECT_EQ(c.hosts[2].name, "vm/Neoverse-N1/aarch64, no LSE#2");
    EXPECT_EQ(c.hosts[3].name, "unnamed host");
    EXPECT_EQ(c.hosts[4].name, "laptop");
    EXPECT_EQ(c.hosts[4].label, "laptop (aarch64, no LSE)");
    // A single lock: nothing to pair, said rather than an empty section.
    EXPECT_TRUE(c.pairs.empty());
    EXPECT_EQ(c.locks, (std::vector<std::string>{"tas"}));
    // Names given twice are a usage error; one file is not a cross-host report.
    inputs[3].name = "laptop";
    EXPECT_THROW(compare_hosts(inputs), UsageError);
    std::vector<HostInput> one(1);
    EXPECT_THROW(compare_hosts(one), UsageError);
}

TEST(Hosts, LocksNotInEveryFileAreSaidAndLeftOutOfThePairs) {
    std::vector<HostInput> inputs;
    inputs.push_back(host(
        "a", false,
        {cell("tas", 1, around(1e8)), cell("cas", 1, around(1e8)), cell("ttas", 1, around(1e8))}));
    inputs.push_back(host("b", false, {cell("cas", 1, around(1e8)), cell("tas", 1, around(1e8))}));
    const auto c = compare_hosts(inputs);
    EXPECT_EQ(c.locks, (std::vector<std::string>{"tas", "cas"})) << "the first file's order";
    ASSERT_EQ(c.absent.size(), 1u);
    EXPECT_EQ(c.absent[0], "ttas: not in b's file");
    ASSERT_EQ(c.pairs.size(), 1u);
    EXPECT_EQ(c.pairs[0].other, "cas");
    inputs.push_back(host("c", false, {cell("cas", 1, around(1e8)), cell("tas", 1, around(1e8))}));
    EXPECT_EQ(compare_hosts(inputs).absent[0], "ttas: not in the files of b; c");
}

TEST(Hosts, PmuEvidenceOrWhyNot) {
    std::vector<HostInput> inputs;
    inputs.push_back(
        host("counted", false, {cell("tas", 1, around(1e8)), cell("tas", 2, around(5e7))}));
    inputs.push_back(host("vm", false, {cell("tas", 1, around(1e8))}));
    for (auto& trial : inputs[0].run.cells[1].trials)
        for (auto& th : trial.threads) {
            measure::CounterReading v;
            v.event = "stxr_fail";
            v.raw = th.acquires / 2;
            v.enabled_ns = v.running_ns = trial.wall_ns;
            th.counters.push_back(v);
        }
    inputs[1].run.notes.push_back(
        "cycles, stxr_fail: not counted: the kernel exposes no PMU for them (ENOENT)");
    const auto c = compare_hosts(inputs);
    ASSERT_EQ(c.evidence.size(), 2u);
    EXPECT_EQ(c.evidence[0].threads, 2u) << "the largest thread count";
    ASSERT_EQ(c.evidence[0].lines.size(), 1u);
    EXPECT_EQ(c.evidence[0].lines[0], "tas: stxr_fail 0.5/acquire");
    EXPECT_EQ(c.evidence[0].not_counted, "");
    EXPECT_TRUE(c.evidence[1].lines.empty());
    EXPECT_NE(c.evidence[1].not_counted.find("not counted: the kernel exposes no PMU"),
              std::string::npos);
    EXPECT_EQ(field(c, "pmu").values, (std::vector<std::string>{"stxr_fail", "none"}));
}

// Hosts that settled nothing are grouped by what they said; with none settled, the summary
// says so and what would settle it.
TEST(Hosts, UnsettledHostsAreGroupedAndNoConclusionIsSaid) {
    const std::vector<double> noisy{100e6, 140e6, 70e6, 120e6, 90e6};
    const std::vector<double> noisy2{110e6, 80e6, 130e6, 95e6, 100e6};
    std::vector<HostInput> inputs;
    inputs.push_back(host("a", false, {cell("tas", 1, around(1e8)), cell("cas", 1, around(2e8))}));
    inputs.push_back(host("b", false, {cell("tas", 1, noisy), cell("cas", 1, noisy2)}));
    inputs.push_back(host("c", true, {cell("tas", 1, noisy2), cell("cas", 1, noisy)}));
    auto c = compare_hosts(inputs);
    EXPECT_EQ(c.pairs[0].summary,
              "cas vs tas: faster on a (aarch64, no LSE). Inconclusive on b (aarch64, no LSE); c "
              "(aarch64, LSE).");
    inputs.erase(inputs.begin());
    c = compare_hosts(inputs);
    EXPECT_EQ(c.pairs[0].conclusion, "");
    EXPECT_EQ(c.pairs[0].summary.find("cas vs tas: no host settled it"), 0u) << c.pairs[0].summary;
}

TEST(Hosts, DifferentMachinesAreNamedByField) {
    workload::Provenance a, b;
    a.hostname = b.hostname = "vm";
    a.arch = b.arch = "aarch64";
    EXPECT_TRUE(host_differences(a, b).empty());
    b.lse = true;
    b.cpu_model = "Neoverse-N1";
    EXPECT_EQ(host_differences(a, b), (std::vector<std::string>{"cpu_model", "lse"}));
}

}  // namespace hosts_test
}  // namespace lockprof::analysis
