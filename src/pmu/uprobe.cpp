#include "lockprof/pmu/uprobe.hpp"

#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "lockprof/common/files.hpp"
#include "lockprof/pmu/events.hpp"

namespace lockprof::pmu {

std::optional<UprobePmu> uprobe_pmu(std::string& why, const std::filesystem::path& sysfs) {
    const auto folder = sysfs / "bus/event_source/devices/uprobe";
    const std::string type = first_line((folder / "type").string());
    if (type.empty()) {
        why = fmt::format(
            "no uprobe PMU is registered ({} is missing): this kernel was built without "
            "CONFIG_UPROBE_EVENTS, or perf_event is not available here (qemu-user, seccomp)",
            (folder / "type").string());
        return std::nullopt;
    }
    UprobePmu pmu;
    try {
        pmu.type = static_cast<std::uint32_t>(std::stoul(type));
    } catch (const std::exception&) {
        why = fmt::format("{} holds '{}', not a PMU type", (folder / "type").string(), type);
        return std::nullopt;
    }
    // "config:0": the bit in config that asks for the function's returns.
    const std::string format = first_line((folder / "format/retprobe").string());
    if (format.starts_with("config:")) {
        try {
            pmu.retprobe_bit = std::stoi(format.substr(7));
        } catch (const std::exception&) {
        }
    }
    return pmu;
}

namespace {
// Every hit sampled, user space only, disabled until enabled.
perf_event_attr probe_attr(std::uint32_t type) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = type;
    attr.sample_period = 1;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return attr;
}
}  // namespace

perf_event_attr uprobe_attr(const UprobePmu& pmu, const std::string& path,
                            std::uint64_t file_offset, bool return_probe) {
    perf_event_attr attr = probe_attr(pmu.type);
    attr.config = return_probe ? std::uint64_t{1} << pmu.retprobe_bit : 0;
    attr.config1 = reinterpret_cast<std::uint64_t>(path.c_str());  // uprobe_path
    attr.config2 = file_offset;                                    // probe_offset
    return attr;
}

perf_event_attr trace_uprobe_attr(std::uint64_t id) {
    perf_event_attr attr = probe_attr(PERF_TYPE_TRACEPOINT);
    attr.config = id;
    return attr;
}

std::string explain_uprobe_error(int error_number, const std::string& function,
                                 const std::string& path) {
    const std::string what = fmt::format("--spin: cannot probe {} in {}", function, path);
    switch (error_number) {
        case EACCES:
        case EPERM: {
            const int level = perf_event_paranoid();
            return fmt::format(
                "{}: permission denied ({}): uprobes need root or CAP_PERFMON whatever "
                "kernel.perf_event_paranoid says (it is {}: {}); run as root or `sudo setcap "
                "cap_perfmon+ep $(which lockprof)`",
                what, error_number == EACCES ? "EACCES" : "EPERM", level, paranoid_meaning(level));
        }
        case ENOENT:
            return fmt::format("{}: the uprobe PMU refused the event (ENOENT); check {}", what,
                               "/sys/bus/event_source/devices/uprobe");
        case EINVAL:
            return fmt::format(
                "{}: the kernel refused the probe (EINVAL): the offset is not an instruction of "
                "the file's executable code, or this kernel lacks uprobe perf events",
                what);
        case 524:  // ENOTSUPP, the kernel's own code, seen by user space as "Unknown error 524"
            return fmt::format(
                "{}: the kernel cannot place a uprobe on the function's first instruction "
                "(ENOTSUPP: x86-64 uprobes refuse some instructions, such as glibc's `lock "
                "decl` at the start of pthread_spin_lock)",
                what);
        case ENOSYS:
            return fmt::format(
                "{}: perf_event_open is not implemented here (ENOSYS: qemu-user, or a kernel "
                "without perf events)",
                what);
        default:
            return fmt::format("{}: {}", what, explain_open_error(error_number, function));
    }
}

}  // namespace lockprof::pmu
