// Virtualisation detection from file trees built in a temporary folder: x86 guests (hypervisor
// flag), arm64 guests on QEMU's virt board (devicetree, no cpuinfo flag), UEFI guests known by
// DMI, Xen, containers, and bare metal; the cpufreq governor and boost.
#include "lockprof/workload/provenance.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

using lockprof::workload::detect_virtualisation;

namespace {

const std::string kArmCpuinfo =
    "processor\t: 0\nBogoMIPS\t: 125.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 "
    "atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x41\nCPU "
    "part\t: 0xd0c\n";
const std::string kX86Flags = "processor\t: 0\nflags\t\t: fpu vme de pse tsc msr pae mce cx8";

}  // namespace

TEST(Virtualisation, X86HypervisorFlagWithDmi) {
    lockprof::test::TempDir r;
    r.write("proc/cpuinfo", kX86Flags + " hypervisor lahf_lm\n");
    EXPECT_EQ(detect_virtualisation(r.path), "hypervisor flag set");
    r.write("sys/class/dmi/id/sys_vendor", "QEMU\n");
    r.write("sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
    EXPECT_EQ(detect_virtualisation(r.path),
              "hypervisor flag set (QEMU Standard PC (Q35 + ICH9, 2009))");
}

TEST(Virtualisation, Arm64QemuVirtBoardFromTheDevicetree) {
    // qemu-system-aarch64 -M virt, TCG or KVM: no hypervisor flag exists on arm64.
    const std::string compatible("linux,dummy-virt\0", 17);
    lockprof::test::TempDir sysfs;
    sysfs.write("proc/cpuinfo", kArmCpuinfo);
    sysfs.write("sys/firmware/devicetree/base/compatible", compatible);
    EXPECT_EQ(detect_virtualisation(sysfs.path),
              "QEMU/KVM virt board (devicetree linux,dummy-virt)");
    lockprof::test::TempDir procfs;  // only /proc/device-tree mounted
    procfs.write("proc/cpuinfo", kArmCpuinfo);
    procfs.write("proc/device-tree/compatible", compatible);
    EXPECT_EQ(detect_virtualisation(procfs.path),
              "QEMU/KVM virt board (devicetree linux,dummy-virt)");
}

TEST(Virtualisation, UefiGuestsByDmi) {
    struct Case {
        const char* vendor;
        const char* product;
    };
    for (const auto& c : {Case{"QEMU", "KVM Virtual Machine"}, Case{"Amazon EC2", "c6g.large"},
                          Case{"VMware, Inc.", "VMware Virtual Platform"},
                          Case{"Microsoft Corporation", "Virtual Machine"}, Case{"Xen", "HVM domU"},
                          Case{"innotek GmbH", "VirtualBox"}}) {
        lockprof::test::TempDir r;
        r.write("proc/cpuinfo", kArmCpuinfo);
        r.write("sys/class/dmi/id/sys_vendor", std::string(c.vendor) + "\n");
        r.write("sys/class/dmi/id/product_name", std::string(c.product) + "\n");
        EXPECT_EQ(detect_virtualisation(r.path),
                  std::string("virtual machine (DMI: ") + c.vendor + " " + c.product + ")");
    }
}

TEST(Virtualisation, XenFromSysHypervisor) {
    lockprof::test::TempDir r;
    r.write("proc/cpuinfo", kArmCpuinfo);
    r.write("sys/hypervisor/type", "xen\n");
    EXPECT_EQ(detect_virtualisation(r.path), "xen guest (/sys/hypervisor/type)");
}

TEST(Virtualisation, BareMetalAndContainers) {
    lockprof::test::TempDir metal;
    metal.write("proc/cpuinfo", kX86Flags + " lahf_lm\n");
    metal.write("sys/class/dmi/id/sys_vendor", "Dell Inc.\n");
    metal.write("sys/class/dmi/id/product_name", "PowerEdge R740\n");
    EXPECT_EQ(detect_virtualisation(metal.path), "");
    // A bare-metal EC2 instance reports Amazon EC2 too.
    lockprof::test::TempDir ec2_metal;
    ec2_metal.write("proc/cpuinfo", kArmCpuinfo);
    ec2_metal.write("sys/class/dmi/id/sys_vendor", "Amazon EC2\n");
    ec2_metal.write("sys/class/dmi/id/product_name", "c6g.metal\n");
    EXPECT_EQ(detect_virtualisation(ec2_metal.path), "");
    // A devicetree board that is not QEMU's.
    lockprof::test::TempDir board;
    board.write("proc/cpuinfo", kArmCpuinfo);
    board.write("sys/firmware/devicetree/base/compatible",
                std::string("raspberrypi,4-model-b\0brcm,bcm2711\0", 35));
    EXPECT_EQ(detect_virtualisation(board.path), "");

    lockprof::test::TempDir docker;
    docker.write("proc/cpuinfo", kX86Flags + "\n");
    docker.write(".dockerenv", "");
    EXPECT_EQ(detect_virtualisation(docker.path), "container (docker)");
    lockprof::test::TempDir pod;
    pod.write("proc/cpuinfo", kX86Flags + "\n");
    pod.write("proc/1/cgroup", "0::/kubepods/besteffort\n");
    EXPECT_EQ(detect_virtualisation(pod.path), "container");
    EXPECT_EQ(detect_virtualisation("/nonexistent-lockprof-root"), "");
}

// collect_provenance() reads the CPU, perf_event_paranoid and the VM hint under its root.
TEST(CollectProvenance, FromAFakeRoot) {
    lockprof::test::TempDir r;
    r.write("proc/cpuinfo",
            "processor\t: 0\nvendor_id\t: FakeVendor\nmodel name\t: Fake CPU\nCPU "
            "implementer\t: 0x41\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n" +
                std::string("flags\t\t: fpu hypervisor\n"));
    r.write("proc/sys/kernel/perf_event_paranoid", "2\n");
    const auto p =
        lockprof::workload::collect_provenance({"lockprof", "run", "--locks", "a b"}, r.path);
    EXPECT_EQ(p.command_line, "lockprof run --locks 'a b'");
    EXPECT_EQ(p.perf_event_paranoid, 2);
    EXPECT_EQ(p.vm_hint, "hypervisor flag set");
    EXPECT_FALSE(p.timestamp_utc.empty());
    if (p.arch == "x86_64") {
        EXPECT_EQ(p.cpu_model, "Fake CPU");
        EXPECT_EQ(p.cpu_vendor, "FakeVendor");
        EXPECT_EQ(p.midr, "");
    } else {
        EXPECT_EQ(p.cpu_model, "Neoverse N1");
        EXPECT_EQ(p.midr, "implementer 0x41 part 0xd0c variant 0x3 revision 0x1");
    }
}

TEST(CollectProvenance, UnreadableOrOddParanoidIsMinus99) {
    lockprof::test::TempDir missing;
    EXPECT_EQ(lockprof::workload::collect_provenance({}, missing.path).perf_event_paranoid, -99);
    lockprof::test::TempDir odd;
    odd.write("proc/sys/kernel/perf_event_paranoid", "high\n");
    EXPECT_EQ(lockprof::workload::collect_provenance({"x"}, odd.path).perf_event_paranoid, -99);
    lockprof::test::TempDir minus;
    minus.write("proc/sys/kernel/perf_event_paranoid", "-1\n");
    const auto p = lockprof::workload::collect_provenance({"", "it's"}, minus.path);
    EXPECT_EQ(p.perf_event_paranoid, -1);
    EXPECT_EQ(p.command_line, "'' 'it's'");  // quoted, not escaped
}

// How every report names the CPU's atomics: only aarch64 has the question.
TEST(Provenance, LseLabelOnlyOnAarch64) {
    lockprof::workload::Provenance p;
    p.arch = "aarch64";
    p.lse = true;
    EXPECT_EQ(lockprof::workload::lse_atomics(p), true);
    EXPECT_EQ(lockprof::workload::lse_label(p), "LSE");
    p.lse = false;
    EXPECT_EQ(lockprof::workload::lse_atomics(p), false);
    EXPECT_EQ(lockprof::workload::lse_label(p), "no LSE");
    p.arch = "x86_64";
    p.lse = true;  // never set off aarch64, but it would not count
    EXPECT_EQ(lockprof::workload::lse_atomics(p), std::nullopt);
    EXPECT_EQ(lockprof::workload::lse_label(p), "");
}

// The CPU frequency governor and boost, as lockhammer's cpufreq check reads them: acpi-cpufreq's
// cpufreq/boost (1 = on), intel_pstate's no_turbo (1 = boost off), nothing in most VMs.
TEST(Provenance, CpuFrequencyGovernorAndBoostFromSysfs) {
    using lockprof::workload::read_cpu_frequency;
    lockprof::test::TempDir acpi;
    acpi.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
    acpi.write("sys/devices/system/cpu/cpufreq/boost", "1\n");
    EXPECT_EQ(read_cpu_frequency(acpi.path).governor, "performance");
    EXPECT_EQ(read_cpu_frequency(acpi.path).boost, "on");
    lockprof::test::TempDir pstate;
    pstate.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n");
    pstate.write("sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
    EXPECT_EQ(read_cpu_frequency(pstate.path).governor, "powersave");
    EXPECT_EQ(read_cpu_frequency(pstate.path).boost, "off");
    lockprof::test::TempDir vm;
    vm.write("proc/cpuinfo", kX86Flags + " hypervisor\n");
    EXPECT_EQ(read_cpu_frequency(vm.path).governor, "");
    EXPECT_EQ(read_cpu_frequency(vm.path).boost, "") << "unknown, not off";
    const auto p = lockprof::workload::collect_provenance({"lockprof"}, acpi.path);
    EXPECT_EQ(p.cpufreq_governor, "performance");
    EXPECT_EQ(p.cpu_boost, "on");
}
