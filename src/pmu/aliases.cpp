// The alias table (documented in docs/events.md). Each alias lists, per architecture:
//   1. libpfm4's generic perf:: name, when the kernel has a generic event for it (the kernel
//      then maps it to the right code for the running core, in VMs and on unknown CPUs);
//   2. model-specific libpfm4 names for the PMU models named here, in order;
//   3. on aarch64, the raw architected event number, for ARMv8 cores libpfm4 has no table for.
// An alias with nothing to try on an architecture is refused with the reason and what to use.
#include "lockprof/pmu/aliases.hpp"

#include <linux/perf_event.h>

#include <algorithm>

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

struct Entry {
    AliasInfo info;
    Names generic;  // perf:: names, tried first on every CPU
    std::uint64_t software_config = ~0ull;
    std::vector<ModelEvents> x86 = {};
    std::vector<ModelEvents> arm = {};
    std::string_view arm_raw = {};  // "r6e": perf_raw fallback on any ARMv8 core
    std::string_view arm_raw_note = {};
    std::string_view x86_refusal = {};
    std::string_view arm_refusal = {};
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
    "instructions), mem_order_clears (memory-ordering machine clears), and cache-line transfer "
    "events such as skl::MEM_LOAD_L3_HIT_RETIRED:XSNP_HITM (see `lockprof events --all`)";
constexpr std::string_view kArmBusEventOnX86 =
    "it is an ARMv8 architected event with no x86 core equivalent; use cache_misses, "
    "llc_misses or l1d_misses instead";
constexpr std::string_view kX86OnlyOnArm =
    "it is an x86 event (LOCK-prefixed instructions and memory-ordering machine clears have no "
    "ARM counterpart); on ARM use ldrex, stxr_pass and stxr_fail for LL/SC atomics";

const std::vector<Entry>& table() {
    static const std::vector<Entry> entries = {
        {{"cycles", "CPU cycles while the thread runs", false},
         {"perf::PERF_COUNT_HW_CPU_CYCLES"},
         ~0ull,
         {{kIntelPreSkylake, {"UNHALTED_CORE_CYCLES"}},
          {kIntelSkylakeOn, {"UNHALTED_CORE_CYCLES"}},
          {kZen, {"CYCLES_NOT_IN_HALT"}}},
         {{concat({kArmArchitectedNames}), {"CPU_CYCLES"}}},
         "r11",
         "raw 0x11: the architected CPU_CYCLES event"},
        {{"instructions", "instructions retired", false},
         {"perf::PERF_COUNT_HW_INSTRUCTIONS"},
         ~0ull,
         {{concat({kIntelPreSkylake, kIntelSkylakeOn}), {"INSTRUCTION_RETIRED"}},
          {kZen, {"RETIRED_INSTRUCTIONS"}}},
         {{kArmArchitectedNames, {"INST_RETIRED"}}},
         "r08",
         "raw 0x08: the architected INST_RETIRED event"},
        {{"cache_misses", "cache misses as the kernel defines them (last level on x86, L1D on ARM)",
          false},
         {"perf::PERF_COUNT_HW_CACHE_MISSES"},
         ~0ull,
         {{concat({kIntelPreSkylake, kIntelSkylakeOn}), {"LONGEST_LAT_CACHE:MISS", "LLC_MISSES"}}},
         {{kArmArchitectedNames, {"L1D_CACHE_REFILL"}}},
         "r03",
         "raw 0x03: the architected L1D_CACHE_REFILL event"},
        {{"cache_refs", "cache references as the kernel defines them", false},
         {"perf::PERF_COUNT_HW_CACHE_REFERENCES"},
         ~0ull,
         // Ice Lake's table has no LLC reference event: only the generic name works there.
         {{concat({kIntelPreSkylake, {"skl", "skx", "clx", "spr"}}),
           {"LONGEST_LAT_CACHE:REFERENCE", "LLC_REFERENCES"}}},
         {{kArmArchitectedNames, {"L1D_CACHE"}}},
         "r04",
         "raw 0x04: the architected L1D_CACHE event"},
        {{"l1d_misses", "level-1 data cache misses (refills)", false},
         {"perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS"},
         ~0ull,
         {{concat({kIntelPreSkylake, kIntelSkylakeOn}), {"L1D:REPLACEMENT"}},
          {{"amd64_fam17h_zen2"},
           {"DATA_CACHE_REFILLS_FROM_SYSTEM:MABRESP_LCL_L2:LS_MABRESP_LCL_CACHE:"
            "LS_MABRESP_LCL_DRAM:LS_MABRESP_RMT_CACHE:LS_MABRESP_RMT_DRAM"},
           "demand L1D fills from any source"},
          {{"amd64_fam19h_zen3"},
           {"DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2:INT_CACHE:EXT_CACHE_LCL:MEM_IO_LCL:"
            "EXT_CACHE_RMT:MEM_IO_RMT"},
           "demand L1D fills from any source"},
          {{"amd64_fam19h_zen4"},
           {"DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:LCL_L2:LOCAL_CCX:NEAR_CACHE_NEAR_FAR:"
            "DRAM_IO_NEAR:FAR_CACHE_NEAR_FAR:DRAM_IO_FAR:ALT_MEM_NEAR_FAR"},
           "demand L1D fills from any source"}},
         {{kArmArchitectedNames, {"L1D_CACHE_REFILL"}}},
         "r03",
         "raw 0x03: the architected L1D_CACHE_REFILL event"},
        {{"llc_misses", "last-level cache misses seen by the core", false},
         {"perf::PERF_COUNT_HW_CACHE_LL:READ:MISS"},
         ~0ull,
         {{concat({kIntelPreSkylake, kIntelSkylakeOn}), {"LONGEST_LAT_CACHE:MISS", "LLC_MISSES"}}},
         {{{"arm_n1", "arm_v1", "arm_n2", "arm_v2"}, {"LL_CACHE_MISS_RD"}},
          {kArmArchitectedNames, {"L2D_CACHE_REFILL"}}},
         "r17",
         "raw 0x17: the architected L2D_CACHE_REFILL event (the last level most ARMv8.0 cores "
         "count)"},
        {{"branch_misses", "mispredicted branches", false},
         {"perf::PERF_COUNT_HW_BRANCH_MISSES"},
         ~0ull,
         {{concat({kIntelPreSkylake, kIntelSkylakeOn}), {"BR_MISP_RETIRED:ALL_BRANCHES"}},
          {kZen, {"RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED"}}},
         {{kArmArchitectedNames, {"BR_MIS_PRED"}}},
         "r10",
         "raw 0x10: the architected BR_MIS_PRED event"},
        {{"stxr_fail", "failed store-exclusives (STXR/STLXR that lost the exclusive monitor)",
          false},
         {},
         ~0ull,
         {},
         {{{"arm_n1", "arm_v1", "arm_n2", "arm_v2", "arm_kunpeng", "arm_thunderx2", "arm_ac76"},
           {"STREX_FAIL_SPEC"}},
          {kArmInstSpecExec, {"INST_SPEC_EXEC_STREX_FAIL"}}},
         "r6e",
         "raw 0x6e: the architected common event STREX_FAIL_SPEC (cores that do not implement it "
         "count 0)",
         kNoStoreExclusiveOnX86},
        {{"stxr_pass", "successful store-exclusives", false},
         {},
         ~0ull,
         {},
         {{{"arm_n1", "arm_v1", "arm_n2", "arm_v2", "arm_kunpeng", "arm_thunderx2", "arm_ac76"},
           {"STREX_PASS_SPEC"}},
          {kArmInstSpecExec, {"INST_SPEC_EXEC_STREX_PASS"}}},
         "r6d",
         "raw 0x6d: the architected common event STREX_PASS_SPEC (cores that do not implement it "
         "count 0)",
         kNoStoreExclusiveOnX86},
        {{"strex", "store-exclusives executed, passed or failed", false},
         {},
         ~0ull,
         {},
         {{{"arm_n1", "arm_v1", "arm_n2", "arm_v2"}, {"STREX_SPEC"}}},
         "r6f",
         "raw 0x6f: the architected common event STREX_SPEC (cores that do not implement it "
         "count 0; stxr_pass + stxr_fail is the same figure)",
         kNoStoreExclusiveOnX86},
        {{"ldrex", "load-exclusives executed (LDXR/LDAXR)", false},
         {},
         ~0ull,
         {},
         {{{"arm_n1", "arm_v1", "arm_n2", "arm_v2", "arm_kunpeng", "arm_thunderx2", "arm_ac76"},
           {"LDREX_SPEC"}},
          {kArmInstSpecExec, {"INST_SPEC_EXEC_LDREX"}}},
         "r6c",
         "raw 0x6c: the architected common event LDREX_SPEC (cores that do not implement it "
         "count 0)",
         kNoStoreExclusiveOnX86},
        {{"bus_access", "bus accesses: traffic between the core and the interconnect", false},
         {},
         ~0ull,
         {},
         {{kArmArchitectedBusNames, {"BUS_ACCESS"}}},
         "r19",
         "raw 0x19: the architected BUS_ACCESS event",
         kArmBusEventOnX86},
        {{"mem_access", "data memory accesses (loads and stores)", false},
         {},
         ~0ull,
         {},
         {{kArmArchitectedBusNames, {"MEM_ACCESS"}}},
         "r13",
         "raw 0x13: the architected MEM_ACCESS event",
         kArmBusEventOnX86},
        {{"lock_loads", "x86 locked (LOCK-prefixed) instructions", false},
         {},
         ~0ull,
         {{kIntelPreSkylake, {"MEM_UOPS_RETIRED:LOCK_LOADS"}},
          {kIntelSkylakeOn, {"MEM_INST_RETIRED:LOCK_LOADS"}},
          {{"amd64_fam17h_zen2"},
           {"RETIRED_LOCK_INSTRUCTIONS:CACHEABLE_LOCKS:BUS_LOCK"},
           "AMD counts every retired locked instruction, not only loads"},
          {{"amd64_fam19h_zen3", "amd64_fam19h_zen4"},
           {"RETIRED_LOCK_INSTRUCTIONS"},
           "AMD counts every retired locked instruction, not only loads"}},
         {},
         {},
         {},
         {},
         kX86OnlyOnArm},
        {{"mem_order_clears", "pipeline flushes caused by memory-ordering conflicts", false},
         {},
         ~0ull,
         {{concat({kIntelPreSkylake, kIntelSkylakeOn}), {"MACHINE_CLEARS:MEMORY_ORDERING"}}},
         {},
         {},
         {},
         {},
         kX86OnlyOnArm},
        {{"task_clock", "CPU time of the thread in ns (software)", true},
         {"perf::PERF_COUNT_SW_TASK_CLOCK"},
         PERF_COUNT_SW_TASK_CLOCK},
        {{"context_switches", "times the thread was switched out (software)", true},
         {"perf::PERF_COUNT_SW_CONTEXT_SWITCHES"},
         PERF_COUNT_SW_CONTEXT_SWITCHES},
        {{"cpu_migrations", "times the thread moved to another CPU (software)", true},
         {"perf::PERF_COUNT_SW_CPU_MIGRATIONS"},
         PERF_COUNT_SW_CPU_MIGRATIONS},
        {{"page_faults", "page faults (software)", true},
         {"perf::PERF_COUNT_SW_PAGE_FAULTS"},
         PERF_COUNT_SW_PAGE_FAULTS},
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
        if (e->software_config != ~0ull) {
            c.builtin_software = true;
            c.software_config = e->software_config;
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
