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

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/common/error.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "support/sanitizers.hpp"

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
    // The defaults: none of the known slow paths is in this binary alone, except where clang
    // linked its TSan runtime into it: the runtime defines pthread_spin_lock (its interceptor),
    // and that is all the search may find.
#if defined(LOCKPROF_TEST_TSAN) && defined(__clang__)
    for (const auto& probe : plan_spin({}, {self}).probes)
        EXPECT_EQ(probe.function, "pthread_spin_lock") << "a known slow path in this binary";
#else
    EXPECT_THROW(plan_spin({}, {self}), UsageError);
#endif
}

TEST(SpinBinaries, ExecutableFirstThenEachFileOnce) {
    std::vector<measure::MappedModule> modules(4);
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

// s_lock probed in /x, one call recorded (entry and return) of `kernel_entries` counted.
SpinRecording one_recorded_call(std::uint64_t kernel_entries) {
    SpinRecording rec;
    SpinProbe probe;
    probe.function = "s_lock";
    probe.path = "/x";
    rec.probes.push_back(probe);
    rec.kernel_entries = {kernel_entries};
    rec.hits = {entry(1, 10, 1, 0, ""), ret(1, 20)};
    return rec;
}

TEST(SpinAnalysis, LostRecordsAreSaid) {
    SpinRecording rec = one_recorded_call(5);
    rec.hits[0].file.clear();
    rec.lost = 8;  // the kernel's PERF_RECORD_LOST counts, entries and returns together
    const auto p = analyse_spin(rec, nullptr);
    ASSERT_EQ(p.sites.size(), 1u);
    EXPECT_EQ(p.sites[0].site, "[unknown caller]");
    // Both figures, in the words tests of whole recordings read (CliRecordIntegrity).
    ASSERT_EQ(p.notes.size(), 2u) << fmt::format("{}", p.notes);
    EXPECT_NE(p.notes[0].find("the kernel counted 5 entries, 1 were recorded (4 lost to full "
                              "buffers"),
              std::string::npos)
        << p.notes[0];
    EXPECT_NE(p.notes[1].find("spin: 8 probe records were lost"), std::string::npos) << p.notes[1];
}

// A drain that found a buffer full and records that could not be read are said too: the first
// is why the lost count can be lower than the entries missing (CliRecordIntegrity reads it),
// the second a disagreement between the kernel and lockprof that must not pass in silence.
TEST(SpinAnalysis, FullBuffersAndUnreadableRecordsAreSaid) {
    SpinRecording rec = one_recorded_call(1);
    rec.found_full = 3;
    rec.unreadable = 2;
    const auto p = analyse_spin(rec, nullptr);
    ASSERT_EQ(p.notes.size(), 2u) << fmt::format("{}", p.notes);
    EXPECT_NE(p.notes[0].find("spin: the probe buffers were found full 3 times"), std::string::npos)
        << p.notes[0];
    EXPECT_NE(p.notes[1].find("spin: 2 probe records could not be read"), std::string::npos)
        << p.notes[1];
    rec.found_full = rec.unreadable = 0;
    EXPECT_TRUE(analyse_spin(rec, nullptr).notes.empty());
}

// s_lock's result is its sleeps (perform_spin_delay's pg_usleep calls): summed per site and
// function over the timed entries; a function whose result means nothing has no sleeps.
TEST(SpinAnalysis, SLockResultsAreSummedAsSleeps) {
    SpinRecording rec;
    SpinProbe s_lock;
    s_lock.function = "s_lock";
    s_lock.arguments = SpinArguments::pg_s_lock;
    s_lock.returns = SpinReturns::pg_delays;
    SpinProbe plain;
    plain.function = "lock_slow_path";
    rec.probes = {s_lock, plain};
    auto returning = [](std::uint32_t tid, std::uint64_t t, std::uint64_t value) {
        SpinHit h = ret(tid, t);
        h.return_value = value;
        return h;
    };
    SpinHit other = entry(3, 10, 0xc0, 0, "");
    other.probe = 1;
    other.file.clear();
    SpinHit other_ret = returning(3, 20, 7);
    other_ret.probe = 1;
    rec.hits = {entry(1, 100, 0xa0, 1234, "XLogGetLastRemovedSegno"), returning(1, 200, 3),
                entry(1, 300, 0xa0, 1234, "XLogGetLastRemovedSegno"),
                // The upper half of the register is not s_lock's int.
                returning(1, 400, 0xffffffff00000002ull), other, other_ret};
    const auto p = analyse_spin(rec, nullptr);
    ASSERT_EQ(p.sites.size(), 2u);
    const auto& pg = p.sites[0].function == "s_lock" ? p.sites[0] : p.sites[1];
    const auto& mine = p.sites[0].function == "s_lock" ? p.sites[1] : p.sites[0];
    EXPECT_EQ(pg.sleeps, std::optional<std::uint64_t>(5));
    EXPECT_EQ(mine.sleeps, std::nullopt);
    EXPECT_EQ(p.functions[0].sleeps, std::optional<std::uint64_t>(5));
    EXPECT_EQ(p.functions[1].sleeps, std::nullopt);
    EXPECT_EQ(p.sleeps, std::optional<std::uint64_t>(5));
}

TEST(SpinAnalysis, FoldedStacksWeighSlowPathTimeByCallSite) {
    SpinProfile p;
    SpinSite a;
    a.function = "s_lock";
    a.site = "xlog.c:1234 XLogGetLastRemovedSegno";
    a.caller = "XLogGetLastRemovedSegno";
    a.total_ns = 800.4;
    SpinSite b;
    b.function = "lock_slow_path";
    b.site = "[unknown caller]";
    b.total_ns = 50;
    p.sites = {a, b};
    const auto folded = spin_folded(p);
    EXPECT_EQ(exporting::to_folded_text(folded),
              "XLogGetLastRemovedSegno;s_lock at xlog.c:1234 XLogGetLastRemovedSegno 800\n"
              "[unknown caller];lock_slow_path at [unknown caller] 50\n");
}

}  // namespace

// Functions of this binary whose addresses stand for a sampled entry's callers.
extern "C" [[gnu::noinline]] int spin_test_caller() {
    asm volatile("" ::: "memory");
    return 1;
}
extern "C" [[gnu::noinline]] int spin_test_outer() {
    asm volatile("" ::: "memory");
    return 2;
}
extern "C" [[gnu::noinline]] int spin_test_other() {
    asm volatile("" ::: "memory");
    return 3;
}

namespace {

// --call-graph dwarf: stack hits are not entries; each goes to the site its entry is at, and
// the folded stacks split the site's time over its stacks by their samples.
TEST(SpinAnalysis, SampledStacksGoToTheirSitesAndSplitItsTime) {
    SpinRecording rec;
    SpinProbe probe;
    probe.function = "s_lock";
    probe.arguments = SpinArguments::pg_s_lock;
    rec.probes.push_back(probe);
    rec.kernel_entries = {3};
    rec.stack_size = 8192;
    // The return addresses: one past the start of each function, read as "in it".
    const auto in = [](int (*f)()) { return reinterpret_cast<std::uint64_t>(f) + 1; };
    auto stack = [&](std::uint64_t t, int line, std::vector<std::uint64_t> chain) {
        SpinHit h = entry(1, t, 0xa0, line, "XLogGetLastRemovedSegno");
        h.is_stack = true;
        h.callchain = std::move(chain);
        return h;
    };
    rec.hits = {entry(1, 100, 0xa0, 1234, "XLogGetLastRemovedSegno"),
                stack(100, 1234, {in(spin_test_caller), in(spin_test_outer)}), ret(1, 200),
                entry(1, 300, 0xa0, 1234, "XLogGetLastRemovedSegno"),
                stack(300, 1234, {in(spin_test_caller), in(spin_test_outer)}), ret(1, 500),
                entry(1, 600, 0xa0, 1234, "XLogGetLastRemovedSegno"),
                stack(600, 1234, {in(spin_test_caller), in(spin_test_other)}), ret(1, 900),
                // A stack whose entry was lost: no site of its own.
                stack(1000, 77, {in(spin_test_caller)})};
    const symbols::SymbolResolver resolver(symbols::process_modules());
    const auto p = analyse_spin(rec, [&](std::uint32_t) { return &resolver; });
    EXPECT_EQ(p.entries, 3u);  // the stacks added none
    EXPECT_DOUBLE_EQ(p.total_ns, 600);
    EXPECT_EQ(p.stack_samples, 3u);
    EXPECT_EQ(p.stack_size, 8192u);
    ASSERT_EQ(p.sites.size(), 1u);
    const auto& site = p.sites[0];
    ASSERT_EQ(site.stacks.size(), 2u);
    EXPECT_EQ(site.stacks[0].frames,
              (std::vector<std::string>{"spin_test_outer", "spin_test_caller"}));
    EXPECT_EQ(site.stacks[0].samples, 2u);
    EXPECT_EQ(site.stacks[1].frames,
              (std::vector<std::string>{"spin_test_other", "spin_test_caller"}));
    bool unmatched = false;
    for (const auto& n : p.notes) unmatched |= n.find("spin: 1 stacks had no recorded entry") == 0;
    EXPECT_TRUE(unmatched) << fmt::format("{}", fmt::join(p.notes, "\n"));
    EXPECT_EQ(exporting::to_folded_text(spin_folded(p)),
              "spin_test_other;spin_test_caller;s_lock at xlog.c:1234 XLogGetLastRemovedSegno "
              "200\n"
              "spin_test_outer;spin_test_caller;s_lock at xlog.c:1234 XLogGetLastRemovedSegno "
              "400\n");
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
