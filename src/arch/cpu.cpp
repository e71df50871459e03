#include "lockprof/arch/cpu.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include <unistd.h>
#if defined(LOCKPROF_ARCH_AARCH64)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif
#include <vector>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/parse.hpp"

namespace lockprof::arch {
namespace {

// First value of each "key : value" line in /proc/cpuinfo (the first processor's block).
std::map<std::string, std::string> read_cpuinfo(const std::filesystem::path& path) {
    std::map<std::string, std::string> fields;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        auto key = line.substr(0, colon);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
        auto value = line.substr(colon + 1);
        if (!value.empty() && value.front() == ' ') value.erase(0, 1);
        fields.emplace(key, value);  // emplace keeps the first processor's value
    }
    return fields;
}

#if defined(LOCKPROF_ARCH_AARCH64)
unsigned parse_number(const std::string& text) {
    try {
        return static_cast<unsigned>(std::stoul(text, nullptr, 0));
    } catch (...) {
        return 0;
    }
}
#endif

}  // namespace

Delay parse_delay(std::string_view name, std::string_view where) {
    std::vector<std::string> names;
    for (auto d : kAllDelays) {
        if (delay_name(d) == name) return d;
        names.emplace_back(delay_name(d));
    }
    const std::string suggestion = did_you_mean(name, names);
    std::string choices;
    for (std::size_t i = 0; i < names.size(); ++i)
        choices += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    throw UsageError(fmt::format(
        "{}: unknown policy '{}'{}; choose {}", where, name,
        suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", suggestion), choices));
}

std::string arm_part_name(unsigned implementer, unsigned part) {
    struct Part {
        unsigned implementer, part;
        const char* name;
    };
    static constexpr Part kParts[] = {
        {0x41, 0xd03, "Cortex-A53"},        {0x41, 0xd07, "Cortex-A57"},
        {0x41, 0xd08, "Cortex-A72"},        {0x41, 0xd0b, "Cortex-A76"},
        {0x41, 0xd0c, "Neoverse N1"},       {0x41, 0xd40, "Neoverse V1"},
        {0x41, 0xd49, "Neoverse N2"},       {0x41, 0xd4f, "Neoverse V2"},
        {0x41, 0xd8e, "Neoverse N3"},       {0x41, 0xd84, "Neoverse V3"},
        {0x42, 0x516, "ThunderX2"},         {0x43, 0x0af, "ThunderX2"},
        {0x48, 0xd01, "Kunpeng 920"},       {0x50, 0x000, "X-Gene"},
        {0x61, 0x022, "Apple M1 Icestorm"}, {0x61, 0x023, "Apple M1 Firestorm"},
        {0xc0, 0xac3, "Ampere One"},
    };
    for (const auto& p : kParts)
        if (p.implementer == implementer && p.part == part) return p.name;
    return "";
}

bool cpu_has_lse() {
#if defined(LOCKPROF_ARCH_AARCH64)
    return (getauxval(AT_HWCAP) & HWCAP_ATOMICS) != 0;
#else
    return false;
#endif
}

CpuIdentity cpu_identity(const std::string& root_folder) {
    const std::filesystem::path root(root_folder);
    CpuIdentity id;
    id.arch = std::string(kArchName);
    id.logical_cpus = std::thread::hardware_concurrency();
    auto info = read_cpuinfo(root / "proc/cpuinfo");
#if defined(LOCKPROF_ARCH_X86)
    id.model_name = info["model name"];
    id.vendor = info["vendor_id"];
#else
    id.implementer = parse_number(info["CPU implementer"]);
    id.part = parse_number(info["CPU part"]);
    id.variant = parse_number(info["CPU variant"]);
    id.revision = parse_number(info["CPU revision"]);
    static const std::map<unsigned, const char*> kImplementers = {
        {0x41, "ARM"}, {0x42, "Broadcom"}, {0x43, "Cavium"}, {0x48, "HiSilicon"}, {0x4e, "NVIDIA"},
        {0x50, "APM"}, {0x51, "Qualcomm"}, {0x61, "Apple"},  {0xc0, "Ampere"},
    };
    auto impl = kImplementers.find(id.implementer);
    id.vendor = impl != kImplementers.end() ? impl->second : "unknown implementer";
    id.model_name = arm_part_name(id.implementer, id.part);
    if (id.model_name.empty()) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "unknown ARM part 0x%02x/0x%03x", id.implementer, id.part);
        id.model_name = buf;
    }
    id.has_lse = cpu_has_lse();
#endif
    std::error_code ec;
    id.has_spe = std::filesystem::exists(root / "sys/bus/event_source/devices/arm_spe_0", ec);
    return id;
}

}  // namespace lockprof::arch
