// A recording as a pprof profile: labels per process and thread, and cpu/nanoseconds from
// the recorded task_clock when the samples count a hardware event.
#include "lockprof/record/recording_pprof.hpp"

#include <gtest/gtest.h>

#include "lockprof/symbols/resolver.hpp"
#include "unit/export/pprof_test_support.hpp"

extern "C" __attribute__((noinline)) int record_pprof_test_work(int x) {
    for (int i = 0; i < 100; ++i) x = x * 31 + i;
    return x;
}

namespace lockprof::record {
namespace {

using exporting::pprof::test::decode;
using exporting::pprof::test::label;

RecordResult recording(const std::string& event) {
    RecordResult r;
    r.mode = Mode::match;
    r.match = "postgres";
    r.duration_s = 2;
    r.events = {"task_clock"};
    const auto modules = symbols::process_modules();
    for (pid_t pid : {100, 101}) {
        ProcessRecord p;
        p.info = {pid, "postgres", "/bin/postgres", 0};
        p.modules = modules;
        TaskRecord t;
        t.tid = pid;
        t.comm = "backend";
        // Multiplexed half the time: scales x2, to 2 ms.
        t.counters = {{"task_clock", 1'000'000, 1000, 500}};
        p.threads.push_back(t);
        r.processes.push_back(std::move(p));
    }
    r.sampling = measure::SamplingInfo{};
    r.sampling->sampler = "perf";
    r.sampling->event = event;
    r.sampling->period = 10'000;
    const auto ip =
        reinterpret_cast<std::uint64_t>(reinterpret_cast<const void*>(&record_pprof_test_work));
    for (std::uint32_t pid : {100u, 101u, 101u, 555u}) {
        measure::RawSample s;
        s.ip = ip + 4;
        s.pid = s.tid = pid;
        s.weight = 10'000;
        r.samples.push_back(s);
    }
    return r;
}

TEST(RecordPprof, LabelsEachSampleWithItsProcessAndThread) {
    const auto p = decode(exporting::pprof::encode_pprof(recording_pprof(recording("cpu-clock"))));
    const auto& s = p.string_table();
    EXPECT_EQ(s[0], "");
    ASSERT_EQ(p.sample_size(), 4);
    ASSERT_EQ(p.sample_type_size(), 2);
    EXPECT_EQ(p.duration_nanos(), 2'000'000'000);
    EXPECT_EQ(p.period(), 10'000);
    std::map<std::string, int> processes;
    for (const auto& sample : p.sample()) {
        ++processes[label(p, sample, "process") + "/" + label(p, sample, "pid")];
        EXPECT_EQ(sample.value(1), 10'000);  // a clock: the weight is CPU time
        EXPECT_EQ(label(p, sample, "tid"), label(p, sample, "pid"));
    }
    EXPECT_EQ(processes, (std::map<std::string, int>{
                             {"postgres/100", 1}, {"postgres/101", 2}, {"555/555", 1}}));
    EXPECT_EQ(label(p, p.sample(0), "thread"), "backend");
    // Both backends share their mappings: one resolver, one set of pprof mappings for them.
    bool resolved = false;
    for (const auto& f : p.function()) resolved |= s[f.name()] == "record_pprof_test_work";
    EXPECT_TRUE(resolved);
}

TEST(RecordPprof, HardwareSamplesShareTheThreadsTaskClock) {
    const auto p = decode(exporting::pprof::encode_pprof(recording_pprof(recording("cycles"))));
    const auto& s = p.string_table();
    ASSERT_EQ(p.sample_type_size(), 3);
    EXPECT_EQ(s[p.sample_type(2).type()], "cycles");
    std::map<std::string, std::int64_t> cpu;
    for (const auto& sample : p.sample()) {
        cpu[label(p, sample, "pid")] += sample.value(1);
        EXPECT_EQ(sample.value(2), 10'000);
    }
    EXPECT_EQ(cpu["100"], 2'000'000);  // its one sample has all of it
    EXPECT_EQ(cpu["101"], 2'000'000);  // split over two
    EXPECT_EQ(cpu["555"], 0);          // never seen alive: no count
    bool noted = false;
    for (auto c : p.comment()) noted |= s[c].find("task_clock") != std::string::npos;
    EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace lockprof::record
