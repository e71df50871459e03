// The alias table: short names users write ("stxr_fail", "cycles") and, per CPU architecture and
// libpfm4 PMU model, the libpfm4 names tried in order. Pure data and lookup, no libpfm4 calls, so
// every model's candidates can be checked on any machine (the x86 build of libpfm4 cannot encode
// ARM names; the aarch64 suite does that under qemu). docs/events.md documents the table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lockprof::pmu {

enum class Isa { x86_64, aarch64 };

// The architecture this binary runs on.
Isa host_isa();

struct AliasInfo {
    std::string_view name;
    std::string_view description;
    bool software = false;  // a kernel software event: countable in VMs and without a PMU
};

// Every alias, in the order `lockprof events` lists them.
const std::vector<AliasInfo>& aliases();
const AliasInfo* find_alias(std::string_view name);

struct Candidate {
    std::string pfm_name;  // a libpfm4 string ("arm_n1::STREX_FAIL_SPEC", "perf_raw::r6e")
    std::string note;      // shown with the resolution ("raw 0x6e: the architected ...")
    // Software events are also encoded without libpfm4 when its generic perf PMU is hidden
    // (LIBPFM_FORCE_PMU): type PERF_TYPE_SOFTWARE with this config.
    bool builtin_software = false;
    std::uint64_t software_config = 0;
};

struct AliasPlan {
    std::vector<Candidate> candidates;  // try in order; the first that encodes wins
    std::string refusal;                // non-empty: cannot be counted on this CPU, and why
};

// Candidates for `alias` on `isa` whose libpfm4 core PMU is `pmu_model` ("" when libpfm4
// detected none). Unknown aliases give an empty plan with an empty refusal.
AliasPlan plan_alias(std::string_view alias, Isa isa, std::string_view pmu_model);

// The PMU models the table names explicitly for `isa`, for tests and documentation.
std::vector<std::string> known_pmu_models(Isa isa);

}  // namespace lockprof::pmu
