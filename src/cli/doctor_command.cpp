// `lockprof doctor`: why counters are (un)available here, and what to do about each problem.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include "cli/arguments.hpp"
#include "cli/cli.hpp"
#include "lockprof/analysis/steal.hpp"
#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/pmu/event_sources.hpp"
#include "lockprof/pmu/events.hpp"
#include "lockprof/pmu/libpfm.hpp"
#include "lockprof/workload/pinning.hpp"
#include "lockprof/workload/provenance.hpp"
#include "lockprof/workload/steal.hpp"

namespace po = boost::program_options;

namespace lockprof::cli {

namespace {

// What doctor found: one line per check on stdout, and the advice for the end.
struct Doctor {
    std::vector<std::string> advice;
    void line(std::string_view what, const std::string& value) const {
        std::cout << fmt::format("{:<22} {}\n", what, value);
    }
};

void check_cpu(Doctor& d, const arch::CpuIdentity& identity) {
    d.line("cpu", fmt::format("{} ({}, {} logical CPUs)", identity.model_name, identity.arch,
                              identity.logical_cpus));
    if (identity.arch == "aarch64") {
        // The MIDR fields are what libpfm4 picks the PMU by and what errata are keyed on, so a
        // reviewer can tell e.g. a Neoverse N1 r3p1 from an r4p0 with the same marketing name.
        const std::string part = arch::arm_part_name(identity.implementer, identity.part);
        d.line("MIDR", fmt::format("implementer 0x{:02x} ({}), part 0x{:03x} ({}), variant 0x{:x}, "
                                   "revision 0x{:x} (r{}p{})",
                                   identity.implementer, identity.vendor, identity.part,
                                   part.empty() ? "unknown part" : part, identity.variant,
                                   identity.revision, identity.variant, identity.revision));
    }
}

void check_paranoid(Doctor& d) {
    const bool root = geteuid() == 0;
    const int paranoid = pmu::perf_event_paranoid();
    d.line("perf_event_paranoid", fmt::format("{}: {}{}", paranoid, pmu::paranoid_meaning(paranoid),
                                              root ? " (you are root: no limit applies)" : ""));
    if (!root && paranoid > 2)
        d.advice.push_back(
            "perf_event is closed to users here: run as root or `sudo sysctl "
            "kernel.perf_event_paranoid=2`");
    else if (!root && paranoid == 2)
        d.advice.push_back(
            "--kernel needs perf_event_paranoid <= 1 or root: `sudo sysctl "
            "kernel.perf_event_paranoid=1`");
}

// The kernel's event sources and which of them is the CPU's PMU; returns the core PMUs.
std::vector<std::string> check_event_sources(Doctor& d) {
    const auto sources = pmu::event_sources();
    std::string joined;
    for (const auto& s : sources) joined += (joined.empty() ? "" : " ") + s.name;
    d.line("kernel event sources",
           joined.empty() ? "none (/sys/bus/event_source/devices)" : joined);
    const auto core_pmus = pmu::core_pmu_names(sources);
    std::string core_names;
    for (const auto& name : core_pmus) core_names += (core_names.empty() ? "" : ", ") + name;
    d.line("kernel core PMU",
           core_pmus.empty() ? "none registered: no hardware counters here" : core_names);
    const bool core_pmu = !core_pmus.empty();
    if (!core_pmu)
        d.advice.push_back(
            fmt::format("the kernel exposes no CPU PMU, so hardware events ({}) fail with "
                        "ENOENT: run on bare metal or enable the hypervisor's virtual PMU; "
                        "software events (task_clock, context_switches) still work",
                        arch::kArchName == "aarch64" ? "cycles, stxr_fail, l1d_misses, ..."
                                                     : "cycles, cache_misses, lock_loads, ..."));

    return core_pmus;
}

void check_libpfm(Doctor& d, bool core_pmu) {
    std::string detected;
    try {
        for (const auto& p : pmu::libpfm::active_pmus())
            detected += (detected.empty() ? "" : ", ") + p.name + (p.core ? " (core)" : "");
        const auto core = pmu::libpfm::core_pmu();
        d.line("libpfm4 PMUs", detected.empty() ? "none" : detected);
        if (core.name.empty() && core_pmu)
            d.advice.push_back(
                "libpfm4 does not know this CPU model: aliases fall back to generic and raw "
                "events; a newer libpfm4 would name more events");
    } catch (const Error& e) {
        d.line("libpfm4 PMUs", std::string("unavailable: ") + e.what());
        d.advice.push_back(
            "libpfm4 failed to initialise: reinstall libpfm4 or unset LIBPFM_FORCE_PMU");
    }
}

void check_virtualisation(Doctor& d) {
    const std::string virt = workload::detect_virtualisation();
    d.line("virtualisation", virt.empty() ? "none detected" : virt);
    if (!virt.empty() && virt.rfind("container", 0) == 0)
        d.advice.push_back(
            "in a container, perf_event_open may be blocked by seccomp: run with "
            "--cap-add PERFMON (or SYS_ADMIN) or a seccomp profile that allows perf_event_open");
}

// The hypervisor's steal since boot and over a probe as long as a short trial: on a busy cloud
// host it is what spreads trials and leaves verdicts inconclusive.
void check_steal(Doctor& d) {
    constexpr auto kProbe = std::chrono::milliseconds(200);
    const workload::CpuTimesSnapshot before = workload::read_cpu_times();
    const auto started = std::chrono::steady_clock::now();
    if (!before.unknown_because.empty()) {
        d.line("hypervisor steal", "unknown: " + before.unknown_because);
        return;
    }
    std::this_thread::sleep_for(kProbe);
    const workload::CpuTimesSnapshot after = workload::read_cpu_times();
    const auto window = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - started);
    const workload::StealReading probe = workload::steal_between(
        before, after, workload::affinity_cpus(), static_cast<std::uint64_t>(window.count()),
        workload::proc_stat_tick_ns());
    const auto boot = workload::steal_share_since_boot(before);
    const std::string since_boot =
        boot ? fmt::format("{:.1f}% of all CPUs' time since boot", 100 * *boot)
             : "unknown since boot";
    if (!probe.steal) {
        d.line("hypervisor steal",
               fmt::format("{}; probe unknown: {}", since_boot, probe.unknown_because));
        return;
    }
    const workload::TrialSteal& stolen = *probe.steal;
    const double share = analysis::steal_share(stolen);
    d.line(
        "hypervisor steal",
        fmt::format("{}; {:.1f}% over a {} ms probe of {} CPU{} (/proc/stat, {:g} ms per CPU)",
                    since_boot, 100 * share, kProbe.count(), stolen.cpus.size(),
                    stolen.cpus.size() == 1 ? "" : "s", static_cast<double>(stolen.tick_ns) / 1e6));
    if (analysis::high_steal(stolen))
        d.advice.push_back(fmt::format(
            "the hypervisor took {:.0f}% of this machine's CPUs during the probe: trials will "
            "spread and verdicts may stay inconclusive; run on an idle or dedicated host",
            100 * share));
    else if (boot && *boot > analysis::kHighStealShare)
        d.advice.push_back(fmt::format(
            "the hypervisor has taken {:.1f}% of this machine's CPUs since boot: the host is often "
            "busy, so expect spread between trials; run on a dedicated host",
            100 * *boot));
}

// Opens one software and one hardware event, as a run would.
void check_perf_event(Doctor& d, const std::vector<std::string>& core_pmus) {
    const bool core_pmu = !core_pmus.empty();
    auto trial = [&core_pmus](std::string_view name) -> std::string {
        const auto r = pmu::try_resolve_event(name, false);
        if (r.status != pmu::Resolution::Status::ok) return "cannot resolve: " + r.message;
        perf_event_attr attr = r.event.attr;
        const int fd = pmu::open_event(attr);
        if (fd < 0) return pmu::explain_open_error(-fd, name, core_pmus);
        ::close(fd);
        return "works";
    };
    const std::string software = trial("task_clock");
    d.line("perf_event (software)", software);
    if (software != "works")
        d.advice.push_back("perf_event_open fails even for software events: " + software);
    const std::string hardware = trial("cycles");
    d.line("perf_event (hardware)", hardware);
    if (hardware != "works" && software == "works" && core_pmu)
        d.advice.push_back("hardware events fail although a PMU is exposed: " + hardware);
}

void check_atomics(Doctor& d, const arch::CpuIdentity& identity) {
    if (identity.arch == "aarch64")
        d.line("LSE atomics", identity.has_lse ? "yes (ARMv8.1 CAS/SWP): @lse flavours run"
                                               : "no: @lse flavours are refused, LL/SC only");
    else
        d.line("LSE atomics", fmt::format("not applicable on {}", identity.arch));
    if (identity.arch == "aarch64")
        d.line("SPE", identity.has_spe
                          ? "yes (arm_spe_0 event source): precise sampling possible"
                          : "no arm_spe_0 event source (not implemented, or not exposed here)");
}

}  // namespace

int doctor_command(const std::vector<std::string>& args, const std::vector<std::string>&) {
    po::options_description options("doctor options");
    options.add_options()("help,h", "show this help");
    const auto vm = parse_arguments(args, options, "doctor");
    if (vm.count("help")) {
        std::cout << "Usage: lockprof doctor\n\n"
                     "Checks what stands between lockprof and the PMU on this machine: "
                     "perf_event_paranoid,\nthe kernel's event sources, libpfm4's detected PMUs, "
                     "virtualisation, the hypervisor's steal\n(since boot and over a 200 ms "
                     "probe), whether perf_event_open works at all, and LSE\natomics on "
                     "aarch64. Prints one line of advice per problem.\n\n"
                  << options;
        return 0;
    }
    Doctor d;
    const auto identity = arch::cpu_identity();
    check_cpu(d, identity);
    check_paranoid(d);
    const auto core_pmus = check_event_sources(d);
    check_libpfm(d, !core_pmus.empty());
    check_virtualisation(d);
    check_steal(d);
    check_perf_event(d, core_pmus);
    check_atomics(d, identity);

    std::cout << "\n";
    if (d.advice.empty()) std::cout << "No problems found: counters should work.\n";
    for (const auto& a : d.advice) std::cout << "advice: " << a << "\n";
    return 0;
}

}  // namespace lockprof::cli
