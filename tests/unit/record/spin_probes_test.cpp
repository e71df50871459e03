// `record --spin`'s probes during a recording (src/record/spin_probes.hpp), alone: the stacks
// kept per call site (reservoir sampling, no kernel needed), and real uprobes on a function of
// this test program, attached to this thread and drained into the recording (skipped where the
// kernel has no uprobe PMU or refuses them).
#include "record/spin_probes.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "lockprof/common/error.hpp"
#include "support/uprobes.hpp"

extern "C" __attribute__((noinline, used)) int lockprof_spin_probes_test_target(void* lock) {
    asm volatile("" ::: "memory");
    return lock != nullptr;
}

namespace lockprof::record {
namespace {

SpinHit stack_hit(std::uint64_t return_address, std::size_t stack_bytes) {
    SpinHit h;
    h.is_stack = true;
    h.return_address = return_address;
    h.user_regs.assign(4, 1);
    h.user_stack.assign(stack_bytes, 0);
    return h;
}

struct SpinStackRecording {
    std::vector<measure::RawSample> samples;
    std::optional<SpinRecording> spin{SpinRecording{}};
    StackCopies copies{samples, spin, [](std::uint32_t) { return nullptr; }};
    SpinStackRecording() {
        SpinProbe probe;
        probe.function = "f";
        probe.path = "/f";
        spin->probes.push_back(probe);
    }
};

TEST(RecordSpinStacks, EachCallSiteKeepsABoundedUniformSampleOfItsStacks) {
    SpinStackRecording r;
    SpinStackReservoirs reservoirs;
    const std::size_t seen = 4 * kSpinStacksPerSite;
    for (std::size_t i = 0; i < seen; ++i)
        reservoirs.keep(*r.spin, stack_hit(0x1000, 10), r.copies);
    for (std::size_t i = 0; i < 3; ++i) reservoirs.keep(*r.spin, stack_hit(0x2000, 10), r.copies);
    EXPECT_EQ(r.spin->stacks_seen, seen + 3);
    std::size_t first = 0, second = 0;
    for (const auto& h : r.spin->hits) (*h.return_address == 0x1000 ? first : second) += 1;
    EXPECT_EQ(first, kSpinStacksPerSite) << "the busy site keeps kSpinStacksPerSite";
    EXPECT_EQ(second, 3u) << "another site keeps its own";
    // Every kept copy is held once: replacing one releases the copy it replaced.
    EXPECT_EQ(r.copies.held_bytes(), (kSpinStacksPerSite + 3) * 10);
}

TEST(RecordSpinStacks, LaterStacksReplaceKeptOnesAndTheSampleIsReproducible) {
    auto kept_sizes = [] {
        SpinStackRecording r;
        SpinStackReservoirs reservoirs;
        // Stack sizes tell the stacks apart: the i-th is i + 1 bytes.
        for (std::size_t i = 0; i < 3 * kSpinStacksPerSite; ++i)
            reservoirs.keep(*r.spin, stack_hit(0x1000, i + 1), r.copies);
        std::multiset<std::size_t> sizes;
        for (const auto& h : r.spin->hits) sizes.insert(h.user_stack.size());
        return sizes;
    };
    const auto sizes = kept_sizes();
    ASSERT_EQ(sizes.size(), kSpinStacksPerSite);
    EXPECT_GT(*sizes.rbegin(), kSpinStacksPerSite) << "no later stack replaced a first one";
    EXPECT_EQ(sizes, kept_sizes()) << "a fixed seed: the same stacks are kept";
}

TEST(RecordSpinProbes, ProbesAFunctionInThisThreadAndDrainsItsCalls) {
    if (const auto why = test::uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    RecordSpec spec;
    spec.mode = Mode::pid;
    spec.spin = std::vector<std::string>{"lockprof_spin_probes_test_target"};
    RecordResult result;
    Notes notes(result.notes);
    StackCopies copies(result.samples, result.spin, [](std::uint32_t) { return nullptr; });
    std::optional<SpinProbes> probes;
    try {
        probes.emplace(spec, result.spin, notes, copies);
    } catch (const Error& e) {
        GTEST_SKIP() << "no uprobes here: " << e.what();
    }
    probes->prepare({std::filesystem::canonical("/proc/self/exe").string()});
    ASSERT_TRUE(probes->prepared());
    ASSERT_TRUE(result.spin);
    ASSERT_EQ(result.spin->probes.size(), 1u);
    try {
        if (const int error = probes->attach_task(getpid(), gettid()))
            GTEST_SKIP() << "the kernel refused to probe this thread: errno " << error;
    } catch (const Error& e) {
        GTEST_SKIP() << "the kernel refused the probe: " << e.what();
    }
    int lock = 0;
    for (int i = 0; i < 3; ++i) lockprof_spin_probes_test_target(&lock);
    std::set<pid_t> entered;
    probes->finish([&](pid_t pid) { entered.insert(pid); }, [](std::uint32_t) { return nullptr; });
    std::size_t entries = 0, returns = 0;
    for (const auto& h : result.spin->hits) {
        EXPECT_EQ(h.tid, static_cast<std::uint32_t>(gettid()));
        if (h.is_return) {
            ++returns;
            continue;
        }
        ++entries;
        EXPECT_EQ(h.lock, reinterpret_cast<std::uint64_t>(&lock)) << "argument 0";
        EXPECT_TRUE(h.return_address.has_value());
    }
    EXPECT_EQ(entries, 3u);
    EXPECT_EQ(returns, 3u);
    EXPECT_EQ(entered, std::set<pid_t>{getpid()});
    ASSERT_EQ(result.spin->kernel_entries.size(), 1u);
    EXPECT_EQ(result.spin->kernel_entries[0], 3u);
}

}  // namespace
}  // namespace lockprof::record
