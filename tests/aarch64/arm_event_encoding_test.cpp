// ARM event aliases encode per core with the arm64 libpfm4, which picks its PMU from
// /proc/cpuinfo. scripts/test-aarch64.sh runs this under qemu-aarch64 inside `unshare -m` with a
// fake /proc/cpuinfo bind-mounted for one core and LOCKPROF_FAKE_CPU naming it; without that
// the test skips (the host's cpuinfo is x86 and would say nothing about ARM tables).
//
// Expected configs are the ARMv8 architected common event numbers (Arm ARM D7.10): LDREX_SPEC
// 0x6c, STREX_PASS_SPEC 0x6d, STREX_FAIL_SPEC 0x6e, L1D_CACHE_REFILL 0x03, CPU_CYCLES 0x11, all
// PERF_TYPE_RAW. cycles and l1d_misses resolve to the kernel's generic events first (portable
// across cores); their per-core names are checked to encode as well, and the raw fallbacks
// (r6e, r6d, r6c, r03, r11) for a core libpfm4 does not know.
#include <linux/perf_event.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/pmu/aliases.hpp"
#include "lockprof/pmu/events.hpp"
#include "lockprof/pmu/libpfm.hpp"

using namespace lockprof;
using namespace lockprof::pmu;

namespace {

struct FakeCpu {
    unsigned implementer, part;
    std::string libpfm_model;                   // "" where libpfm4 4.13 knows no table for the part
    std::string strex_fail, strex_pass, ldrex;  // event names in that table
    bool architected_names;                     // the table names CPU_CYCLES / L1D_CACHE_REFILL
};

const std::map<std::string, FakeCpu>& fakes() {
    static const std::map<std::string, FakeCpu> table = {
        {"neoverse-n1",
         {0x41, 0xd0c, "arm_n1", "STREX_FAIL_SPEC", "STREX_PASS_SPEC", "LDREX_SPEC", true}},
        {"kunpeng-920",
         {0x48, 0xd01, "arm_kunpeng", "STREX_FAIL_SPEC", "STREX_PASS_SPEC", "LDREX_SPEC", true}},
        {"cortex-a57",
         {0x41, 0xd07, "arm_ac57", "INST_SPEC_EXEC_STREX_FAIL", "INST_SPEC_EXEC_STREX_PASS",
          "INST_SPEC_EXEC_LDREX", false}},
        // A part number no ARM core has (yet): the raw architected fallback must take over.
        {"unknown", {0x41, 0xdff, "", "", "", "", false}},
    };
    return table;
}

struct Expected {
    std::string alias, pfm_name;
    std::uint32_t type;
    std::uint64_t config;
};

void report(const std::string& cpu, const std::string& what, const std::string& name,
            const perf_event_attr& attr) {
    std::printf("[ ENCODING ] %-12s %-22s -> %-40s type %u config 0x%llx\n", cpu.c_str(),
                what.c_str(), name.c_str(), attr.type,
                static_cast<unsigned long long>(attr.config));
}

TEST(ArmEventEncoding, AliasesResolvePerCore) {
    const char* name = std::getenv("LOCKPROF_FAKE_CPU");
    if (!name)
        GTEST_SKIP() << "LOCKPROF_FAKE_CPU unset: scripts/test-aarch64.sh runs this in unshare -m "
                        "with a fake /proc/cpuinfo per core";
    const auto it = fakes().find(name);
    ASSERT_NE(it, fakes().end()) << "unknown LOCKPROF_FAKE_CPU " << name;
    const FakeCpu& fake = it->second;

    // The bind mount really took effect (else everything below would test the host).
    const auto identity = arch::cpu_identity();
    ASSERT_EQ(identity.implementer, fake.implementer);
    ASSERT_EQ(identity.part, fake.part);
    EXPECT_EQ(libpfm::core_pmu().name, fake.libpfm_model);
    std::printf("[ ENCODING ] %s: MIDR 0x%02x/0x%03x (%s), libpfm4 core PMU '%s'\n", name,
                identity.implementer, identity.part, identity.model_name.c_str(),
                libpfm::core_pmu().name.c_str());

    const std::string m = fake.libpfm_model + "::";
    const bool known = !fake.libpfm_model.empty();
    const std::vector<Expected> expected = {
        {"stxr_fail", known ? m + fake.strex_fail : "perf_raw::r6e", PERF_TYPE_RAW, 0x6e},
        {"stxr_pass", known ? m + fake.strex_pass : "perf_raw::r6d", PERF_TYPE_RAW, 0x6d},
        {"ldrex", known ? m + fake.ldrex : "perf_raw::r6c", PERF_TYPE_RAW, 0x6c},
        {"l1d_misses", "perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS", PERF_TYPE_HW_CACHE,
         PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
             (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)},
        {"cycles", "perf::PERF_COUNT_HW_CPU_CYCLES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    };
    for (const auto& e : expected) {
        const Resolution r = try_resolve_event(e.alias, false);
        ASSERT_EQ(r.status, Resolution::Status::ok) << e.alias << ": " << r.message;
        report(name, e.alias, r.event.pfm_name, r.event.attr);
        EXPECT_EQ(r.event.pfm_name, e.pfm_name) << e.alias;
        EXPECT_EQ(r.event.attr.type, e.type) << e.alias;
        EXPECT_EQ(r.event.attr.config, e.config) << e.alias;
    }

    // The per-core names behind cycles / l1d_misses, and the raw fallback of every alias: what
    // a run uses when the generic event is missing or the core is unknown.
    struct Direct {
        std::string what, pfm_name;
        std::uint64_t config;
    };
    std::vector<Direct> direct = {{"stxr_fail raw", "perf_raw::r6e", 0x6e},
                                  {"stxr_pass raw", "perf_raw::r6d", 0x6d},
                                  {"ldrex raw", "perf_raw::r6c", 0x6c},
                                  {"l1d_misses raw", "perf_raw::r03", 0x03},
                                  {"cycles raw", "perf_raw::r11", 0x11}};
    if (fake.architected_names) {
        direct.push_back({"l1d_misses per core", m + "L1D_CACHE_REFILL", 0x03});
        direct.push_back({"cycles per core", m + "CPU_CYCLES", 0x11});
    }
    for (const auto& d : direct) {
        // The alias table must list the name it is checked for here.
        const std::string alias = d.what.substr(0, d.what.find(' '));
        bool listed = false;
        for (const auto& c : plan_alias(alias, Isa::aarch64, fake.libpfm_model).candidates)
            listed |= c.pfm_name == d.pfm_name;
        EXPECT_TRUE(listed) << d.pfm_name << " is not a candidate of " << alias << " on "
                            << (known ? fake.libpfm_model : "an unknown core");
        const auto enc = libpfm::encode(d.pfm_name, false);
        ASSERT_EQ(enc.error, 0) << d.pfm_name << ": " << enc.message;
        report(name, d.what, d.pfm_name, enc.attr);
        EXPECT_EQ(enc.attr.type, static_cast<std::uint32_t>(PERF_TYPE_RAW)) << d.pfm_name;
        EXPECT_EQ(enc.attr.config, d.config) << d.pfm_name;
    }
}

}  // namespace
