#include "lockprof/workload/provenance.hpp"

#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof_build_info.hpp"

namespace lockprof::workload {
namespace {

std::string read_first_line(const char* path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// Best-effort hint that we run virtualised or emulated: numbers from a VM or qemu are not those
// of the host, and hardware counters are usually missing there.
std::string vm_hint() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line))
        if (line.rfind("flags", 0) == 0 && line.find(" hypervisor") != std::string::npos) {
            const std::string vendor = read_first_line("/sys/class/dmi/id/sys_vendor");
            const std::string product = read_first_line("/sys/class/dmi/id/product_name");
            std::string hint = "hypervisor flag set";
            if (!vendor.empty() || !product.empty())
                hint += fmt::format(" ({} {})", vendor, product);
            return hint;
        }
    std::ifstream cgroup("/proc/1/cgroup");
    std::stringstream all;
    all << cgroup.rdbuf();
    if (all.str().find("docker") != std::string::npos ||
        all.str().find("kubepods") != std::string::npos)
        return "container";
    return "";
}

}  // namespace

Provenance collect_provenance(const std::vector<std::string>& argv) {
    Provenance p;
    p.lockprof_version = LOCKPROF_VERSION;
    p.git_revision = LOCKPROF_GIT_REVISION;
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

    const auto cpu = arch::cpu_identity();
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
    const std::string paranoid = read_first_line("/proc/sys/kernel/perf_event_paranoid");
    try {
        p.perf_event_paranoid = paranoid.empty() ? -99 : std::stoi(paranoid);
    } catch (...) {
        p.perf_event_paranoid = -99;
    }
    p.vm_hint = vm_hint();
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
