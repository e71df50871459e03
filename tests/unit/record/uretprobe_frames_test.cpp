// Frames a uretprobe's trampoline took: the "[uprobes]" page read from a maps text, and each
// sample's trampoline frames given back the return addresses of the calls the probes saw
// running in its thread, innermost first; frames outside the page, samples of other threads
// and samples outside every call are left as they were.
#include "lockprof/record/uretprobe_frames.hpp"

#include <gtest/gtest.h>

namespace lockprof::record {
namespace {

constexpr std::uint64_t kTrampoline = 0x7fffffffe000;

SpinHit entry(std::uint32_t tid, std::uint64_t time, std::uint64_t return_address) {
    SpinHit h;
    h.pid = 10;
    h.tid = tid;
    h.time_ns = time;
    h.return_address = return_address;
    return h;
}

SpinHit exit_of(std::uint32_t tid, std::uint64_t time) {
    SpinHit h;
    h.pid = 10;
    h.tid = tid;
    h.time_ns = time;
    h.is_return = true;
    return h;
}

measure::RawSample sample(std::uint32_t tid, std::uint64_t time,
                          std::vector<std::uint64_t> callchain) {
    measure::RawSample s;
    s.pid = 10;
    s.tid = tid;
    s.time_ns = time;
    s.ip = 0x1000;
    s.callchain = std::move(callchain);
    return s;
}

TEST(UretprobeFrames, FindsTheUprobesPage) {
    const std::string maps =
        "55d0c000-55d0d000 r-xp 00001000 08:01 123 /usr/bin/prog\n"
        "7f520c8a7000-7f520c8a9000 r-xp 00000000 00:00 0                          [vdso]\n"
        "7fffffffe000-7ffffffff000 --xp 00000000 00:00 0                          [uprobes]\n";
    const auto page = uprobes_page(maps);
    ASSERT_TRUE(page);
    EXPECT_EQ(page->start, kTrampoline);
    EXPECT_EQ(page->end, 0x7ffffffff000u);
    EXPECT_FALSE(uprobes_page("55d0c000-55d0d000 r-xp 00001000 08:01 123 /usr/bin/prog\n"));
    EXPECT_FALSE(uprobes_page("garbage [uprobes]\n"));
}

TEST(UretprobeFrames, TrampolineFramesGetTheCallersTheProbesSaw) {
    const std::map<pid_t, CodeRange> pages{{10, {kTrampoline, kTrampoline + 0x1000}}};
    // Thread 1: an outer call (returns to 0xa1) around an inner one (returns to 0xb1), then a
    // second inner call (0xb2). Thread 2: one call (0xc1).
    const std::vector<SpinHit> hits{entry(1, 100, 0xa1), entry(1, 110, 0xb1), exit_of(1, 120),
                                    entry(1, 130, 0xb2), exit_of(1, 140),     exit_of(1, 150),
                                    entry(2, 100, 0xc1), exit_of(2, 200)};
    std::vector<measure::RawSample> samples{
        // In the first inner call: both trampoline frames, innermost first.
        sample(1, 115, {kTrampoline, 0x5000, kTrampoline, 0x6000}),
        // In the second inner call, as a DWARF unwind that stopped at the trampoline.
        sample(1, 135, {kTrampoline}),
        // Between the inner calls: only the outer one runs.
        sample(1, 125, {kTrampoline, 0x6000}),
        // Thread 2's call.
        sample(2, 150, {kTrampoline}),
        // After every call returned: nothing to give back, left as it is.
        sample(1, 160, {kTrampoline}),
        // No trampoline frame: untouched.
        sample(1, 115, {0x5000, 0x6000}),
    };
    EXPECT_EQ(restore_uretprobe_callers(samples, hits, pages), 5u);
    EXPECT_EQ(samples[0].callchain, (std::vector<std::uint64_t>{0xb1, 0x5000, 0xa1, 0x6000}));
    EXPECT_EQ(samples[1].callchain, (std::vector<std::uint64_t>{0xb2}));
    EXPECT_EQ(samples[2].callchain, (std::vector<std::uint64_t>{0xa1, 0x6000}));
    EXPECT_EQ(samples[3].callchain, (std::vector<std::uint64_t>{0xc1}));
    EXPECT_EQ(samples[4].callchain, (std::vector<std::uint64_t>{kTrampoline}));
    EXPECT_EQ(samples[5].callchain, (std::vector<std::uint64_t>{0x5000, 0x6000}));
}

TEST(UretprobeFrames, ProcessesWithoutAPageAreLeftAlone) {
    std::vector<measure::RawSample> samples{sample(1, 115, {kTrampoline})};
    EXPECT_EQ(restore_uretprobe_callers(samples, {entry(1, 100, 0xa1)}, {}), 0u);
    EXPECT_EQ(samples[0].callchain, (std::vector<std::uint64_t>{kTrampoline}));
}

}  // namespace
}  // namespace lockprof::record
