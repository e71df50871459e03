// Delay policy names and the CPU identity read from a fake /proc and /sys (cpu_identity's root
// parameter): the first processor's fields, ARM MIDR numbers and part names, SPE.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <stdlib.h>

#include "lockprof/arch/cpu.hpp"
#include "support/temp_dir.hpp"

namespace lockprof::arch {
namespace {

TEST(Delay, NamesAreDistinctAndStable) {
    EXPECT_EQ(delay_name(Delay::none), "none");
    EXPECT_EQ(delay_name(Delay::pause), "pause");
    EXPECT_EQ(delay_name(Delay::yield), "yield");
    EXPECT_EQ(delay_name(Delay::isb), "isb");
    EXPECT_EQ(delay_name(Delay::wfe), "wfe");
    std::set<std::string_view> names;
    for (Delay d : kAllDelays) names.insert(delay_name(d));
    EXPECT_EQ(names.size(), std::size(kAllDelays));
    EXPECT_EQ(names.count("?"), 0u);
}

TEST(Delay, DefaultIsAvailableAndPauseIsX86Only) {
    EXPECT_TRUE(delay_available(default_delay()));
    EXPECT_TRUE(delay_available(Delay::none));
    const bool x86 = kArchName == "x86_64";
    EXPECT_EQ(delay_available(Delay::pause), x86);
    EXPECT_EQ(delay_available(Delay::isb), !x86);
    EXPECT_EQ(delay_available(Delay::wfe), !x86);
    EXPECT_EQ(default_delay(), x86 ? Delay::pause : Delay::isb);
}

TEST(ArmPartName, KnownAndUnknownParts) {
    EXPECT_EQ(arm_part_name(0x41, 0xd0c), "Neoverse N1");
    EXPECT_EQ(arm_part_name(0x41, 0xd08), "Cortex-A72");
    EXPECT_EQ(arm_part_name(0xc0, 0xac3), "Ampere One");
    EXPECT_EQ(arm_part_name(0x41, 0xfff), "");
    EXPECT_EQ(arm_part_name(0x48, 0xd0c), "");  // the part number alone does not name it
}

// Both architectures' fields in one file, so the test reads the ones of the build's
// architecture on either; the second processor's values must not win.
const std::string kCpuinfo =
    "processor\t: 0\n"
    "vendor_id\t: FakeVendor\n"
    "model name\t: Fake CPU @ 1.00GHz\n"
    "CPU implementer\t: 0x41\n"
    "CPU variant\t: 0x3\n"
    "CPU part\t: 0xd0c\n"
    "CPU revision\t: 1\n"
    "\n"
    "processor\t: 1\n"
    "vendor_id\t: OtherVendor\n"
    "model name\t: Other CPU\n"
    "CPU implementer\t: 0x48\n"
    "CPU part\t: 0xd01\n";

TEST(CpuIdentity, FirstProcessorFromCpuinfo) {
    test::TempDir fake;
    fake.write("proc/cpuinfo", kCpuinfo);
    const CpuIdentity id = cpu_identity(fake.path.string());
    EXPECT_EQ(id.arch, kArchName);
    EXPECT_FALSE(id.has_spe);
    if (kArchName == "x86_64") {
        EXPECT_EQ(id.vendor, "FakeVendor");
        EXPECT_EQ(id.model_name, "Fake CPU @ 1.00GHz");
        EXPECT_EQ(id.implementer, 0u);
    } else {
        EXPECT_EQ(id.implementer, 0x41u);
        EXPECT_EQ(id.part, 0xd0cu);
        EXPECT_EQ(id.variant, 0x3u);
        EXPECT_EQ(id.revision, 1u);
        EXPECT_EQ(id.vendor, "ARM");
        EXPECT_EQ(id.model_name, "Neoverse N1");
    }
}

TEST(CpuIdentity, UnknownArmPartIsNamedByItsNumbers) {
    if (kArchName != "aarch64") GTEST_SKIP() << "MIDR fields are read on aarch64 only";
    test::TempDir fake;
    fake.write("proc/cpuinfo", "CPU implementer\t: 0x99\nCPU part\t: 0x123\n");
    const CpuIdentity id = cpu_identity(fake.path.string());
    EXPECT_EQ(id.vendor, "unknown implementer");
    EXPECT_EQ(id.model_name, "unknown ARM part 0x99/0x123");
}

TEST(CpuIdentity, SpeFromItsSysfsPmu) {
    test::TempDir fake;
    fake.write("proc/cpuinfo", kCpuinfo);
    fake.write("sys/bus/event_source/devices/arm_spe_0/type", "8\n");
    EXPECT_TRUE(cpu_identity(fake.path.string()).has_spe);
}

TEST(CpuIdentity, MissingCpuinfoLeavesNamesEmpty) {
    test::TempDir fake;
    const CpuIdentity id = cpu_identity(fake.path.string());
    EXPECT_EQ(id.arch, kArchName);
    if (kArchName == "x86_64") {
        EXPECT_EQ(id.model_name, "");
    } else {
        EXPECT_EQ(id.model_name, "unknown ARM part 0x00/0x000");
    }
    EXPECT_GT(id.logical_cpus, 0u);
}

}  // namespace
}  // namespace lockprof::arch
