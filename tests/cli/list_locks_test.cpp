// Golden tests of `lockprof list-locks` and of naming locks: the PostgreSQL variants cite their
// release, flavour-independent locks exist once, and a flavour suffix on one is a usage error.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/cli_runner.hpp"

using lockprof::test::run_lockprof;

namespace {

// The table row of `lock`: its line, up to the newline.
std::string row(const std::string& out, const std::string& lock) {
    const std::size_t at = out.find("\n" + lock + " ");
    if (at == std::string::npos) return "";
    return out.substr(at + 1, out.find('\n', at + 1) - at - 1);
}

TEST(CliListLocks, PostgresVariantsCiteTheirRelease) {
    const auto r = run_lockprof({"list-locks"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(row(r.out, "pg13-slock").find("PostgreSQL 13"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "pg15-slock").find("PostgreSQL 15.0-15.19"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "pg15-slock").find("17.0-17.11"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "pg18-slock").find("PostgreSQL 18.4, 17.12, 15.20"), std::string::npos)
        << r.out;
    EXPECT_NE(row(r.out, "pg-slock").find("pg18-slock"), std::string::npos) << r.out;
    // Release numbers, not years: "before 2020" / "since 2020" said something PostgreSQL's
    // release branches do not.
    EXPECT_EQ(r.out.find("2020 PostgreSQL"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("before 2020"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("since 2020"), std::string::npos) << r.out;
}

TEST(CliListLocks, FlavourIndependentLocksAreListedOnce) {
    const auto r = run_lockprof({"list-locks"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* lock : {"pthread-spin", "pthread-mutex", "pthread-trylock", "empty"}) {
        EXPECT_NE(row(r.out, lock), "") << lock << " missing:\n" << r.out;
        EXPECT_EQ(r.out.find(std::string("\n") + lock + "@"), std::string::npos) << r.out;
    }
}

// The locks of issue 20 name the code they were written from.
TEST(CliListLocks, KernelAndInnodbLocksCiteTheirSources) {
    const auto r = run_lockprof({"list-locks"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(row(r.out, "qspinlock").find("kernel/locking/qspinlock.c"), std::string::npos)
        << r.out;
    EXPECT_NE(row(r.out, "osq").find("kernel/locking/osq_lock.c"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "osq").find("need_resched"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "event-mutex").find("InnoDB TTASEventMutex"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "pthread-trylock").find("pthread_mutex_trylock"), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("\npthread-trylock@"), std::string::npos) << r.out;
}

// Their acquire paths disassemble like every other lock's (acquire_probe).
TEST(CliListLocks, NewLocksShowTheirAcquirePath) {
    for (const char* lock : {"qspinlock", "osq", "event-mutex", "pthread-trylock"}) {
        const auto r = run_lockprof({"list-locks", "--disasm", lock});
        ASSERT_EQ(r.exit_code, 0) << lock << ": " << r.err;
        EXPECT_NE(r.out.find(std::string(lock) + " (delay "), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("acquire path"), std::string::npos) << lock << ":\n" << r.out;
        EXPECT_NE(r.out.find("acquire_probe"), std::string::npos) << lock << ":\n" << r.out;
    }
}

// The reader-writer locks cite their algorithms and are marked as having a shared mode; the
// non-lock entries say what one acquire is.
TEST(CliListLocks, ReaderWriterAndReferenceCountEntriesSayWhatTheyAre) {
    const auto r = run_lockprof({"list-locks"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(row(r.out, "rw-cas").find("Mellor-Crummey & Scott 1991"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "spin-rw").find("spin_rw_mutex"), std::string::npos) << r.out;
    for (const char* lock : {"rw-cas", "spin-rw"})
        EXPECT_NE(row(r.out, lock).find("[shared mode: --read-fraction]"), std::string::npos)
            << r.out;
    EXPECT_EQ(row(r.out, "tas").find("shared mode"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "lockref").find("acquire = get, release = put"), std::string::npos)
        << r.out;
    EXPECT_NE(row(r.out, "lockref").find("lib/lockref.c"), std::string::npos) << r.out;
    EXPECT_NE(row(r.out, "refcount").find("acquire = atomic increment"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("one \"acquire\" is a get"), std::string::npos) << r.out;
}

TEST(CliListLocks, ReaderWriterAndReferenceCountEntriesShowTheirAcquirePath) {
    for (const char* lock : {"rw-cas", "spin-rw", "lockref", "refcount"}) {
        const auto r = run_lockprof({"list-locks", "--disasm", lock});
        ASSERT_EQ(r.exit_code, 0) << lock << ": " << r.err;
        EXPECT_NE(r.out.find(std::string(lock) + " (delay "), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("acquire path"), std::string::npos) << lock << ":\n" << r.out;
        EXPECT_NE(r.out.find("acquire_probe"), std::string::npos) << lock << ":\n" << r.out;
    }
}

// The section of `list-locks --disasm` output that belongs to `lock` ("tas (delay "...), up to
// the blank line that ends it.
std::string disasm_section(const std::string& out, const std::string& lock) {
    const std::size_t at = out.find("\n" + lock + " (delay ");
    const std::size_t start = out.rfind(lock + " (delay ", 0) == 0 ? 0 : at;
    if (start == std::string::npos) return "";
    const std::size_t from = start == 0 ? 0 : start + 1;
    return out.substr(from, out.find("\n\n", from) - from);
}

// The atomics its header line names: "xchg, lock cmpxchg".
std::string listed_atomics(const std::string& section) {
    const std::size_t at = section.find("atomics: ");
    if (at == std::string::npos) return "<none listed>";
    return section.substr(at + 9, section.find('\n', at) - at - 9);
}

// Every lock of the catalog, each with its default delay: the acquire path (and the lock
// functions it calls) holds the atomic read-modify-write its algorithm is built on. On x86: an
// exchange for the test-and-set and queue locks, a lock-prefixed compare-and-swap for the CAS
// family, a lock-prefixed add for the ticket and the reference count; the C library's locks are
// a call into glibc, `empty` has none. (aarch64 per flavour: tests/aarch64/flavour_disasm_test.)
TEST(CliListLocks, EveryLocksAcquirePathHoldsItsAtomic) {
#if !defined(__x86_64__)
    GTEST_SKIP() << "x86 mnemonics; tests/aarch64/flavour_disasm_test.cpp checks aarch64";
#endif
    const auto r = run_lockprof({"list-locks", "--disasm"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    struct Expected {
        const char* lock;
        std::vector<const char*> atomics;  // each must be among the section's atomics
        const char* call = nullptr;        // or, for glibc's locks, the function called
    };
    const std::vector<Expected> catalog = {
        {"tas", {"xchg"}},
        {"ttas", {"xchg"}},
        {"cas", {"lock cmpxchg"}},
        {"ttas-cas", {"lock cmpxchg"}},
        {"tas-backoff", {"xchg"}},
        {"ttas-backoff", {"xchg"}},
        {"ticket", {"lock xadd"}},
        {"mcs", {"xchg"}},
        {"clh", {"xchg"}},
        {"pg-slock", {"xchg"}},
        {"pg13-slock", {"xchg"}},
        {"pg15-slock", {"xchg"}},
        {"pg18-slock", {"xchg"}},
        {"pthread-spin", {}, "pthread_spin_lock"},
        {"pthread-mutex", {}, "pthread_mutex_lock"},
        {"empty", {}},
        // The fast path's compare-and-swap of the locked byte; the slow path (out of line,
        // shown as called) sets the pending bit and exchanges the tail.
        {"qspinlock", {"lock cmpxchg", "xchg"}},
        // The tail exchange that queues the node, the compare-and-swaps of unqueue.
        {"osq", {"xchg", "lock cmpxchg"}},
        {"pthread-trylock", {}, "pthread_mutex_trylock"},
        {"event-mutex", {"lock cmpxchg"}},
        {"rw-cas", {"lock cmpxchg"}},
        // The writer's compare-and-swap, and the writer-pending bit set with a locked or.
        {"spin-rw", {"lock cmpxchg", "lock or"}},
        {"lockref", {"lock cmpxchg"}},
        {"refcount", {"lock add"}},
    };
    for (const auto& e : catalog) {
        SCOPED_TRACE(e.lock);
        const std::string s = disasm_section(r.out, e.lock);
        ASSERT_FALSE(s.empty()) << "no section for " << e.lock << " in:\n" << r.out;
        const std::string found = listed_atomics(s);
        for (const char* atomic : e.atomics)
            EXPECT_NE(found.find(atomic), std::string::npos)
                << e.lock << ": atomics '" << found << "' lack " << atomic << ":\n"
                << s;
        if (e.call) {
            // Through the PLT; in a clang ASan build, whose runtime is linked in, the call
            // reaches the sanitizer's interceptor of the same function directly.
            bool reached = s.find(std::string("<") + e.call + "@plt>") != std::string::npos;
            if (lockprof::test::lockprof_bin_has_asan())
                reached = reached || s.find(std::string("<__interceptor_") + e.call + ">") !=
                                         std::string::npos;
            EXPECT_TRUE(reached) << s;
            EXPECT_EQ(found, "none") << s;
        }
        if (e.atomics.empty() && !e.call) {
            EXPECT_EQ(found, "none") << s;
        }
        // Only a memory operand makes xchg atomic: padding (`xchg %ax,%ax`) is not starred.
        std::istringstream lines(s);
        for (std::string line; std::getline(lines, line);) {
            if (line.find("xchg %ax,%ax") != std::string::npos) {
                EXPECT_EQ(line.rfind("  *", 0), std::string::npos) << line;
            }
        }
    }
    // Every lock of the catalog is in the table above, so a new lock needs an expectation.
    std::size_t sections = 0;
    for (std::size_t at = r.out.find(" (delay "); at != std::string::npos;
         at = r.out.find(" (delay ", at + 1))
        ++sections;
    EXPECT_EQ(sections, catalog.size()) << r.out;
}

// The slow paths kept out of line are shown after the acquire path, as called lock functions.
TEST(CliListLocks, OutOfLineSlowPathsAreShown) {
    const auto r = run_lockprof({"list-locks", "--disasm", "qspinlock", "--delay", "none"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("qspinlock (delay none): acquire path, "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" it calls; atomics: lock cmpxchg, xchg"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  called: lockprof::locks::"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("::slow_path("), std::string::npos) << r.out;
}

TEST(CliListLocks, AFlavourOnAFlavourIndependentLockIsAUsageError) {
    const auto r = run_lockprof({"--lock=pthread-spin@lse", "--threads=1", "--duration=10ms"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("pthread-spin does not depend on the ISA flavour"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("use 'pthread-spin'"), std::string::npos) << r.err;
}

// Outside an aarch64 build, an aarch64 flavour is not an "unknown lock": every place that
// resolves a lock name says where the flavours exist and what to use instead (issue 30).
TEST(CliListLocks, AnAarch64FlavourElsewhereSaysWhereItExists) {
#if defined(__aarch64__)
    GTEST_SKIP() << "an aarch64 build: cas@llsc exists here";
#endif
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"list-locks", "--disasm", "cas@llsc"},
             {"--lock", "cas@llsc", "--threads=1", "--duration=10ms"},
             {"--lock=tas,cas@llsc", "--threads=1", "--duration=10ms"}}) {
        const auto r = run_lockprof(args);
        EXPECT_EQ(r.exit_code, 2) << args[1] << ": " << r.err;
        EXPECT_EQ(lockprof::test::count_lines(r.err), 1) << r.err;
        EXPECT_EQ(r.err.find("unknown lock"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("lock 'cas@llsc': the llsc, lse, outline flavours exist only in "
                             "aarch64 builds"),
                  std::string::npos)
            << r.err;
        EXPECT_NE(r.err.find("use 'cas'"), std::string::npos) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
}

TEST(CliListLocks, PostgresVariantRunsWithItsReleasesDelay) {
    const auto r = run_lockprof(
        {"--lock=pg13-slock,pg18-slock", "--threads=2", "--duration=30ms", "--trials=1"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("pg13-slock"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("pg18-slock"), std::string::npos) << r.out;
}

}  // namespace
