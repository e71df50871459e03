// A sampled run as a pprof profile: samples of this test binary's own code, resolved through
// the run's recorded mappings, encoded and decoded back with pprof's generated classes.
#include "lockprof/attribution/pprof_builder.hpp"

#include <unistd.h>

#include <numeric>

#include <gtest/gtest.h>

#include "unit/export/pprof_test_support.hpp"

// An inlined function inside a real one, for inline-aware line records.
static inline __attribute__((always_inline)) int pprof_test_inner(int x) {
    for (int i = 0; i < 40; ++i) x = x * 13 + (x >> 3) + i;
    return x;
}
constexpr int kInnerCallLine = __LINE__ + 2;
extern "C" __attribute__((noinline)) int pprof_test_outer(int x) {
    return pprof_test_inner(x) * 3 + 1;
}
extern "C" __attribute__((noinline)) int pprof_test_caller(int x) {
    return pprof_test_outer(x) + 7;
}

namespace lockprof::attribution {
namespace {

using exporting::pprof::test::decode;
using exporting::pprof::test::label;
namespace proto = exporting::pprof::test::proto;

std::uint64_t entry_address(int (*f)(int)) {
    return reinterpret_cast<std::uint64_t>(reinterpret_cast<const void*>(f));
}

// An address of pprof_test_outer where pprof_test_inner's code sits.
std::uint64_t inlined_address(const symbols::SymbolResolver& resolver) {
    const auto start = entry_address(&pprof_test_outer);
    const auto size = resolver.resolve(start).symbol_size;
    for (std::uint64_t a = start; a < start + size; ++a)
        if (!resolver.inlined_calls(a).empty()) return a;
    return 0;
}

workload::RunResult sampled_run(const std::string& event, const std::vector<std::uint64_t>& ips,
                                std::uint64_t caller) {
    workload::RunResult run;
    run.provenance.lockprof_version = "0.1.0";
    run.provenance.timestamp_utc = "2026-12-01T12:00:00Z";
    measure::SamplingInfo info;
    info.sampler = "perf";
    info.event = info.requested_event = event;
    info.frequency = 1000;
    info.modules = symbols::process_modules();
    run.sampling = info;
    for (const std::string lock : {"tas", "cas"}) {
        workload::CellResult cell;
        cell.lock = cell.algorithm = lock;
        cell.threads = 2;
        workload::TrialResult trial;
        trial.wall_ns = 100'000'000;
        for (unsigned t = 0; t < 2; ++t) {
            workload::ThreadResult thread;
            thread.index = t;
            thread.sampled = true;
            thread.cpu_ns = 90'000'000;
            for (auto ip : ips)
                thread.samples.push_back(
                    {ip, 1000 + t, 0, event == "cycles" ? 3000u : 1'000'000u, {caller}, 0});
            trial.threads.push_back(thread);
        }
        cell.trials.push_back(trial);
        run.cells.push_back(cell);
    }
    return run;
}

const proto::Function& function_of(const proto::Profile& p, std::uint64_t id) {
    for (const auto& f : p.function())
        if (f.id() == id) return f;
    throw std::runtime_error("no function");
}
const proto::Location& location_of(const proto::Profile& p, std::uint64_t id) {
    for (const auto& l : p.location())
        if (l.id() == id) return l;
    throw std::runtime_error("no location");
}

TEST(PprofProfile, ClockSamplesWeighCpuTime) {
    const auto resolver = symbols::SymbolResolver::for_process();
    const auto ip = entry_address(&pprof_test_outer) + 2;
    const auto caller = entry_address(&pprof_test_caller) + 8;  // a return address
    const auto p = decode(
        exporting::pprof::encode_pprof(run_pprof(sampled_run("cpu-clock", {ip, ip}, caller))));
    const auto& s = p.string_table();
    EXPECT_EQ(s[0], "");
    ASSERT_EQ(p.sample_type_size(), 2);
    EXPECT_EQ(s[p.sample_type(0).type()] + "/" + s[p.sample_type(0).unit()], "samples/count");
    EXPECT_EQ(s[p.sample_type(1).type()] + "/" + s[p.sample_type(1).unit()], "cpu/nanoseconds");
    EXPECT_EQ(s[p.period_type().type()], "cpu");
    EXPECT_EQ(p.period(), 1'000'000);            // 1000 Hz
    EXPECT_EQ(p.duration_nanos(), 200'000'000);  // two cells' trials
    EXPECT_EQ(p.time_nanos(), 1'796'126'400'000'000'000);

    ASSERT_EQ(p.sample_size(), 8);  // 2 cells x 2 threads x 2
    const auto& first = p.sample(0);
    EXPECT_EQ(first.value(0), 1);
    EXPECT_EQ(first.value(1), 1'000'000);
    EXPECT_EQ(label(p, first, "lock"), "tas");
    EXPECT_EQ(label(p, first, "flavour"), "native");
    EXPECT_EQ(label(p, first, "threads"), "2");
    EXPECT_EQ(label(p, first, "thread"), "0");
    EXPECT_EQ(label(p, first, "tid"), "1000");
    EXPECT_EQ(label(p, p.sample(7), "lock"), "cas");
    EXPECT_EQ(label(p, p.sample(7), "thread"), "1");

    // One location per address, leaf first: the sampled instruction, then the call site.
    ASSERT_EQ(first.location_id_size(), 2);
    EXPECT_EQ(p.location_size(), 2);
    const auto& leaf = location_of(p, first.location_id(0));
    const auto& call = location_of(p, first.location_id(1));
    EXPECT_EQ(leaf.address(), ip);
    EXPECT_EQ(call.address(), caller - 1);  // inside the call instruction
    ASSERT_GE(leaf.line_size(), 1);
    EXPECT_EQ(s[function_of(p, leaf.line(leaf.line_size() - 1).function_id()).name()],
              "pprof_test_outer");
    EXPECT_EQ(s[function_of(p, call.line(call.line_size() - 1).function_id()).name()],
              "pprof_test_caller");

    // Its mapping: this test binary, with its build id.
    ASSERT_NE(leaf.mapping_id(), 0u);
    const proto::Mapping* mapping = nullptr;
    for (const auto& m : p.mapping())
        if (m.id() == leaf.mapping_id()) mapping = &m;
    ASSERT_NE(mapping, nullptr);
    EXPECT_LE(mapping->memory_start(), ip);
    EXPECT_GT(mapping->memory_limit(), ip);
    const auto self = std::filesystem::read_symlink("/proc/self/exe").string();
    EXPECT_EQ(s[mapping->filename()], self);
    EXPECT_EQ(s[mapping->build_id()], symbols::build_id_of(self));
    EXPECT_TRUE(mapping->has_functions() && mapping->has_inline_frames());
}

TEST(PprofProfile, InlinedCodeHasALineRecordPerFunction) {
    const auto resolver = symbols::SymbolResolver::for_process();
    const auto ip = inlined_address(resolver);
    if (!ip) GTEST_SKIP() << "the compiler did not inline pprof_test_inner (or no DWARF)";
    const auto p =
        decode(exporting::pprof::encode_pprof(run_pprof(sampled_run("cpu-clock", {ip}, 0))));
    const auto& s = p.string_table();
    const auto& loc = location_of(p, p.sample(0).location_id(0));
    ASSERT_EQ(loc.line_size(), 2);
    // Innermost first: the inlined function at a line of its own, then the function it was
    // inlined into, at the line of the call.
    const auto& inner = function_of(p, loc.line(0).function_id());
    const auto& outer = function_of(p, loc.line(1).function_id());
    // Named as lockprof's annotation names it; the whole demangled name is the system name.
    EXPECT_EQ(s[inner.name()], "pprof_test_inner");
    // (GCC gives a static function no linkage name, so DWARF's plain name is all there is.)
    EXPECT_TRUE(s[inner.system_name()].starts_with("pprof_test_inner")) << s[inner.system_name()];
    EXPECT_EQ(s[outer.name()], "pprof_test_outer");
    EXPECT_EQ(loc.line(1).line(), kInnerCallLine);
    EXPECT_EQ(std::filesystem::path(s[outer.filename()]).filename(), "pprof_builder_test.cpp");
    EXPECT_GT(loc.line(0).line(), 0);
    EXPECT_LT(loc.line(0).line(), kInnerCallLine);
}

TEST(PprofProfile, HardwareEventsGetTheirOwnSampleTypeAndAShareOfCpuTime) {
    const auto ip = entry_address(&pprof_test_outer) + 2;
    const auto p =
        decode(exporting::pprof::encode_pprof(run_pprof(sampled_run("cycles", {ip, ip, ip}, 0))));
    const auto& s = p.string_table();
    ASSERT_EQ(p.sample_type_size(), 3);
    EXPECT_EQ(s[p.sample_type(2).type()] + "/" + s[p.sample_type(2).unit()], "cycles/count");
    EXPECT_EQ(s[p.default_sample_type()], "cycles");
    EXPECT_EQ(s[p.period_type().type()], "cycles");
    EXPECT_EQ(p.period(), 3000);  // frequency based: the average weight
    ASSERT_EQ(p.sample_size(), 12);
    EXPECT_EQ(p.sample(0).value(2), 3000);
    // Each thread's 90 ms of CPU time spread over its three samples.
    EXPECT_EQ(p.sample(0).value(1) + p.sample(1).value(1) + p.sample(2).value(1), 90'000'000);
    EXPECT_EQ(p.sample(0).value(1), 30'000'000);
}

TEST(PprofProfile, UnsampledRunIsEmpty) {
    workload::RunResult run;
    EXPECT_TRUE(run_pprof(run).samples.empty());
}

TEST(Apportion, PartsFollowTheWeightsAndAddUp) {
    measure::RawSample a, b, c;
    a.weight = 1;
    b.weight = 1;
    c.weight = 2;
    const auto parts = apportion(10, {&a, &b, &c});
    EXPECT_EQ(std::accumulate(parts.begin(), parts.end(), std::int64_t{0}), 10);
    EXPECT_EQ(parts[2], 5);
    EXPECT_TRUE(apportion(10, {}).empty());
}

TEST(EpochNanos, ParsesProvenanceTimestamps) {
    EXPECT_EQ(epoch_nanos("1970-01-01T00:00:01Z"), 1'000'000'000);
    EXPECT_EQ(epoch_nanos("yesterday"), 0);
}

}  // namespace
}  // namespace lockprof::attribution
