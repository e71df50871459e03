// Golden tests of `lockprof list-locks` and of naming locks: the PostgreSQL variants cite their
// release, flavour-independent locks exist once, and a flavour suffix on one is a usage error.
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

TEST(CliListLocks, AFlavourOnAFlavourIndependentLockIsAUsageError) {
    const auto r = run_lockprof({"--lock=pthread-spin@lse", "--threads=1", "--duration=10ms"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("pthread-spin does not depend on the ISA flavour"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("use 'pthread-spin'"), std::string::npos) << r.err;
}

TEST(CliListLocks, PostgresVariantRunsWithItsReleasesDelay) {
    const auto r = run_lockprof(
        {"--lock=pg13-slock,pg18-slock", "--threads=2", "--duration=30ms", "--trials=1"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("pg13-slock"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("pg18-slock"), std::string::npos) << r.out;
}

}  // namespace
