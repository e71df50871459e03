// record --spin's table of known slow paths, the search for functions in binaries, and the
// pairing of entries with returns into call sites.
#include "lockprof/record/spin.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "lockprof/common/error.hpp"
#include "lockprof/symbols/resolver.hpp"

extern "C" __attribute__((noinline, used)) int lockprof_spin_test_target(int x) {
    asm volatile("" ::: "memory");
    return x * 2;
}

namespace lockprof::record {
namespace {

TEST(SpinTable, KnownSlowPathsAreUniqueAndDescribed) {
    std::set<std::string> names;
    for (const auto& k : known_slow_paths()) {
        EXPECT_TRUE(names.insert(k.function).second) << k.function;
        EXPECT_NE(std::string(k.meaning), "");
        EXPECT_EQ(find_slow_path(k.function), &k);
    }
    ASSERT_NE(find_slow_path("s_lock"), nullptr);
    EXPECT_EQ(find_slow_path("s_lock")->arguments, SpinArguments::pg_s_lock);
    ASSERT_NE(find_slow_path("pthread_spin_lock"), nullptr);
    EXPECT_EQ(find_slow_path("pthread_spin_lock")->arguments, SpinArguments::lock_only);
    EXPECT_EQ(find_slow_path("LWLockAcquire"), nullptr);
}

TEST(SpinPlan, FindsRequestedFunctionsAndNamesWhatWasSearched) {
    const std::string self = std::filesystem::canonical("/proc/self/exe").string();
    const auto plan = plan_spin({"lockprof_spin_test_target"}, {self});
    ASSERT_EQ(plan.probes.size(), 1u);
    EXPECT_EQ(plan.probes[0].path, self);
    EXPECT_EQ(plan.probes[0].arguments, SpinArguments::lock_only);
    EXPECT_GT(plan.probes[0].file_offset, 0u);
    try {
        plan_spin({"no_such_spin_function"}, {self, "/nonexistent"});
        FAIL() << "no error";
    } catch (const UsageError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("--spin: no function no_such_spin_function"), std::string::npos);
        EXPECT_NE(what.find("searched 1: " + self + ")"), std::string::npos) << what;
    }
    // The defaults: none of the known slow paths is in this binary alone.
    EXPECT_THROW(plan_spin({}, {self}), UsageError);
}

TEST(SpinBinaries, ExecutableFirstThenEachFileOnce) {
    std::vector<profiling::MappedModule> modules(4);
    modules[0].path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    modules[1].path = "/usr/bin/postgres";
    modules[2].path = "[vdso]";
    modules[3].path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    EXPECT_EQ(
        spin_binaries("/usr/bin/postgres", modules),
        (std::vector<std::string>{"/usr/bin/postgres", "/usr/lib/x86_64-linux-gnu/libc.so.6"}));
}

SpinHit entry(std::uint32_t tid, std::uint64_t t, std::uint64_t lock, int line, std::string func) {
    SpinHit h;
    h.pid = 10;
    h.tid = tid;
    h.time_ns = t;
    h.lock = lock;
    h.file = "../src/backend/access/transam/xlog.c";
    h.line = line;
    h.func = std::move(func);
    return h;
}
SpinHit ret(std::uint32_t tid, std::uint64_t t) {
    SpinHit h;
    h.pid = 10;
    h.tid = tid;
    h.time_ns = t;
    h.is_return = true;
    return h;
}

TEST(SpinAnalysis, PairsPerThreadAndGroupsByCallSite) {
    SpinRecording rec;
    SpinProbe probe;
    probe.function = "s_lock";
    probe.path = "/usr/bin/postgres";
    probe.arguments = SpinArguments::pg_s_lock;
    rec.probes.push_back(probe);
    rec.kernel_entries = {4};
    // Two threads interleaved; the hits are out of order as per-CPU buffers give them.
    rec.hits = {ret(2, 1600),
                entry(1, 1000, 0xa0, 1234, "XLogGetLastRemovedSegno"),
                entry(2, 1100, 0xa0, 1234, "XLogGetLastRemovedSegno"),
                ret(1, 1300),
                entry(1, 2000, 0xb0, 99, "ReserveXLogInsertLocation"),
                ret(1, 2050),
                entry(1, 3000, 0xa0, 1234, "XLogGetLastRemovedSegno")};  // never returned
    const auto p = analyse_spin(rec, nullptr);
    EXPECT_EQ(p.entries, 4u);
    EXPECT_EQ(p.timed, 3u);
    EXPECT_DOUBLE_EQ(p.total_ns, 300 + 500 + 50);
    ASSERT_EQ(p.sites.size(), 2u);
    const auto& hot = p.sites[0];
    EXPECT_EQ(hot.site, "xlog.c:1234 XLogGetLastRemovedSegno");
    EXPECT_EQ(hot.file, "../src/backend/access/transam/xlog.c");
    EXPECT_EQ(hot.entries, 3u);
    EXPECT_EQ(hot.timed, 2u);
    EXPECT_DOUBLE_EQ(hot.total_ns, 800);
    EXPECT_DOUBLE_EQ(hot.mean_ns, 400);
    EXPECT_DOUBLE_EQ(hot.max_ns, 500);
    EXPECT_EQ(hot.locks, (std::vector<std::uint64_t>{0xa0}));
    EXPECT_EQ(hot.processes, 1u);
    EXPECT_EQ(p.sites[1].site, "xlog.c:99 ReserveXLogInsertLocation");
    EXPECT_EQ(p.sites[1].entries, 1u);
    ASSERT_EQ(p.notes.size(), 1u);
    EXPECT_NE(p.notes[0].find("1 of 4 entries had not returned"), std::string::npos);
}

TEST(SpinAnalysis, LostRecordsAreSaid) {
    SpinRecording rec;
    SpinProbe probe;
    probe.function = "s_lock";
    probe.path = "/x";
    rec.probes.push_back(probe);
    rec.kernel_entries = {5};
    rec.hits = {entry(1, 10, 1, 0, ""), ret(1, 20)};
    rec.hits[0].file.clear();
    const auto p = analyse_spin(rec, nullptr);
    ASSERT_EQ(p.sites.size(), 1u);
    EXPECT_EQ(p.sites[0].site, "[unknown caller]");
    ASSERT_EQ(p.notes.size(), 1u);
    EXPECT_NE(p.notes[0].find("the kernel counted 5 entries, 1 were recorded"), std::string::npos)
        << p.notes[0];
}

TEST(SpinStrings, ReadFromTheProcess) {
    static const char kText[] = "xlog.c";
    char byte = 0;
    iovec local{&byte, 1}, remote{const_cast<char*>(kText), 1};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != 1)
        GTEST_SKIP() << "process_vm_readv fails here (" << std::strerror(errno)
                     << "; qemu-user does not implement it)";
    EXPECT_EQ(read_process_string(getpid(), reinterpret_cast<std::uint64_t>(kText)), "xlog.c");
    EXPECT_EQ(read_process_string(getpid(), 0), std::nullopt);
}

TEST(SpinStrings, ReadFromTheMappedFile) {
    // A string literal lives in the executable's read-only data: readable from the file.
    const char* literal = "lockprof-spin-test-literal";
    EXPECT_EQ(
        read_mapped_string(symbols::process_modules(), reinterpret_cast<std::uint64_t>(literal)),
        "lockprof-spin-test-literal");
}

}  // namespace
}  // namespace lockprof::record
