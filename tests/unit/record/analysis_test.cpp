#include "lockprof/record/analysis.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"
#include "lockprof/export/folded.hpp"
#include "lockprof/symbols/resolver.hpp"

// Two functions of this test binary to put synthetic samples in; one is named like a spin
// lock so the spin-lock view picks it up.
extern "C" __attribute__((noinline)) int record_test_spin_wait(volatile int* flag) {
    int n = 0;
    while (*flag == 0 && n < 1000) ++n;
    return n;
}
extern "C" __attribute__((noinline)) int record_test_hot_work(int x) {
    for (int i = 0; i < 100; ++i) x = x * 31 + i;
    return x;
}

namespace lockprof::record {
namespace {

std::uint64_t address_of(const void* f) {
    return reinterpret_cast<std::uint64_t>(f);
}

measure::RawSample sample_at(std::uint64_t ip, std::uint32_t pid, std::uint64_t weight = 1000) {
    measure::RawSample s;
    s.ip = ip;
    s.pid = pid;
    s.tid = pid;
    s.weight = weight;
    return s;
}

RecordResult synthetic() {
    RecordResult r;
    r.mode = Mode::match;
    r.match = "postgres";
    r.duration_s = 2;
    r.events = {"task_clock", "cycles"};
    const auto modules = symbols::process_modules();
    for (pid_t pid : {100, 101}) {
        ProcessRecord p;
        p.info = {pid, "postgres", "/bin/postgres", 0};
        p.modules = modules;  // forked backends: identical mappings
        TaskRecord t;
        t.tid = pid;
        // task_clock always ran; cycles ran half the time (multiplexed) and scales x2.
        t.counters = {{"task_clock", 1000, 500, 500}, {"cycles", 300, 1000, 500}};
        p.threads.push_back(t);
        r.processes.push_back(std::move(p));
    }
    r.sampling = measure::SamplingInfo{};
    r.sampling->event = "cpu-clock";
    const auto spin = address_of(reinterpret_cast<const void*>(&record_test_spin_wait));
    const auto hot = address_of(reinterpret_cast<const void*>(&record_test_hot_work));
    for (int i = 0; i < 30; ++i) r.samples.push_back(sample_at(hot + 4, 100));
    for (int i = 0; i < 10; ++i) r.samples.push_back(sample_at(spin + 4, 101));
    for (int i = 0; i < 10; ++i) r.samples.push_back(sample_at(spin + 4, 100));
    return r;
}

TEST(RecordProfile, TotalsSumThreadsAndScaleMultiplexedEvents) {
    const auto p = analyse(synthetic(), {});
    ASSERT_EQ(p.totals.size(), 2u);
    EXPECT_DOUBLE_EQ(*p.totals[0].value, 2000);
    EXPECT_DOUBLE_EQ(*p.totals[1].value, 1200);  // 2 x 300 x (1000/500)
    EXPECT_DOUBLE_EQ(p.totals[0].per_second, 1000);
    ASSERT_EQ(p.per_process.size(), 2u);
    EXPECT_DOUBLE_EQ(*p.per_process.at(0)[0].value, 1000);
}

TEST(RecordProfile, NeverCountedEventsStayUncounted) {
    auto r = synthetic();
    for (auto& proc : r.processes) proc.threads[0].counters[1].running_ns = 0;
    const auto p = analyse(r, {});
    EXPECT_FALSE(p.totals[1].value.has_value());
}

TEST(RecordProfile, HotSymbolsAcrossProcessesOfOneImage) {
    const auto p = analyse(synthetic(), {});
    EXPECT_EQ(p.samples, 50u);
    ASSERT_GE(p.hot_symbols.size(), 2u);
    EXPECT_EQ(p.hot_symbols[0].symbol, "record_test_hot_work");
    EXPECT_EQ(p.hot_symbols[0].samples, 30u);
    EXPECT_DOUBLE_EQ(p.hot_symbols[0].share, 0.6);
    EXPECT_EQ(p.hot_symbols[1].symbol, "record_test_spin_wait");
    EXPECT_EQ(p.hot_symbols[1].processes, 2u);
    EXPECT_EQ(p.samples_per_process.at(0), 40u);
}

TEST(RecordProfile, SpinViewSumsLockFunctionsAndNamesTheirInstruction) {
    AnalysisOptions options;
    options.lock_pattern = "spin_wait";
    const auto p = analyse(synthetic(), options);
    EXPECT_DOUBLE_EQ(p.spin.share, 0.4);
    ASSERT_EQ(p.spin.symbols.size(), 1u);
    ASSERT_FALSE(p.spin.hot_instructions.empty());
    EXPECT_DOUBLE_EQ(p.spin.hot_instructions[0].share_of_spin, 1.0);
    EXPECT_FALSE(p.spin.hot_instructions[0].text.empty());
}

TEST(RecordProfile, AnnotatesTheHottestFunctionWithInstructions) {
    const auto p = analyse(synthetic(), {});
    ASSERT_FALSE(p.annotated.empty());
    const auto& f = p.annotated[0];
    EXPECT_EQ(f.name, "record_test_hot_work");
    EXPECT_TRUE(f.error.empty()) << f.error;
    double share = 0;
    for (const auto& i : f.instructions) share += i.share;
    EXPECT_NEAR(share, 0.6, 1e-9);  // the two processes' samples merged
}

TEST(RecordProfile, NoMatchingLockFunctions) {
    AnalysisOptions options;
    options.lock_pattern = "no_such_lock";
    const auto p = analyse(synthetic(), options);
    EXPECT_EQ(p.spin.share, 0);
    EXPECT_TRUE(p.spin.symbols.empty());
}

TEST(RecordProfile, SamplesOfUnknownProcessesAreUnresolved) {
    auto r = synthetic();
    r.samples.push_back(sample_at(0x1234, 999, 50000));
    const auto p = analyse(r, {});
    EXPECT_DOUBLE_EQ(p.unresolved_share, 0.5);  // 50000 of 100000
    // Ranked with the functions, so a large unresolved share shows at the top of the table.
    ASSERT_FALSE(p.hot_symbols.empty());
    EXPECT_EQ(p.hot_symbols[0].short_name, "[unknown]");
    EXPECT_TRUE(p.hot_symbols[0].symbol.empty());
    EXPECT_DOUBLE_EQ(p.hot_symbols[0].share, 0.5);
    // A pattern that matches any name still never takes unresolved code for a lock.
    AnalysisOptions options;
    options.lock_pattern = ".*";
    EXPECT_DOUBLE_EQ(analyse(r, options).spin.share, 0.5);
    const auto text = exporting::to_folded_text(folded_stacks(r, Images(r), p, false));
    EXPECT_NE(text.find("999;[unknown] 50000"), std::string::npos) << text;
}

// Seen in CI (CliRecord.ShortLivedChildrenAreNamedAndResolved under ASan): a sample a child
// took between its fork and its exec lies in its parent's code, at its parent's addresses,
// which its own mappings (after the exec) do not hold; it was "[unknown]".
TEST(RecordProfile, SamplesBeforeAnExecResolveAgainstTheMappingsItReplaced) {
    auto r = synthetic();
    r.samples.clear();
    ProcessRecord child;
    child.info = {102, "other", "/usr/bin/other", 0};
    child.modules = {{"/usr/bin/other", 0x1000, 0x2000, 0, "r-xp", ""}};
    child.before_exec = {{500, symbols::process_modules()}};
    r.processes.push_back(std::move(child));
    const auto hot = address_of(reinterpret_cast<const void*>(&record_test_hot_work));
    auto before = sample_at(hot + 4, 102, 3000);
    before.time_ns = 400;
    auto after = sample_at(hot + 4, 102, 1000);
    after.time_ns = 600;
    r.samples = {before, after};
    const auto p = analyse(r, {});
    ASSERT_EQ(p.hot_symbols.size(), 2u);
    EXPECT_EQ(p.hot_symbols[0].short_name, "record_test_hot_work");
    EXPECT_DOUBLE_EQ(p.hot_symbols[0].share, 0.75);
    EXPECT_EQ(p.hot_symbols[1].short_name, "[unknown]");  // after the exec: not its code
}

// record --spin names return addresses through the same resolvers the samples use: one per
// set of mappings, so forked backends share one, and a process without samples gets one too.
TEST(RecordProfile, ProcessesWithTheSameMappingsShareOneResolver) {
    auto r = synthetic();
    ProcessRecord idle;  // no samples, the same mappings as the others
    idle.info = {103, "postgres", "/bin/postgres", 0};
    idle.modules = r.processes[0].modules;
    r.processes.push_back(idle);
    ProcessRecord other;
    other.info = {104, "other", "/usr/bin/other", 0};
    other.modules = {{"/usr/bin/other", 0x1000, 0x2000, 0, "r-xp", ""}};
    r.processes.push_back(std::move(other));
    ProcessRecord gone;  // never read: no mappings
    gone.info = {105, "gone", "", 0};
    r.processes.push_back(std::move(gone));
    const Images images(r);
    const auto* backend = images.resolver_of(100);
    ASSERT_NE(backend, nullptr);
    EXPECT_EQ(images.resolver_of(101), backend);
    EXPECT_EQ(images.resolver_of(103), backend);
    EXPECT_EQ(&images.all().at(0).resolver, backend);  // the samples' own
    const auto* other_resolver = images.resolver_of(104);
    ASSERT_NE(other_resolver, nullptr);
    EXPECT_NE(other_resolver, backend);
    EXPECT_EQ(images.resolver_of(104), other_resolver);  // built once
    EXPECT_EQ(images.resolver_of(105), nullptr);
    EXPECT_EQ(images.resolver_of(999), nullptr);
    const auto hot = address_of(reinterpret_cast<const void*>(&record_test_hot_work));
    EXPECT_EQ(images.resolver_of(103)->resolve(hot).symbol, "record_test_hot_work");
}

TEST(RecordProfile, BadLockPatternIsAUsageError) {
    EXPECT_THROW(lock_regex("(unclosed"), UsageError);
}

TEST(RecordFolded, RootIsTheProcessName) {
    const auto r = synthetic();
    const auto p = analyse(r, {});
    const auto text = exporting::to_folded_text(folded_stacks(r, Images(r), p, false));
    EXPECT_NE(text.find("postgres;record_test_hot_work 30000"), std::string::npos) << text;
    EXPECT_NE(text.find("postgres;record_test_spin_wait 20000"), std::string::npos) << text;
}

}  // namespace
}  // namespace lockprof::record

namespace lockprof::record {
namespace {

TEST(RecordProfile, IdleProcessCountsZeroForAnEventCountedElsewhere) {
    auto r = synthetic();
    r.processes[1].threads[0].counters[0] = {"task_clock", 0, 0, 0};  // never scheduled
    const auto p = analyse(r, {});
    ASSERT_TRUE(p.per_process.at(1)[0].value.has_value());
    EXPECT_EQ(*p.per_process.at(1)[0].value, 0);
    EXPECT_DOUBLE_EQ(*p.totals[0].value, 1000);
}

}  // namespace
}  // namespace lockprof::record

namespace lockprof::record {
namespace {

// perf's cpu-clock samples without --kernel drop every tick in kernel mode: a program living in
// system calls left 29 samples for 800 ms of task_clock and no word of why. The profile now says
// how much the samples saw, and that --kernel sees the rest.
TEST(RecordProfile, SaysHowMuchCpuTimeUserSpaceSamplesMissed) {
    auto r = synthetic();
    r.sampling->sampler = "perf";
    for (auto& proc : r.processes) proc.threads[0].counters[0].raw = 1'000'000;  // 2 ms in all
    auto p = analyse(r, {});  // 50 samples of 1000 ns
    ASSERT_TRUE(p.sampled_cpu_share);
    EXPECT_DOUBLE_EQ(*p.sampled_cpu_share, 50'000.0 / 2'000'000);
    ASSERT_EQ(p.warnings.size(), 1u);
    EXPECT_EQ(p.warnings[0].rfind("the samples stand for 2% of the 2 ms of CPU time task_clock "
                                  "counted: the other 98% ran in the kernel",
                                  0),
              0u)
        << p.warnings[0];
    EXPECT_NE(p.warnings[0].find("--kernel samples kernel code too"), std::string::npos);

    r.sampling->kernel = true;  // sampled with --kernel: the share, no advice to use it
    p = analyse(r, {});
    ASSERT_EQ(p.warnings.size(), 1u);
    EXPECT_EQ(p.warnings[0].find("--kernel"), std::string::npos) << p.warnings[0];

    r.sampling->kernel = false;
    for (auto& proc : r.processes) proc.threads[0].counters[0].raw = 26'000;  // samples saw 96%
    EXPECT_TRUE(analyse(r, {}).warnings.empty());
    r.sampling->event = "cycles";  // weights in cycles: not comparable with task_clock
    EXPECT_FALSE(analyse(r, {}).sampled_cpu_share);
    r.sampling->event = "cpu-clock";
    r.sampling->sampler = "timer";  // charges kernel time to the calling instruction
    EXPECT_FALSE(analyse(r, {}).sampled_cpu_share);
}

}  // namespace
}  // namespace lockprof::record
