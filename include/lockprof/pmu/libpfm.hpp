// The one place that talks to libpfm4: initialisation, the detected core PMU, event encoding and
// the PMU/event listing behind `lockprof events --all`. Everything else goes through this, so
// the library is initialised once and consistently (sizes, privilege levels).
#pragma once

// Must precede any libpfm4 header: pfmlib_perf_event.h redefines the perf_event ABI otherwise.
#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lockprof::pmu::libpfm {

// Initialises libpfm4 on first use; later calls are free. Throws lockprof::Error when the
// library cannot initialise at all.
void ensure_initialized();

// Drops libpfm4's state and initialises again, so a changed LIBPFM_FORCE_PMU takes effect.
// For tests and tools; not safe while another thread encodes.
void reinitialize();

struct PmuInfo {
    std::string name;  // libpfm4 name: "arm_n1", "skl", "perf"
    std::string description;
    int id = 0;            // pfm_pmu_t
    bool core = false;     // a CPU core PMU (not uncore, not the OS's generic one)
    bool generic = false;  // the OS-provided generic PMU (perf, perf_raw)
    int counters = 0;      // generic counters libpfm4 knows of (0: unknown)
    int fixed_counters = 0;
    int events = 0;
};

// PMUs libpfm4 detected (or was forced to) on this machine, in libpfm4's order.
std::vector<PmuInfo> active_pmus();

// The first active core PMU, or an empty name when libpfm4 found none (VMs, unknown CPUs).
PmuInfo core_pmu();

// Whether libpfm4's generic perf PMU (perf:: names) is active; LIBPFM_FORCE_PMU hides it.
bool generic_perf_active();

struct EventInfo {
    std::string name;  // without the PMU prefix
    std::string description;
    std::vector<std::string> umasks;  // unit masks "NAME: description"
};
std::vector<EventInfo> events_of(const PmuInfo& pmu);

struct Encoding {
    int error = 0;           // PFM_SUCCESS (0) or a PFM_ERR_* code
    std::string message;     // pfm_strerror(error) when error != 0
    std::string pfm_name;    // "pmu::EVENT" as libpfm4 resolved it (unit masks not included)
    perf_event_attr attr{};  // valid when error == 0
};
// Encodes `name` (any libpfm4 string, modifiers included) for perf_event_open, user space only
// unless include_kernel. Never throws.
Encoding encode(std::string_view name, bool include_kernel);

}  // namespace lockprof::pmu::libpfm
