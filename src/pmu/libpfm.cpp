#include "lockprof/pmu/libpfm.hpp"

#include <perfmon/pfmlib_perf_event.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"

namespace lockprof::pmu::libpfm {
namespace {

std::mutex g_mutex;
bool g_initialized = false;

void initialize_locked() {
    if (g_initialized) return;
    const int rc = pfm_initialize();
    if (rc != PFM_SUCCESS)
        throw Error(
            fmt::format("libpfm4 failed to initialise ({}); event names cannot be encoded. Check "
                        "LIBPFM_FORCE_PMU and the libpfm4 installation, or run with --no-counters",
                        pfm_strerror(rc)));
    g_initialized = true;
}

PmuInfo info_of(pfm_pmu_t id, const pfm_pmu_info_t& raw) {
    PmuInfo p;
    p.name = raw.name ? raw.name : "";
    p.description = raw.desc ? raw.desc : "";
    p.id = static_cast<int>(id);
    p.core = raw.type == PFM_PMU_TYPE_CORE;
    p.generic = raw.type == PFM_PMU_TYPE_OS_GENERIC;
    p.counters = raw.num_cntrs;
    p.fixed_counters = raw.num_fixed_cntrs;
    p.events = raw.nevents;
    return p;
}

// libpfm4's canonical string lists every modifier ("...:u=1:k=0:h=0:precise=0"); keep the PMU,
// the event and its unit masks, which is what a user would write.
std::string canonical_name(const char* fstr, std::string_view requested) {
    if (!fstr) return std::string(requested);
    std::string_view full(fstr);
    const auto sep = full.find("::");
    if (sep == std::string_view::npos) return std::string(requested);
    std::string out(full.substr(0, sep + 2));
    std::string_view rest = full.substr(sep + 2);
    bool first = true;
    while (true) {
        const auto colon = rest.find(':');
        const std::string_view token = rest.substr(0, colon);
        if (first && token.empty()) {
            // perf_raw events have no name of their own: keep what the user wrote.
            const auto raw_modifiers = requested.find(':', requested.find("::") + 2);
            return std::string(requested.substr(0, raw_modifiers));
        }
        if (token.find('=') == std::string_view::npos && !token.empty()) {
            if (!first) out += ':';
            out += token;
        }
        first = false;
        if (colon == std::string_view::npos) break;
        rest = rest.substr(colon + 1);
    }
    return out;
}

}  // namespace

void ensure_initialized() {
    std::lock_guard lock(g_mutex);
    initialize_locked();
}

void reinitialize() {
    std::lock_guard lock(g_mutex);
    if (g_initialized) pfm_terminate();
    g_initialized = false;
    initialize_locked();
}

std::vector<PmuInfo> active_pmus() {
    ensure_initialized();
    std::vector<PmuInfo> out;
    for (int i = PFM_PMU_NONE; i < PFM_PMU_MAX; ++i) {
        pfm_pmu_info_t raw;
        std::memset(&raw, 0, sizeof raw);
        raw.size = sizeof raw;
        const auto id = static_cast<pfm_pmu_t>(i);
        if (pfm_get_pmu_info(id, &raw) != PFM_SUCCESS || !raw.is_present) continue;
        out.push_back(info_of(id, raw));
    }
    return out;
}

PmuInfo core_pmu() {
    for (auto& p : active_pmus())
        if (p.core) return p;
    return {};
}

bool generic_perf_active() {
    for (const auto& p : active_pmus())
        if (p.name == "perf") return true;
    return false;
}

std::vector<EventInfo> events_of(const PmuInfo& pmu) {
    ensure_initialized();
    pfm_pmu_info_t raw;
    std::memset(&raw, 0, sizeof raw);
    raw.size = sizeof raw;
    std::vector<EventInfo> out;
    if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(pmu.id), &raw) != PFM_SUCCESS) return out;
    for (int e = raw.first_event; e != -1; e = pfm_get_event_next(e)) {
        pfm_event_info_t info;
        std::memset(&info, 0, sizeof info);
        info.size = sizeof info;
        if (pfm_get_event_info(e, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS) continue;
        EventInfo event;
        event.name = info.name ? info.name : "";
        event.description = info.desc ? info.desc : "";
        for (int a = 0; a < info.nattrs; ++a) {
            pfm_event_attr_info_t attr;
            std::memset(&attr, 0, sizeof attr);
            attr.size = sizeof attr;
            if (pfm_get_event_attr_info(e, a, PFM_OS_PERF_EVENT_EXT, &attr) != PFM_SUCCESS ||
                attr.type != PFM_ATTR_UMASK)
                continue;
            event.umasks.push_back(
                fmt::format("{}: {}", attr.name ? attr.name : "", attr.desc ? attr.desc : ""));
        }
        out.push_back(std::move(event));
    }
    return out;
}

Encoding encode(std::string_view name, bool include_kernel) {
    ensure_initialized();
    Encoding out;
    std::memset(&out.attr, 0, sizeof out.attr);
    out.attr.size = sizeof(perf_event_attr);
    pfm_perf_encode_arg_t arg;
    std::memset(&arg, 0, sizeof arg);
    arg.size = sizeof arg;
    arg.attr = &out.attr;
    char* fstr = nullptr;
    arg.fstr = &fstr;
    const std::string text(name);
    // Modifiers the user wrote (":u", ":k") override this default privilege level.
    const int plm = include_kernel ? (PFM_PLM0 | PFM_PLM3) : PFM_PLM3;
    out.error = pfm_get_os_event_encoding(text.c_str(), plm, PFM_OS_PERF_EVENT_EXT, &arg);
    if (out.error != PFM_SUCCESS) {
        out.message = pfm_strerror(out.error);
        std::free(fstr);
        return out;
    }
    out.pfm_name = canonical_name(fstr, name);
    std::free(fstr);
    // libpfm4 may shrink attr.size to the ABI it knows; the kernel wants ours.
    out.attr.size = sizeof(perf_event_attr);
    return out;
}

}  // namespace lockprof::pmu::libpfm
