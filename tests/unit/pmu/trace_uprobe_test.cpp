// tracefs uprobes (`record --spin -- CMD`): which definitions a lockprof that is gone left
// behind, which paths a definition can name, the tracepoint attributes, and, where this
// machine lets lockprof define probes (root, tracefs), a definition made and removed again.
#include "lockprof/pmu/trace_uprobe.hpp"
#include "lockprof/pmu/uprobe.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include "support/uprobes.hpp"

namespace lockprof::pmu {
namespace {

TEST(TraceUprobes, StaleDefinitionsAreThoseOfLockprofsThatNoLongerRun) {
    const std::string events =
        "p:lockprof_100/p0 /usr/bin/prog:0x0000000000001270\n"
        "r:lockprof_100/r1 /usr/bin/prog:0x0000000000001270\n"
        "p:lockprof_200/p0 /usr/bin/prog:0x0000000000001270\n"
        "p:lockprof_300/p0 /usr/bin/prog:0x0000000000001270\n"
        "p:probe_prog/my_func /usr/bin/prog:0x0000000000001270\n"  // perf probe's: not ours
        "p:lockprof_x/p0 /usr/bin/prog:0x1\n"                      // not a pid
        "garbage\n";
    const std::set<int> alive{200, 300};
    const auto stale =
        stale_definitions(events, 300, [&](int pid) { return alive.count(pid) > 0; });
    // 100 is gone; 300 is this process's pid, whose definitions a process before it left.
    EXPECT_EQ(stale,
              (std::vector<std::string>{"lockprof_100/p0", "lockprof_100/r1", "lockprof_300/p0"}));
}

TEST(TraceUprobes, PathsWithWhitespaceOrQuotesCannotBeDefined) {
    EXPECT_TRUE(definable_path("/usr/lib/x86_64-linux-gnu/libc.so.6"));
    EXPECT_FALSE(definable_path("/opt/my app/bin/server"));
    EXPECT_FALSE(definable_path("/tmp/a\tb"));
    EXPECT_FALSE(definable_path("/tmp/it's"));
    EXPECT_FALSE(definable_path(""));
}

TEST(TraceUprobes, AttributesAreATracepointSampledOnEveryHit) {
    const auto attr = trace_uprobe_attr(1234);
    EXPECT_EQ(attr.type, static_cast<std::uint32_t>(PERF_TYPE_TRACEPOINT));
    EXPECT_EQ(attr.config, 1234u);
    EXPECT_EQ(attr.config1, 0u);  // no pointer the kernel would read again on fork
    EXPECT_EQ(attr.sample_period, 1u);
    EXPECT_TRUE(attr.disabled);
    EXPECT_TRUE(attr.exclude_kernel);
}

// A child process defines probes and ends with or without its destructor: what it defined is
// gone either way, removed by itself or by the next lockprof.
TEST(TraceUprobes, DefinitionsAreRemovedByTheirOwnerOrTheNextLockprof) {
    if (const auto why = test::uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    std::string why;
    if (!TraceUprobes::open(why)) GTEST_SKIP() << "tracefs cannot be used here: " << why;
    // Offset 0 is the file's first byte, not necessarily code: the kernel takes the definition
    // (it checks the instruction when a probe is enabled), which is all this needs.
    const std::string file = std::string(LOCKPROF_SOURCE_DIR) + "/CMakeLists.txt";
    for (const bool destructor : {true, false}) {
        const pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            std::string refused;
            auto probes = TraceUprobes::open(refused);
            const bool defined = probes && probes->define(file, 0, false, refused) > 0 &&
                                 probes->define(file, 0, true, refused) > 0 &&
                                 probes->define("/no/such/file", 0, false, refused) < 0;
            const bool listed =
                defined && probes->listing().find("lockprof_" + std::to_string(getpid()) + "/") !=
                               std::string::npos;
            if (destructor) probes.reset();
            _exit(listed ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's probes";
        auto next = TraceUprobes::open(why);
        ASSERT_TRUE(next) << why;
        EXPECT_EQ(next->listing().find("lockprof_" + std::to_string(child) + "/"),
                  std::string::npos)
            << (destructor ? "left by its owner: " : "left by a lockprof that is gone: ")
            << next->listing();
    }
}

TEST(TraceUprobes, RefusalSaysWhichProbe) {
    if (const auto why = test::uprobes_unavailable(); !why.empty()) GTEST_SKIP() << why;
    std::string why;
    auto probes = TraceUprobes::open(why);
    if (!probes) GTEST_SKIP() << "tracefs cannot be used here: " << why;
    std::string refused;
    EXPECT_LT(probes->define("/no/such/file", 0x10, false, refused), 0);
    EXPECT_NE(refused.find("tracefs refused the probe /no/such/file:0x10"), std::string::npos)
        << refused;
    EXPECT_LT(probes->define("/tmp/a b", 0x10, false, refused), 0);
    EXPECT_NE(refused.find("whitespace"), std::string::npos) << refused;
}

}  // namespace
}  // namespace lockprof::pmu
