// Where a result came from: enough for a reviewer to reproduce or refute it (the thread's
// assert-enabled build would have been caught by `assertions`).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockprof::workload {

struct Provenance {
    std::string lockprof_version;
    std::string git_revision;
    std::string command_line;
    std::string timestamp_utc;  // ISO 8601
    std::string hostname;
    std::string arch;
    std::string cpu_model;
    std::string cpu_vendor;
    std::string midr;  // aarch64: "implementer 0x41 part 0xd0c variant 0x3 revision 0x1"
    bool lse = false;
    bool spe = false;
    unsigned logical_cpus = 0;
    std::string kernel;
    int perf_event_paranoid = -99;  // -99: unreadable
    std::string vm_hint;            // "" when none detected
    std::string compiler;
    std::string compiler_flags;
    std::string build_type;
    bool assertions = false;
    // CPU frequency scaling (sysfs cpufreq, as lockhammer's check reads it): cpu0's
    // scaling_governor ("performance", "powersave"...) and whether boost/turbo is on ("on",
    // "off"); "" where the kernel exposes no cpufreq (many VMs) or the file is unreadable.
    std::string cpufreq_governor;
    std::string cpu_boost;
};

// The frequency governor and boost state read under `root` ("/" normally): the governor from
// sys/devices/system/cpu/cpu0/cpufreq/scaling_governor, boost from
// sys/devices/system/cpu/cpufreq/boost (acpi-cpufreq, 1 = on) or
// sys/devices/system/cpu/intel_pstate/no_turbo (1 = off).
struct CpuFrequency {
    std::string governor, boost;
};
CpuFrequency read_cpu_frequency(const std::filesystem::path& root = "/");

// Whether the CPU that ran had LSE atomics (ARMv8.1); nullopt off aarch64, where the question
// does not apply.
std::optional<bool> lse_atomics(const Provenance& p);

// The same as every report names it next to the CPU: "LSE", "no LSE", "" off aarch64.
std::string_view lse_label(const Provenance& p);

// Best-effort description of the virtual machine or container this runs in, "" when none is
// detected: numbers from a VM or an emulator are not those of the host, and hardware counters
// are often missing there. Looks for the x86 `hypervisor` cpuinfo flag, /sys/hypervisor/type,
// QEMU's virt board in the devicetree (linux,dummy-virt: arm64 guests, TCG or KVM), a DMI
// vendor or product only VMs report (QEMU, KVM, VMware, Xen, Amazon EC2 ...), then docker or
// kubepods containers. Reads files under `root` ("/" normally; a test folder in tests).
std::string detect_virtualisation(const std::filesystem::path& root = "/");

// Provenance of this process and build, with the given command line. The CPU, perf_event_paranoid
// and virtualisation are read under `root` ("/" normally; a test folder in tests).
Provenance collect_provenance(const std::vector<std::string>& argv,
                              const std::filesystem::path& root = "/");

}  // namespace lockprof::workload
