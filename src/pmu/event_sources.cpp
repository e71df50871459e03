#include "lockprof/pmu/event_sources.hpp"

#include <algorithm>
#include <string_view>
#include <system_error>

namespace lockprof::pmu {
namespace {

bool name_starts_with(std::string_view name, std::string_view prefix) {
    return name.substr(0, prefix.size()) == prefix;
}

// PMUs that are never a core PMU, whatever files they have: the kernel's own event sources and
// the x86/arm64 PMUs beside the core one.
bool is_known_non_core(std::string_view name) {
    static constexpr std::string_view kExact[] = {"software", "tracepoint", "breakpoint",
                                                  "kprobe",   "uprobe",     "msr",
                                                  "power",    "intel_pt",   "intel_bts"};
    static constexpr std::string_view kPrefixes[] = {
        "cstate",  "uncore",   "ibs_",   "amd_",  "arm_spe", "arm_cmn", "arm_dsu",
        "arm_ccn", "arm_smmu", "smmuv3", "hisi_", "cxl",     "i915",    "power_"};
    if (std::find(std::begin(kExact), std::end(kExact), name) != std::end(kExact)) return true;
    return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                       [&](std::string_view p) { return name_starts_with(name, p); });
}

}  // namespace

std::vector<EventSource> event_sources(const std::filesystem::path& sysfs) {
    std::vector<EventSource> out;
    std::error_code ec;
    const auto devices = sysfs / "bus/event_source/devices";
    for (const auto& entry : std::filesystem::directory_iterator(devices, ec)) {
        EventSource source;
        source.name = entry.path().filename().string();
        std::error_code file_ec;
        source.has_cpus = std::filesystem::exists(entry.path() / "cpus", file_ec);
        source.has_cpumask = std::filesystem::exists(entry.path() / "cpumask", file_ec);
        out.push_back(std::move(source));
    }
    std::sort(out.begin(), out.end(),
              [](const EventSource& a, const EventSource& b) { return a.name < b.name; });
    return out;
}

bool is_core_pmu(const EventSource& source) {
    const std::string_view name = source.name;
    if (is_known_non_core(name)) return false;
    if (name == "cpu" || name == "cpu_core" || name == "cpu_atom") return true;
    if (name_starts_with(name, "armv8_") || name_starts_with(name, "armv9_")) return true;
    if (name_starts_with(name, "apple_") && name.size() > 4 &&
        name.substr(name.size() - 4) == "_pmu")
        return true;
    // Another architecture's or a newer driver's name: the arm_pmu and x86 hybrid drivers give
    // core PMUs a `cpus` list; uncore and system PMUs have a `cpumask` instead.
    return source.has_cpus && !source.has_cpumask;
}

std::vector<std::string> core_pmu_names(const std::vector<EventSource>& sources) {
    std::vector<std::string> out;
    for (const auto& s : sources)
        if (is_core_pmu(s)) out.push_back(s.name);
    return out;
}

std::vector<std::string> registered_core_pmus(const std::filesystem::path& sysfs) {
    return core_pmu_names(event_sources(sysfs));
}

}  // namespace lockprof::pmu
