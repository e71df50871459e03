// UprobeSampler on a live thread: what the kernel counts and what the buffers record are the
// same calls. A child process of this test calls a function every 20 us while it is probed
// again and again; every attach must open its events, map their buffer and only then enable
// them, or the calls in between are counted but written nowhere (as a `record --spin --pid`
// test once saw on a loaded machine: 300 entries counted, none recorded). The child is stopped
// before the sampler is: a hit whose handler the disable interrupts on another CPU can be
// counted and written after stop() returns (seen in the emulated arm64 system, one hit in a
// few hundred rounds' worth), which is not what this test is about.
#include "lockprof/sampling/uprobe_sampler.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include "lockprof/pmu/uprobe.hpp"
#include "lockprof/symbols/elf_lookup.hpp"
#include "support/uprobes.hpp"

namespace {
volatile int uprobe_sampler_test_sink = 0;
}  // namespace

#if defined(__GNUC__) && !defined(__clang__)
#define UPROBE_SAMPLER_TEST_NOINLINE __attribute__((noinline, noipa, used))
#else
#define UPROBE_SAMPLER_TEST_NOINLINE __attribute__((noinline, used))
#endif

extern "C" UPROBE_SAMPLER_TEST_NOINLINE void lockprof_uprobe_sampler_test_target() {
    uprobe_sampler_test_sink = uprobe_sampler_test_sink + 1;
}

namespace lockprof::sampling {
namespace {

// A child calling the target in a loop until killed: its own process, so the probes (and the
// uretprobe trampoline) are never in this test's.
class CallingChild {
  public:
    static constexpr std::chrono::microseconds kCallInterval{20};

    CallingChild() {
        pid_ = fork();
        if (pid_ == 0)
            for (;;) {
                lockprof_uprobe_sampler_test_target();
                // Paced, so that even a slow reader (this test under TSan reads about one
                // record per 3 us) drains the buffer faster than the calls fill it.
                const auto next = std::chrono::steady_clock::now() + kCallInterval;
                while (std::chrono::steady_clock::now() < next) {
                }
            }
    }
    ~CallingChild() {
        if (pid_ <= 0) return;
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    pid_t pid() const { return pid_; }
    // Stops it and waits until it is stopped: out of any probe handler (a stop takes effect on
    // the way back to user space), its hits all counted and written.
    bool pause() const {
        int status = 0;
        return kill(pid_, SIGSTOP) == 0 && waitpid(pid_, &status, WUNTRACED) == pid_ &&
               WIFSTOPPED(status);
    }
    bool resume() const { return kill(pid_, SIGCONT) == 0; }

  private:
    pid_t pid_ = -1;
};

TEST(UprobeSampler, EveryEntryTheKernelCountsIsRecorded) {
    if (const auto why = test::uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    std::string why;
    const auto pmu = pmu::uprobe_pmu(why);
    ASSERT_TRUE(pmu) << why;
    const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    const auto search = symbols::find_function(exe, "lockprof_uprobe_sampler_test_target");
    ASSERT_TRUE(search.found) << "no symbol lockprof_uprobe_sampler_test_target in " << exe;

    CallingChild child;
    ASSERT_GT(child.pid(), 0) << std::strerror(errno);
    // Each attach races the child's calls; one round in which the kernel counted a call that
    // no record holds is the fault. The buffer is drained every millisecond while the child
    // runs, so that it does not fill: the kernel reports a full buffer's losses only with its
    // next write, and none comes once the child is stopped. A round in which one drain still
    // found the buffer nearly full (a stalled test thread) proves nothing and is run again.
    constexpr int kRounds = 10;
    constexpr std::size_t kNearlyFull = 4000;  // records, of about 6,000 the buffer holds
    int conclusive = 0, round = 0;
    for (; round < 4 * kRounds && conclusive < kRounds; ++round) {
        UprobeSampler sampler(*pmu, {{exe, search.found->file_offset, "target"}});
        ASSERT_TRUE(child.resume());
        std::size_t failed = 0;
        ASSERT_EQ(sampler.attach_task(child.pid(), failed), 0) << "round " << round;
        std::uint64_t entries = 0, returns = 0;
        std::size_t fullest = 0;
        auto take = [&] {
            const auto hits = sampler.drain();
            fullest = std::max(fullest, hits.size());
            for (const auto& hit : hits) (hit.is_return ? returns : entries) += 1;
        };
        // 5 ms of calls, or, on a machine so loaded that the child has not run yet, until its
        // first call is seen (at most 2 s).
        for (int ms = 0; ms < 5 || (entries == 0 && ms < 2000); ++ms) {
            usleep(1000);
            take();
        }
        ASSERT_TRUE(child.pause()) << std::strerror(errno);
        sampler.stop();
        take();
        if (fullest >= kNearlyFull) continue;
        ++conclusive;
        const auto counts = sampler.counts();
        ASSERT_EQ(counts.size(), 1u);
        EXPECT_GT(entries, 0u) << "round " << round << ": the child's calls were not seen";
        // Returns too: a loss record does not say which kind it lost.
        EXPECT_EQ(counts[0].entries + counts[0].returns, entries + returns + sampler.lost())
            << "round " << round << ": the kernel counted " << counts[0].entries << " entries and "
            << counts[0].returns << " returns, the buffer holds " << entries << " and " << returns
            << ", " << sampler.lost() << " records lost";
    }
    EXPECT_EQ(conclusive, kRounds) << "in " << round - conclusive << " of " << round
                                   << " rounds the buffer nearly filled between two drains";
}

}  // namespace
}  // namespace lockprof::sampling
