// Locks whose code does not depend on the ISA flavour (the C library's locks, no lock at all)
// are listed and run once, under their bare name: `pthread-spin@lse` would be glibc's
// pthread_spin_lock like `pthread-spin`, yet was refused on CPUs without LSE and listed as if
// it were another lock. Naming a flavour for one is a usage error that says why.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"
#include "lockprof/locks/catalog.hpp"
#include "lockprof/workload/runnable_locks.hpp"
#include "lockprof/workload/plan.hpp"

namespace {

using namespace lockprof;

TEST(FlavourIndependence, GlibcLocksAndTheBaselineAreMarked) {
    EXPECT_TRUE(locks::is_flavour_independent("pthread-spin"));
    EXPECT_TRUE(locks::is_flavour_independent("pthread-mutex"));
    EXPECT_TRUE(locks::is_flavour_independent("pthread-trylock"));
    EXPECT_TRUE(locks::is_flavour_independent("empty"));
    EXPECT_FALSE(locks::is_flavour_independent("tas"));
    EXPECT_FALSE(locks::is_flavour_independent("mcs"));
    for (const char* atomics : {"qspinlock", "osq", "event-mutex"})
        EXPECT_FALSE(locks::is_flavour_independent(atomics)) << atomics;
    EXPECT_FALSE(locks::is_flavour_independent("no-such-lock"));
}

TEST(FlavourIndependence, ListedOnceUnderTheBareName) {
    std::map<std::string, unsigned> entries;
    for (const auto& lock : workload::lock_catalog()) {
        ++entries[lock.algorithm];
        EXPECT_EQ(lock.flavour_independent, locks::is_flavour_independent(lock.algorithm))
            << lock.name;
        if (lock.flavour_independent) {
            EXPECT_EQ(lock.name, lock.algorithm);
            EXPECT_TRUE(lock.flavour.empty()) << lock.name;
            EXPECT_FALSE(lock.needs_lse) << lock.name << " would be refused without LSE";
        }
    }
    for (const char* name : {"pthread-spin", "pthread-mutex", "pthread-trylock", "empty"})
        EXPECT_EQ(entries[name], 1u) << name;
}

TEST(FlavourIndependence, AFlavourSuffixIsAUsageErrorThatSaysWhy) {
    for (const char* name : {"pthread-spin@lse", "pthread-mutex@llsc", "empty@outline"}) {
        workload::RunSpec spec;
        spec.locks = {name};
        spec.threads = {1};
        spec.acquires_per_thread = 10;
        try {
            workload::make_plan(spec, workload::Calibration{1.0, 1.0});
            ADD_FAILURE() << name << " was planned";
        } catch (const UsageError& e) {
            const std::string message = e.what();
            EXPECT_NE(message.find("does not depend on the ISA flavour"), std::string::npos)
                << message;
            const std::string bare = std::string(name).substr(0, std::string(name).find('@'));
            EXPECT_NE(message.find("'" + bare + "'"), std::string::npos) << message;
            EXPECT_EQ(e.exit_code(), 2);
        }
    }
    EXPECT_NE(workload::find_lock("pthread-spin"), nullptr);
    EXPECT_EQ(workload::find_lock("tas@no-such-flavour"), nullptr);
}

}  // namespace
