#include "lockprof/workload/plan.hpp"

#include <cmath>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/workload/runnable_locks.hpp"
#include "lockprof/workload/pinning.hpp"

using namespace lockprof;
using namespace lockprof::workload;

namespace {
RunSpec basic() {
    RunSpec spec;
    spec.locks = {"tas", "cas"};
    spec.threads = {1, 2};
    spec.duration_ns = 1000000;
    return spec;
}
Calibration calibration() {
    return {1.0, 1.0};
}
std::string error_of(const RunSpec& spec) {
    try {
        make_plan(spec, calibration());
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST(Plan, OrdersCellsThreadMajorInTheUsersLockOrder) {
    const Plan plan = make_plan(basic(), calibration());
    ASSERT_EQ(plan.cells.size(), 4u);
    EXPECT_EQ(plan.cells[0].lock->name, "tas");
    EXPECT_EQ(plan.cells[0].threads, 1u);
    EXPECT_EQ(plan.cells[1].lock->name, "cas");
    EXPECT_EQ(plan.cells[2].threads, 2u);
}

TEST(Plan, UnknownLockSuggestsAndListsAll) {
    RunSpec spec = basic();
    spec.locks = {"tsa"};
    const std::string e = error_of(spec);
    EXPECT_NE(e.find("unknown lock 'tsa'"), std::string::npos) << e;
    EXPECT_NE(e.find("did you mean 'tas'"), std::string::npos) << e;
    EXPECT_NE(e.find("mcs"), std::string::npos) << e;
}

// The aarch64 flavours (tas@llsc, cas@lse, ...) are known in every build: where they are not
// compiled, a name with one says where they exist instead of "unknown lock" (issue 30).
TEST(Plan, AnAarch64FlavourNamesWhereItExists) {
    std::set<std::string> built;
    for (const auto& lock : lock_catalog())
        if (!lock.flavour.empty()) built.insert(lock.flavour);
    if (!built.empty()) {
        // An aarch64 build: its flavours are exactly the ones the message names.
        EXPECT_EQ(built, std::set<std::string>(kAarch64Flavours.begin(), kAarch64Flavours.end()));
        EXPECT_NE(find_lock("cas@llsc"), nullptr);
        GTEST_SKIP() << "an aarch64 build: every flavour exists here";
    }
    for (const std::string name : {"cas@llsc", "tas@lse", "ticket@outline"}) {
        RunSpec spec = basic();
        spec.locks = {name};
        const std::string e = error_of(spec);
        const std::string algorithm = name.substr(0, name.find('@'));
        EXPECT_EQ(e.find("unknown lock"), std::string::npos) << e;
        EXPECT_NE(e.find("lock '" + name +
                         "': the llsc, lse, outline flavours exist only in "
                         "aarch64 builds"),
                  std::string::npos)
            << e;
        EXPECT_NE(e.find(std::string("this build is for ") + std::string(arch::kArchName)),
                  std::string::npos)
            << e;
        EXPECT_NE(e.find("use '" + algorithm + "'"), std::string::npos) << e;
    }
    // Not an algorithm either: still the flavour's story, pointing at the list.
    try {
        static_cast<void>(find_lock("tsa@llsc"));
        ADD_FAILURE() << "tsa@llsc was resolved";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("use a name `lockprof list-locks` shows"),
                  std::string::npos)
            << e.what();
    }
    // A suffix that is no flavour anywhere stays an unknown lock.
    EXPECT_EQ(find_lock("tas@no-such-flavour"), nullptr);
}

TEST(Plan, RefusesDelaysALockDoesNotAccept) {
    RunSpec spec = basic();
    spec.locks = {"pthread-mutex"};
    spec.delay = arch::default_delay();
    if (arch::default_delay() == arch::Delay::none) GTEST_SKIP() << "no non-trivial delay here";
    EXPECT_NE(error_of(spec).find("does not accept"), std::string::npos);
    spec.delay = arch::Delay::wfe;
    if (!arch::delay_available(arch::Delay::wfe)) {
        EXPECT_NE(error_of(spec).find("does not exist on"), std::string::npos);
    }
}

TEST(Plan, TrialsCarryTheWorkInNanoseconds) {
    RunSpec spec = basic();
    spec.work.critical_ns = 100;
    spec.work.parallel_ns = 50;
    Plan plan = make_plan(spec, {2.0, 1.0});
    const TrialSpec trial = plan.trial_spec(plan.cells[0], 0);
    EXPECT_EQ(trial.work.critical_ns, 100u);  // each worker calibrates it (calibrate_work)
    EXPECT_EQ(trial.work.parallel_ns, 50u);
}

TEST(Plan, CalibrateWorkTurnsNanosecondsIntoTripsAndTimesThem) {
    WorkSpec work;
    work.critical_ns = 2000;
    const WorkCalibration c = calibrate_work(work);
    EXPECT_GT(c.burn_iterations_per_ns, 0);
    EXPECT_EQ(c.critical_iterations,
              static_cast<std::uint64_t>(std::llround(2000 * c.burn_iterations_per_ns)));
    EXPECT_EQ(c.parallel_iterations, 0u);
    EXPECT_EQ(c.parallel_ns, 0);  // no work: nothing timed
    // The measured duration of the calibrated work: near what was asked for (wide bounds, the
    // best of several runs; not a timing assertion).
    EXPECT_GT(c.critical_ns, 500);
    EXPECT_LT(c.critical_ns, 8000);
}

TEST(Pinning, CompactScatterAndLists) {
    // Two packages, two cores each, two SMT siblings per core.
    std::vector<CpuTopology> cpus = {{0, 0, 0}, {1, 1, 0}, {2, 0, 1}, {3, 1, 1},
                                     {4, 0, 0}, {5, 1, 0}, {6, 0, 1}, {7, 1, 1}};
    PinSpec pin;
    pin.mode = PinMode::compact;
    EXPECT_EQ(assign_cpus(pin, 3, cpus), (std::vector<int>{0, 1, 2}));
    pin.mode = PinMode::scatter;
    // First one CPU per (package, core) alternating packages, then the SMT siblings.
    EXPECT_EQ(assign_cpus(pin, 5, cpus), (std::vector<int>{0, 2, 1, 3, 4}));
    pin.mode = PinMode::list;
    pin.cpus = {5, 7};
    EXPECT_EQ(assign_cpus(pin, 3, cpus), (std::vector<int>{5, 7, 5}));  // wraps around
    pin.cpus = {42};
    EXPECT_THROW(assign_cpus(pin, 1, cpus), UsageError);
    pin.mode = PinMode::none;
    EXPECT_TRUE(assign_cpus(pin, 4, cpus).empty());
}
