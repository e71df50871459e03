// The alias table (documented in docs/events.md). Each alias lists, per architecture:
//   1. libpfm4's generic perf:: name, when the kernel has a generic event for it (the kernel
//      then maps it to the right code for the running core, in VMs and on unknown CPUs);
//   2. model-specific libpfm4 names for the PMU models named here, in order;
//   3. on aarch64, the raw architected event number, for ARMv8 cores libpfm4 has no table for.
// An alias with nothing to try on an architecture is refused with the reason and what to use.
#include "lockprof/pmu/aliases.hpp"

#include <linux/perf_event.h>

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "lockprof/arch/cpu.hpp"

namespace lockprof::pmu {
namespace {

using Names = std::vector<std::string_view>;

struct ModelEvents {
    Names models;
    Names events;  // tried in order, prefixed with "<model>::"
    std::string_view note = {};
};

// One alias. The table names its fields (designated initializers, as Linux perf's event tables
// do); a field left out is empty.
struct Entry {
    AliasInfo info;
    Names generic = {};  // perf:: names, tried first on every CPU
    // Software events: the PERF_TYPE_SOFTWARE config, so they encode without libpfm4 too.
    std::optional<std::uint64_t> software_config = std::nullopt;
    std::vector<ModelEvents> x86 = {};
    std::vector<ModelEvents> arm = {};
    std::string_view arm_raw = {};  // "r6e": perf_raw fallback on any ARMv8 core
    std::string_view arm_raw_note = {};
    std::string_view x86_refusal = {};  // non-empty: not countable on x86_64, and why
    std::string_view arm_refusal = {};  // non-empty: not countable on aarch64, and why
};

// libpfm4 4.13 PMU model names. x86 ones are verified by encoding with LIBPFM_FORCE_PMU
// (tests/unit/pmu/aliases_test.cpp); ARM ones by the aarch64 suite under qemu.
const Names kIntelPreSkylake = {"snb", "snb_ep", "ivb", "ivb_ep", "hsw", "hsw_ep", "bdw", "bdw_ep"};
const Names kIntelSkylakeOn = {"skl", "skx", "clx", "icl", "icx", "spr"};
const Names kZen = {"amd64_fam17h_zen1", "amd64_fam17h_zen2", "amd64_fam19h_zen3",
                    "amd64_fam19h_zen4"};
// ARM cores whose libpfm4 tables use the architected event names (CPU_CYCLES, STREX_FAIL_SPEC).
const Names kArmArchitectedNames = {"arm_n1",      "arm_v1",        "arm_n2",   "arm_v2",
                                    "arm_kunpeng", "arm_thunderx2", "arm_ac76", "arm_a64fx"};
// The same cores but A64FX, whose libpfm4 table has neither BUS_ACCESS nor MEM_ACCESS (found
// by PmuAliases.ArmModelNamesEncodeInLibpfm4 in the emulated arm64 system); the raw fallback
// still tries the architected number there.
const Names kArmArchitectedBusNames = {"arm_n1",      "arm_v1",        "arm_n2",  "arm_v2",
                                       "arm_kunpeng", "arm_thunderx2", "arm_ac76"};
// Older tables that prefix speculative-instruction events with INST_SPEC_EXEC_.
const Names kArmInstSpecExec = {"arm_ac57", "arm_xgene"};

Names concat(std::initializer_list<Names> lists) {
    Names out;
    for (const auto& l : lists) out.insert(out.end(), l.begin(), l.end());
    return out;
}

constexpr std::string_view kNoStoreExclusiveOnX86 =
    "x86 has no load-linked/store-conditional: its atomics are LOCK-prefixed instructions that "
    "cannot fail, so there is no store-exclusive to count. Closest on x86: lock_loads (locked "
    "instructions), mem_order_clears (memory-ordering machine clears), and your core's "
    "cache-line transfer events, loads that hit a line modified in another core (their names "
    "differ per model, such as XSNP_HITM or XSNP_FWD: `lockprof events --all` lists this core's)";
constexpr std::string_view kArmBusEventOnX86 =
    "it is an ARMv8 architected event with no x86 core equivalent; use cache_misses, "
    "llc_misses or l1d_misses instead";
constexpr std::string_view kX86OnlyOnArm =
    "it is an x86 event (LOCK-prefixed instructions and memory-ordering machine clears have no "
    "ARM counterpart); on ARM use ldrex, stxr_pass and stxr_fail for LL/SC atomics";

const std::vector<Entry>& table() {
    static const std::vector<Entry> entries = {
        {.info = {.name = "cycles", .description = "CPU cycles while the thread runs"},
         .generic = {"perf::PERF_COUNT_HW_CPU_CYCLES"},
         .x86 = {{kIntelPreSkylake, {"UNHALTED_CORE_CYCLES"}},
                 {kIntelSkylakeOn, {"UNHALTED_CORE_CYCLES"}},
                 {kZen, {"CYCLES_NOT_IN_HALT"}}},
         .arm = {{concat({kArmArchitectedNames}), {"CPU_CYCLES"}}},
         .arm_raw = "r11",
         .arm_raw_note = "raw 0x11: the architected CPU_CYCLES event"},
        {.info = {.name = "instructions", .description = "instructions retired"},
         .generic = {"perf::PERF_COUNT_HW_INSTRUCTIONS"},
         .x86 = {{concat({kIntelPreSkylake, kIntelSkylakeOn}), {"INSTRUCTION_RETIRED"}},
                 {kZen, {"RETIRED_INSTRUCTIONS"}}},
         .arm = {{kArmArchitectedNames, {"INST_RETIRED"}}},
         .arm_raw = "r08",
         .arm_raw_note = "raw 0x08: the architected INST_RETIRED event"},
        {.info = {.name = "cache_misses",
                  .description =
                      "cache misses as the kernel defines them (last level on x86, L1D on ARM)"},
         .generic = {"perf::PERF_COUNT_HW_CACHE_MISSES"},
         .x86 = {{concat({kIntelPreSkylake, kIntelSkylakeOn}),
                  {"LONGEST_LAT_CACHE:MISS", "LLC_MISSES"}}},
         .arm = {{kArmArchitectedNames, {"L1D_CACHE_REFILL"}}},
         .arm_raw = "r03",
         .arm_raw_note = "raw 0x03: the architected L1D_CACHE_REFILL event"},
        {.info = {.name = "cache_refs",
                  .description = "cache references as the kernel defines them"},
         .generic = {"perf::PERF_COUNT_HW_CACHE_REFERENCES"},
         // Ice Lake's table has no LLC reference event: only the generic name works there.
         .x86 = {{concat({kIntelPreSkylake, {"skl", "skx", "clx", "spr"}}),
                  {"LONGEST_LAT_CACHE:REFERENCE", "LLC_REFERENCES"}}},
         .arm = {{kArmArchitectedNames, {"L1D_CACHE"}}},
         .arm_raw = "r04",
         .arm_raw_note = "raw 0x04: the architected L1D_CACHE event"},
        {.info = {.name = "l1d_misses", .description = "level-1 data cache misses (refills)"},
         .generic = {"perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS"},
         .x86 = {{concat({kIntelPreSkylake, kIntelSkylakeOn}), {"L1D:REPLACEMENT"}},
                 {{"amd64_fam17h_zen2"},
                  {"DATA_CACHE_REFILLS_FROM_SYSTEM:MABRESP_LCL_L2:LS_MABRESP_LCL_CACHE:"
                   "LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_CACHE:LS_MABRESP_RMT_DRAM"},
                  "demand L1D fills from any source"},
                 {{"amd64_fam19h_zen3"},
                  {"DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2:INT_CACHE:EXT_CACHE_LCL:"
                   "MEM_IO_LCL:EXT_CACHE_RMT:MEM_IO_RMT"},
                  "demand L1D fills from any source"},
                 {{"amd64_fam19h_zen4"},
                  {"DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2:LOCAL_CCX:NEAR_CACHE_NEAR_FAR:"
                   "DRAM_IO_NEAR:FAR_CACHE_NEAR_FAR:DRAM_IO_FAR:ALT_MEM_NEAR_FAR"},
                  "demand L1D fills from any source"}},
         .arm = {{kArmArchitectedNames, {"L1D_CACHE_REFILL"}}},
         .arm_raw = "r03",
         .arm_raw_note = "raw 0x03: the architected L1D_CACHE_REFILL event"},
        {.info = {.name = "llc_misses", .description = "last-level cache misses seen by the core"},
         .generic = {"perf::PERF_COUNT_HW_CACHE_LL:READ:MISS"},
         .x86 = {{concat({kIntelPreSkylake, kIntelSkylakeOn}),
                  {"LONGEST_LAT_CACHE:MISS", "LLC_MISSES"}}},
         .arm = {{{"arm_n1", "arm_v1", "arm_n2", "arm_v2"}, {"LL_CACHE_MISS_RD"}},
                 {kArmArchitectedNames, {"L2D_CACHE_REFILL"}}},
         .arm_raw = "r17",
         .arm_raw_note = "raw 0x17: the architected L2D_CACHE_REFILL event (the last level most "
                         "ARMv8.0 cores count)"},
        {.info = {.name = "branch_misses", .description = "mispredicted branches"},
         .generic = {"perf::PERF_COUNT_HW_BRANCH_MISSES"},
         .x86 = {{concat({kIntelPreSkylake, kIntelSkylakeOn}), {"BR_MISP_RETIRED:ALL_BRANCHES"}},
                 {kZen, {"RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED"}}},
         .arm = {{kArmArchitectedNames, {"BR_MIS_PRED"}}},
         .arm_raw = "r10",
         .arm_raw_note = "raw 0x10: the architected BR_MIS_PRED event"},
        {.info = {.name = "stxr_fail",
                  .description =
                      "failed store-exclusives (STXR/STLXR that lost the exclusive monitor)"},
         .arm = {{{"arm_n1", "arm_v1", "arm_n2", "arm_v2", "arm_kunpeng", "arm_thunderx2",
                   "arm_ac76"},
                  {"STREX_FAIL_SPEC"}},
                 {kArmInstSpecExec, {"INST_SPEC_EXEC_STREX_FAIL"}}},
         .arm_raw = "r6e",
         .arm_raw_note = "raw 0x6e: the architected common event STREX_FAIL_SPEC (cores that do "
                         "not implement it count 0)",
         .x86_refusal = kNoStoreExclusiveOnX86},
        {.info = {.name = "stxr_pass", .description = "successful store-exclusives"},
         .arm = {{{"arm_n1", "arm_v1", "arm_n2", "arm_v2", "arm_kunpeng", "arm_thunderx2",
                   "arm_ac76"},
                  {"STREX_PASS_SPEC"}},
                 {kArmInstSpecExec, {"INST_SPEC_EXEC_STREX_PASS"}}},
         .arm_raw = "r6d",
         .arm_raw_note = "raw 0x6d: the architected common event STREX_PASS_SPEC (cores that do "
                         "not implement it count 0)",
         .x86_refusal = kNoStoreExclusiveOnX86},
        {.info = {.name = "strex", .description = "store-exclusives executed, passed or failed"},
         .arm = {{{"arm_n1", "arm_v1", "arm_n2", "arm_v2"}, {"STREX_SPEC"}}},
         .arm_raw = "r6f",
         .arm_raw_note = "raw 0x6f: the architected common event STREX_SPEC (cores that do not "
                         "implement it count 0; stxr_pass + stxr_fail is the same figure)",
         .x86_refusal = kNoStoreExclusiveOnX86},
        {.info = {.name = "ldrex", .description = "load-exclusives executed (LDXR/LDAXR)"},
         .arm = {{{"arm_n1", "arm_v1", "arm_n2", "arm_v2", "arm_kunpeng", "arm_thunderx2",
                   "arm_ac76"},
                  {"LDREX_SPEC"}},
                 {kArmInstSpecExec, {"INST_SPEC_EXEC_LDREX"}}},
         .arm_raw = "r6c",
         .arm_raw_note = "raw 0x6c: the architected common event LDREX_SPEC (cores that do not "
                         "implement it count 0)",
         .x86_refusal = kNoStoreExclusiveOnX86},
        {.info = {.name = "bus_access",
                  .description = "bus accesses: traffic between the core and the interconnect"},
         .arm = {{kArmArchitectedBusNames, {"BUS_ACCESS"}}},
         .arm_raw = "r19",
         .arm_raw_note = "raw 0x19: the architected BUS_ACCESS event",
         .x86_refusal = kArmBusEventOnX86},
        {.info = {.name = "mem_access", .description = "data memory accesses (loads and stores)"},
         .arm = {{kArmArchitectedBusNames, {"MEM_ACCESS"}}},
         .arm_raw = "r13",
         .arm_raw_note = "raw 0x13: the architected MEM_ACCESS event",
         .x86_refusal = kArmBusEventOnX86},
        {.info = {.name = "lock_loads", .description = "x86 locked (LOCK-prefixed) instructions"},
         .x86 = {{kIntelPreSkylake, {"MEM_UOPS_RETIRED:LOCK_LOADS"}},
                 {kIntelSkylakeOn, {"MEM_INST_RETIRED:LOCK_LOADS"}},
                 {{"amd64_fam17h_zen2"},
                  {"RETIRED_LOCK_INSTRUCTIONS:CACHEABLE_LOCKS:BUS_LOCK"},
                  "AMD counts every retired locked instruction, not only loads"},
                 {{"amd64_fam19h_zen3", "amd64_fam19h_zen4"},
                  {"RETIRED_LOCK_INSTRUCTIONS"},
                  "AMD counts every retired locked instruction, not only loads"}},
         .arm_refusal = kX86OnlyOnArm},
        {.info = {.name = "mem_order_clears",
                  .description = "pipeline flushes caused by memory-ordering conflicts"},
         .x86 = {{concat({kIntelPreSkylake, kIntelSkylakeOn}), {"MACHINE_CLEARS:MEMORY_ORDERING"}}},
         .arm_refusal = kX86OnlyOnArm},
        {.info = {.name = "task_clock",
                  .description = "CPU time of the thread in ns (software)",
                  .software = true},
         .generic = {"perf::PERF_COUNT_SW_TASK_CLOCK"},
         .software_config = PERF_COUNT_SW_TASK_CLOCK},
        {.info = {.name = "context_switches",
                  .description = "times the thread was switched out (software)",
                  .software = true},
         .generic = {"perf::PERF_COUNT_SW_CONTEXT_SWITCHES"},
         .software_config = PERF_COUNT_SW_CONTEXT_SWITCHES},
        {.info = {.name = "cpu_migrations",
                  .description = "times the thread moved to another CPU (software)",
                  .software = true},
         .generic = {"perf::PERF_COUNT_SW_CPU_MIGRATIONS"},
         .software_config = PERF_COUNT_SW_CPU_MIGRATIONS},
        {.info = {.name = "page_faults", .description = "page faults (software)", .software = true},
         .generic = {"perf::PERF_COUNT_SW_PAGE_FAULTS"},
         .software_config = PERF_COUNT_SW_PAGE_FAULTS},
    };
    return entries;
}

const Entry* find_entry(std::string_view name) {
    for (const auto& e : table())
        if (e.info.name == name) return &e;
    return nullptr;
}

}  // namespace

Isa host_isa() {
    return arch::kArchName == "aarch64" ? Isa::aarch64 : Isa::x86_64;
}

const std::vector<AliasInfo>& aliases() {
    static const std::vector<AliasInfo> all = [] {
        std::vector<AliasInfo> out;
        for (const auto& e : table()) out.push_back(e.info);
        return out;
    }();
    return all;
}

const AliasInfo* find_alias(std::string_view name) {
    const Entry* e = find_entry(name);
    return e ? &e->info : nullptr;
}

AliasPlan plan_alias(std::string_view alias, Isa isa, std::string_view pmu_model) {
    AliasPlan plan;
    const Entry* e = find_entry(alias);
    if (!e) return plan;
    const std::string_view refusal = isa == Isa::x86_64 ? e->x86_refusal : e->arm_refusal;
    if (!refusal.empty()) {
        plan.refusal = fmt::format("'{}' cannot be counted on {}: {}", alias,
                                   isa == Isa::x86_64 ? "x86_64" : "aarch64", refusal);
        return plan;
    }
    for (auto name : e->generic) {
        Candidate c;
        c.pfm_name = std::string(name);
        if (e->software_config) {
            c.builtin_software = true;
            c.software_config = *e->software_config;
        }
        plan.candidates.push_back(std::move(c));
    }
    if (!pmu_model.empty())
        for (const auto& group : isa == Isa::x86_64 ? e->x86 : e->arm)
            if (std::find(group.models.begin(), group.models.end(), pmu_model) !=
                group.models.end())
                for (auto event : group.events)
                    plan.candidates.push_back(
                        {fmt::format("{}::{}", pmu_model, event), std::string(group.note)});
    if (isa == Isa::aarch64 && !e->arm_raw.empty())
        plan.candidates.push_back(
            {fmt::format("perf_raw::{}", e->arm_raw), std::string(e->arm_raw_note)});
    if (plan.candidates.empty())
        plan.refusal = fmt::format(
            "'{}' has no encoding on {}: lockprof's alias table names no event for it there; "
            "name a libpfm4 event directly (see `lockprof events --all`)",
            alias,
            pmu_model.empty() ? "this CPU (libpfm4 detected no core PMU)"
                              : fmt::format("PMU model {}", pmu_model));
    return plan;
}

std::vector<std::string> known_pmu_models(Isa isa) {
    std::vector<std::string> out;
    for (const auto& e : table())
        for (const auto& group : isa == Isa::x86_64 ? e.x86 : e.arm)
            for (auto m : group.models)
                if (std::find(out.begin(), out.end(), m) == out.end()) out.emplace_back(m);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace lockprof::pmu
