// Which of the kernel's event sources is the CPU's core PMU, from sysfs trees built in a temporary
// folder: this x86 VM without a PMU, x86 bare metal (Intel, AMD, hybrid), arm64 servers and
// big.LITTLE boards, and the qemu-system-aarch64 virt guest.
#include "lockprof/pmu/event_sources.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <initializer_list>

using namespace lockprof::pmu;

namespace {

struct FakeSysfs {
    lockprof::test::TempDir dir;
    const std::filesystem::path& root = dir.path;
    // An event source with a `type` file and the given extra files.
    FakeSysfs& add(const std::string& name, std::initializer_list<const char*> files = {}) {
        const auto dir = root / "bus/event_source/devices" / name;
        std::filesystem::create_directories(dir);
        std::ofstream(dir / "type") << "8\n";
        for (const char* f : files) std::ofstream(dir / f) << "0-1\n";
        return *this;
    }
};

std::vector<std::string> names(std::initializer_list<const char*> list) {
    return {list.begin(), list.end()};
}

}  // namespace

TEST(EventSources, VmWithoutPmuHasNoCorePmu) {
    // This development VM: kernel sources and msr only.
    FakeSysfs sysfs;
    for (const char* n : {"breakpoint", "msr", "software", "tracepoint", "uprobe", "kprobe"})
        sysfs.add(n);
    const auto sources = event_sources(sysfs.root);
    ASSERT_EQ(sources.size(), 6u);
    EXPECT_EQ(sources.front().name, "breakpoint");  // sorted
    EXPECT_TRUE(core_pmu_names(sources).empty());
}

TEST(EventSources, X86CorePmus) {
    FakeSysfs intel;
    intel.add("cpu", {"rdpmc"}).add("uncore_imc_0", {"cpumask"}).add("power", {"cpumask"});
    intel.add("cstate_core", {"cpumask"}).add("intel_pt").add("software");
    EXPECT_EQ(registered_core_pmus(intel.root), names({"cpu"}));

    FakeSysfs amd;
    amd.add("cpu").add("ibs_op", {"caps"}).add("ibs_fetch").add("amd_df", {"cpumask"});
    amd.add("amd_l3", {"cpumask"}).add("amd_iommu_0").add("msr");
    EXPECT_EQ(registered_core_pmus(amd.root), names({"cpu"}));

    FakeSysfs hybrid;
    hybrid.add("cpu_atom", {"cpus"}).add("cpu_core", {"cpus"}).add("software");
    EXPECT_EQ(registered_core_pmus(hybrid.root), names({"cpu_atom", "cpu_core"}));
}

TEST(EventSources, Arm64CorePmus) {
    // qemu-system-aarch64 -M virt -cpu neoverse-n1: the generic PMUv3 driver.
    FakeSysfs guest;
    guest.add("armv8_pmuv3_0", {"cpus"}).add("software").add("tracepoint").add("breakpoint");
    EXPECT_EQ(registered_core_pmus(guest.root), names({"armv8_pmuv3_0"}));

    // A Neoverse server with SPE, CMN interconnect and SMMU PMUs beside the core PMU.
    FakeSysfs server;
    server.add("armv8_neoverse_n1", {"cpus"}).add("arm_spe_0", {"cpumask"});
    server.add("arm_cmn_0", {"cpumask"}).add("smmuv3_pmcg_3f000", {"cpumask"}).add("uprobe");
    EXPECT_EQ(registered_core_pmus(server.root), names({"armv8_neoverse_n1"}));

    // big.LITTLE: one core PMU per core type, with the DSU beside them.
    FakeSysfs board;
    board.add("armv8_cortex_a53", {"cpus"}).add("armv8_cortex_a72", {"cpus"});
    board.add("arm_dsu_0", {"cpumask", "associated_cpus"});
    EXPECT_EQ(registered_core_pmus(board.root), names({"armv8_cortex_a53", "armv8_cortex_a72"}));

    FakeSysfs apple;
    apple.add("apple_firestorm_pmu", {"cpus"}).add("apple_icestorm_pmu", {"cpus"});
    EXPECT_EQ(registered_core_pmus(apple.root).size(), 2u);
}

TEST(EventSources, UnknownNamesDecidedByTheirCpuFiles) {
    FakeSysfs sysfs;
    sysfs.add("riscv_pmu", {"cpus"}).add("some_uncore", {"cpus", "cpumask"}).add("odd");
    EXPECT_EQ(registered_core_pmus(sysfs.root), names({"riscv_pmu"}));
    EXPECT_FALSE(is_core_pmu({"software", true, false}));
    EXPECT_FALSE(is_core_pmu({"arm_spe_0", true, false}));
}

TEST(EventSources, MissingSysfsIsNoSources) {
    EXPECT_TRUE(event_sources("/nonexistent-lockprof-sysfs").empty());
    EXPECT_TRUE(registered_core_pmus("/nonexistent-lockprof-sysfs").empty());
}
