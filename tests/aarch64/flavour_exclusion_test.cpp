// Every lock in every ISA flavour excludes, and @lse flavours are refused (never executed) on
// CPUs without LSE. Runs under qemu-aarch64 -cpu max (LSE) and -cpu cortex-a72 (ARMv8.0, where
// any LSE instruction raises SIGILL): scripts/test-aarch64.sh sets LOCKPROF_EXPECT_LSE to what
// the emulated CPU has, so a wrong HWCAP reading fails instead of silently changing which
// branch the tests take.
//
// Unlike tests/unit/locks (the lock headers compiled into the test, default flavour only),
// these run the catalog's kernels: the code each flavour unit really compiled, through the
// same trial runner and lost-update check as `lockprof` itself.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/locks/catalog.hpp"
#include "lockprof/workload/runnable_locks.hpp"
#include "lockprof/workload/plan.hpp"
#include "lockprof/workload/trial.hpp"

using namespace lockprof;
using namespace lockprof::workload;

namespace {

std::vector<std::string> catalog_names() {
    std::vector<std::string> names;
    for (const auto& lock : lock_catalog()) names.push_back(lock.name);
    return names;
}

// gtest parameter names allow only [A-Za-z0-9_]: "tas@llsc" -> "tas_llsc".
std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
    std::string name = info.param;
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return name;
}

class FlavourExclusion : public ::testing::TestWithParam<std::string> {};

TEST_P(FlavourExclusion, CriticalSectionLosesNoUpdates) {
    const RunnableLock* lock = find_lock(GetParam());
    ASSERT_NE(lock, nullptr);
    if (!lock->excludes) GTEST_SKIP() << lock->name << " is the no-lock baseline";
    if (lock->needs_lse && !arch::cpu_has_lse())
        GTEST_SKIP() << lock->name << " needs LSE, which this CPU lacks; "
                     << "LseFlavour.RefusedWithoutLseRunsWithLse checks the refusal";
    // Two threads on the two cores here: enough to contend (qemu runs guest threads on host
    // threads), few enough that FIFO locks do not crawl when the host preempts a waiter. Done
    // by acquire count, not time, so the check does not depend on the machine's speed.
    constexpr unsigned kThreads = 2;
    constexpr std::uint64_t kAcquires = 3000;
    TrialSpec spec;
    spec.threads = kThreads;
    spec.acquires_per_thread = kAcquires;
    spec.delay = lock->default_delay();
    spec.watchdog_ns = 60'000'000'000;
    RunControl control;
    const TrialOutcome outcome = run_trial(*lock, spec, control);
    std::uint64_t acquires = 0;
    for (const auto& t : outcome.result.threads) acquires += t.acquires;
    EXPECT_EQ(acquires, kThreads * kAcquires) << lock->name;
    EXPECT_EQ(outcome.lost_updates, 0u) << lock->name << ": MUTUAL EXCLUSION FAILED";
    EXPECT_EQ(outcome.overlaps, 0u) << lock->name << ": two holders at once";
    std::printf("[ EXCLUDES ] %-22s delay %-5s %llu acquires, 0 overlaps, 0 lost updates\n",
                lock->name.c_str(), std::string(arch::delay_name(spec.delay)).c_str(),
                static_cast<unsigned long long>(acquires));
}

INSTANTIATE_TEST_SUITE_P(EveryLockEveryFlavour, FlavourExclusion,
                         ::testing::ValuesIn(catalog_names()), param_name);

TEST(LseFlavour, CatalogHasEveryAlgorithmInEveryFlavour) {
    std::map<std::string, std::set<std::string>> flavours;  // algorithm -> flavours
    for (const auto& lock : lock_catalog()) {
        flavours[lock.algorithm].insert(lock.flavour);
        // Only the lse unit is compiled with -march=armv8.1-a; the default build must run on
        // any ARMv8.0 core (Debian's GCC outlines its atomics and picks at run time).
        EXPECT_EQ(lock.needs_lse, lock.flavour == "lse") << lock.name;
        EXPECT_EQ(lock.name,
                  lock.flavour.empty() ? lock.algorithm : lock.algorithm + "@" + lock.flavour);
    }
    ASSERT_FALSE(flavours.empty());
    // Locks whose code is the same in every flavour (glibc's, none) exist once, bare, so none
    // of them is refused without LSE or compared with itself as if it were another lock.
    const std::set<std::string> every{"", "llsc", "lse", "outline"}, bare{""};
    for (const auto& [algorithm, names] : flavours)
        EXPECT_EQ(names, locks::is_flavour_independent(algorithm) ? bare : every) << algorithm;
    for (const char* algorithm : {"pthread-spin", "pthread-mutex", "pthread-trylock", "empty"})
        EXPECT_EQ(flavours[algorithm], bare) << algorithm;
    for (const char* algorithm : {"qspinlock", "osq", "event-mutex"})
        EXPECT_EQ(flavours[algorithm], every) << algorithm;
}

TEST(LseFlavour, HwcapMatchesTheEmulatedCpu) {
    const char* expected = std::getenv("LOCKPROF_EXPECT_LSE");
    if (!expected)
        GTEST_SKIP() << "LOCKPROF_EXPECT_LSE unset: scripts/test-aarch64.sh sets it per qemu -cpu";
    EXPECT_EQ(arch::cpu_has_lse(), std::string(expected) == "1");
    EXPECT_EQ(arch::cpu_identity().has_lse, arch::cpu_has_lse());
}

// The plan is where a run is refused; nothing of an @lse kernel may execute before it.
TEST(LseFlavour, RefusedWithoutLseRunsWithLse) {
    unsigned lse_locks = 0;
    for (const auto& lock : lock_catalog()) {
        if (!lock.needs_lse) continue;
        ++lse_locks;
        RunSpec spec;
        spec.locks = {lock.name};
        spec.threads = {1};
        spec.acquires_per_thread = 100;
        if (arch::cpu_has_lse()) {
            EXPECT_NO_THROW(make_plan(spec, Calibration{1.0, 1.0})) << lock.name;
            continue;
        }
        try {
            make_plan(spec, Calibration{1.0, 1.0});
            ADD_FAILURE() << lock.name << " was planned on a CPU without LSE";
        } catch (const UsageError& e) {
            const std::string message = e.what();
            EXPECT_NE(message.find("needs ARMv8.1 LSE atomics"), std::string::npos) << message;
            EXPECT_NE(message.find(lock.algorithm + "@llsc"), std::string::npos) << message;
            EXPECT_EQ(e.exit_code(), 2);
        }
    }
    EXPECT_GT(lse_locks, 0u);
    std::printf("[ LSE      ] this CPU %s LSE: %u @lse locks %s\n",
                arch::cpu_has_lse() ? "has" : "lacks", lse_locks,
                arch::cpu_has_lse() ? "planned" : "refused with the LSE message");
}

}  // namespace
