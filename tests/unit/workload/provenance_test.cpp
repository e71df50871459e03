// Virtualisation detection from file trees built in a temporary folder: x86 guests (hypervisor
// flag), arm64 guests on QEMU's virt board (devicetree, no cpuinfo flag), UEFI guests known by
// DMI, Xen, containers, and bare metal; the cpufreq governor and boost.
#include "lockprof/workload/provenance.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

using lockprof::workload::detect_virtualisation;

namespace {

struct FakeRoot {
    std::filesystem::path root;
    FakeRoot() {
        std::string pattern = (std::filesystem::temp_directory_path() / "lockprof-root-XXXXXX");
        root = mkdtemp(pattern.data());
    }
    ~FakeRoot() {
        std::error_code ec;
        std::filesystem::remove_all(root, ec);
    }
    FakeRoot& write(const std::string& path, const std::string& content) {
        std::filesystem::create_directories((root / path).parent_path());
        std::ofstream(root / path, std::ios::binary) << content;
        return *this;
    }
};

const std::string kArmCpuinfo =
    "processor\t: 0\nBogoMIPS\t: 125.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 "
    "atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x41\nCPU "
    "part\t: 0xd0c\n";
const std::string kX86Flags = "processor\t: 0\nflags\t\t: fpu vme de pse tsc msr pae mce cx8";

}  // namespace

TEST(Virtualisation, X86HypervisorFlagWithDmi) {
    FakeRoot r;
    r.write("proc/cpuinfo", kX86Flags + " hypervisor lahf_lm\n");
    EXPECT_EQ(detect_virtualisation(r.root), "hypervisor flag set");
    r.write("sys/class/dmi/id/sys_vendor", "QEMU\n");
    r.write("sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
    EXPECT_EQ(detect_virtualisation(r.root),
              "hypervisor flag set (QEMU Standard PC (Q35 + ICH9, 2009))");
}

TEST(Virtualisation, Arm64QemuVirtBoardFromTheDevicetree) {
    // qemu-system-aarch64 -M virt, TCG or KVM: no hypervisor flag exists on arm64.
    const std::string compatible("linux,dummy-virt\0", 17);
    FakeRoot sysfs;
    sysfs.write("proc/cpuinfo", kArmCpuinfo)
        .write("sys/firmware/devicetree/base/compatible", compatible);
    EXPECT_EQ(detect_virtualisation(sysfs.root),
              "QEMU/KVM virt board (devicetree linux,dummy-virt)");
    FakeRoot procfs;  // only /proc/device-tree mounted
    procfs.write("proc/cpuinfo", kArmCpuinfo).write("proc/device-tree/compatible", compatible);
    EXPECT_EQ(detect_virtualisation(procfs.root),
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
        FakeRoot r;
        r.write("proc/cpuinfo", kArmCpuinfo)
            .write("sys/class/dmi/id/sys_vendor", std::string(c.vendor) + "\n")
            .write("sys/class/dmi/id/product_name", std::string(c.product) + "\n");
        EXPECT_EQ(detect_virtualisation(r.root),
                  std::string("virtual machine (DMI: ") + c.vendor + " " + c.product + ")");
    }
}

TEST(Virtualisation, XenFromSysHypervisor) {
    FakeRoot r;
    r.write("proc/cpuinfo", kArmCpuinfo).write("sys/hypervisor/type", "xen\n");
    EXPECT_EQ(detect_virtualisation(r.root), "xen guest (/sys/hypervisor/type)");
}

TEST(Virtualisation, BareMetalAndContainers) {
    FakeRoot metal;
    metal.write("proc/cpuinfo", kX86Flags + " lahf_lm\n")
        .write("sys/class/dmi/id/sys_vendor", "Dell Inc.\n")
        .write("sys/class/dmi/id/product_name", "PowerEdge R740\n");
    EXPECT_EQ(detect_virtualisation(metal.root), "");
    // A bare-metal EC2 instance reports Amazon EC2 too.
    FakeRoot ec2_metal;
    ec2_metal.write("proc/cpuinfo", kArmCpuinfo)
        .write("sys/class/dmi/id/sys_vendor", "Amazon EC2\n")
        .write("sys/class/dmi/id/product_name", "c6g.metal\n");
    EXPECT_EQ(detect_virtualisation(ec2_metal.root), "");
    // A devicetree board that is not QEMU's.
    FakeRoot board;
    board.write("proc/cpuinfo", kArmCpuinfo)
        .write("sys/firmware/devicetree/base/compatible",
               std::string("raspberrypi,4-model-b\0brcm,bcm2711\0", 35));
    EXPECT_EQ(detect_virtualisation(board.root), "");

    FakeRoot docker;
    docker.write("proc/cpuinfo", kX86Flags + "\n").write(".dockerenv", "");
    EXPECT_EQ(detect_virtualisation(docker.root), "container (docker)");
    FakeRoot pod;
    pod.write("proc/cpuinfo", kX86Flags + "\n").write("proc/1/cgroup", "0::/kubepods/besteffort\n");
    EXPECT_EQ(detect_virtualisation(pod.root), "container");
    EXPECT_EQ(detect_virtualisation("/nonexistent-lockprof-root"), "");
}

// collect_provenance() reads the CPU, perf_event_paranoid and the VM hint under its root.
TEST(CollectProvenance, FromAFakeRoot) {
    FakeRoot r;
    r.write("proc/cpuinfo",
            "processor\t: 0\nvendor_id\t: FakeVendor\nmodel name\t: Fake CPU\nCPU "
            "implementer\t: 0x41\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n" +
                std::string("flags\t\t: fpu hypervisor\n"))
        .write("proc/sys/kernel/perf_event_paranoid", "2\n");
    const auto p =
        lockprof::workload::collect_provenance({"lockprof", "run", "--locks", "a b"}, r.root);
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
    FakeRoot missing;
    EXPECT_EQ(lockprof::workload::collect_provenance({}, missing.root).perf_event_paranoid, -99);
    FakeRoot odd;
    odd.write("proc/sys/kernel/perf_event_paranoid", "high\n");
    EXPECT_EQ(lockprof::workload::collect_provenance({"x"}, odd.root).perf_event_paranoid, -99);
    FakeRoot minus;
    minus.write("proc/sys/kernel/perf_event_paranoid", "-1\n");
    const auto p = lockprof::workload::collect_provenance({"", "it's"}, minus.root);
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
    FakeRoot acpi;
    acpi.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n")
        .write("sys/devices/system/cpu/cpufreq/boost", "1\n");
    EXPECT_EQ(read_cpu_frequency(acpi.root).governor, "performance");
    EXPECT_EQ(read_cpu_frequency(acpi.root).boost, "on");
    FakeRoot pstate;
    pstate.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n")
        .write("sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
    EXPECT_EQ(read_cpu_frequency(pstate.root).governor, "powersave");
    EXPECT_EQ(read_cpu_frequency(pstate.root).boost, "off");
    FakeRoot vm;
    vm.write("proc/cpuinfo", kX86Flags + " hypervisor\n");
    EXPECT_EQ(read_cpu_frequency(vm.root).governor, "");
    EXPECT_EQ(read_cpu_frequency(vm.root).boost, "") << "unknown, not off";
    const auto p = lockprof::workload::collect_provenance({"lockprof"}, acpi.root);
    EXPECT_EQ(p.cpufreq_governor, "performance");
    EXPECT_EQ(p.cpu_boost, "on");
}
