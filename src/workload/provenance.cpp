#include "lockprof/workload/provenance.hpp"

#include <chrono>
#include <filesystem>
#include <ctime>
#include <fstream>

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/common/git_revision.hpp"
#include "lockprof_build_info.hpp"

namespace lockprof::workload {
namespace {

// DMI strings are padded with spaces.
std::string read_first_line(const std::filesystem::path& path) {
    std::string line = first_line(path);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    return line;
}

// x86 guests: CPUID's hypervisor bit, which Linux shows as the `hypervisor` cpuinfo flag.
bool hypervisor_flag(const std::filesystem::path& cpuinfo) {
    std::ifstream in(cpuinfo);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("flags", 0) == 0 && (line + " ").find(" hypervisor ") != std::string::npos)
            return true;
    return false;
}

// A DMI vendor or product that only virtual machines report. Bare-metal EC2 instances
// ("c6g.metal") report Amazon EC2 too.
bool virtual_dmi(const std::string& vendor, const std::string& product) {
    if (product.size() >= 6 && product.compare(product.size() - 6, 6, ".metal") == 0) return false;
    static constexpr const char* kMarks[] = {
        "QEMU",    "KVM",       "VMware", "Xen",   "Amazon EC2", "VirtualBox",
        "innotek", "Parallels", "Bochs",  "BHYVE", "OpenStack",  "Google Compute Engine"};
    const std::string both = vendor + " " + product;
    for (const char* mark : kMarks)
        if (both.find(mark) != std::string::npos) return true;
    return product == "Virtual Machine";  // Hyper-V, Azure
}

}  // namespace

std::optional<bool> lse_atomics(const Provenance& p) {
    if (p.arch != "aarch64") return std::nullopt;
    return p.lse;
}

std::string_view lse_label(const Provenance& p) {
    const auto lse = lse_atomics(p);
    return !lse ? "" : *lse ? "LSE" : "no LSE";
}

std::string detect_virtualisation(const std::filesystem::path& root) {
    const auto dmi = root / "sys/class/dmi/id";
    const std::string vendor = read_first_line(dmi / "sys_vendor");
    const std::string product = read_first_line(dmi / "product_name");
    std::string dmi_names = vendor;
    if (!product.empty()) dmi_names += (dmi_names.empty() ? "" : " ") + product;
    if (hypervisor_flag(root / "proc/cpuinfo"))
        return dmi_names.empty() ? "hypervisor flag set"
                                 : fmt::format("hypervisor flag set ({})", dmi_names);
    if (const std::string type = read_first_line(root / "sys/hypervisor/type"); !type.empty())
        return fmt::format("{} guest (/sys/hypervisor/type)", type);
    // arm64 (and other devicetree) guests: QEMU's `-M virt` board, under TCG or KVM, whose
    // compatible strings (NUL-separated) include linux,dummy-virt.
    for (const char* compatible :
         {"sys/firmware/devicetree/base/compatible", "proc/device-tree/compatible"})
        if (read_all(root / compatible).find("linux,dummy-virt") != std::string::npos)
            return "QEMU/KVM virt board (devicetree linux,dummy-virt)";
    // UEFI/ACPI guests (arm64 KVM with edk2, cloud instances) report it in DMI.
    if (virtual_dmi(vendor, product)) return fmt::format("virtual machine (DMI: {})", dmi_names);
    if (std::filesystem::exists(root / ".dockerenv")) return "container (docker)";
    const std::string cgroup = read_all(root / "proc/1/cgroup");
    if (cgroup.find("docker") != std::string::npos || cgroup.find("kubepods") != std::string::npos)
        return "container";
    return "";
}

CpuFrequency read_cpu_frequency(const std::filesystem::path& root) {
    CpuFrequency f;
    const std::filesystem::path cpu = root / "sys/devices/system/cpu";
    f.governor = read_first_line(cpu / "cpu0/cpufreq/scaling_governor");
    const std::string boost = read_first_line(cpu / "cpufreq/boost");
    const std::string no_turbo = read_first_line(cpu / "intel_pstate/no_turbo");
    if (boost == "1" || boost == "0")
        f.boost = boost == "1" ? "on" : "off";
    else if (no_turbo == "1" || no_turbo == "0")
        f.boost = no_turbo == "1" ? "off" : "on";
    return f;
}

Provenance collect_provenance(const std::vector<std::string>& argv,
                              const std::filesystem::path& root) {
    Provenance p;
    p.lockprof_version = LOCKPROF_VERSION;
    p.git_revision = std::string(git_revision());  // at build time, not configure time
    std::string command;
    for (const auto& arg : argv) {
        if (!command.empty()) command += ' ';
        const bool plain = arg.find_first_of(" \t'\"$\\") == std::string::npos && !arg.empty();
        command += plain ? arg : "'" + arg + "'";
    }
    p.command_line = command;

    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
    p.timestamp_utc = stamp;

    char host[256] = {};
    gethostname(host, sizeof host - 1);
    p.hostname = host;

    const auto cpu = arch::cpu_identity(root.string());
    p.arch = cpu.arch;
    p.cpu_model = cpu.model_name;
    p.cpu_vendor = cpu.vendor;
    if (cpu.arch == "aarch64")
        p.midr = fmt::format("implementer 0x{:02x} part 0x{:03x} variant 0x{:x} revision 0x{:x}",
                             cpu.implementer, cpu.part, cpu.variant, cpu.revision);
    p.lse = cpu.has_lse;
    p.spe = cpu.has_spe;
    p.logical_cpus = cpu.logical_cpus;

    utsname uts{};
    if (uname(&uts) == 0) p.kernel = fmt::format("{} {} {}", uts.sysname, uts.release, uts.machine);
    const std::string paranoid = read_first_line(root / "proc/sys/kernel/perf_event_paranoid");
    try {
        p.perf_event_paranoid = paranoid.empty() ? -99 : std::stoi(paranoid);
    } catch (...) {
        p.perf_event_paranoid = -99;
    }
    p.vm_hint = detect_virtualisation(root);
    const CpuFrequency frequency = read_cpu_frequency(root);
    p.cpufreq_governor = frequency.governor;
    p.cpu_boost = frequency.boost;
    p.compiler = LOCKPROF_COMPILER;
    p.compiler_flags = LOCKPROF_COMPILER_FLAGS;
    p.build_type = LOCKPROF_BUILD_TYPE;
#ifdef NDEBUG
    p.assertions = false;
#else
    p.assertions = true;
#endif
    return p;
}

}  // namespace lockprof::workload
