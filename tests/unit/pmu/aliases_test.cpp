// The alias table: every alias resolves or is refused on each PMU model it names, the names
// are real libpfm4 names (encoded with LIBPFM_FORCE_PMU where this libpfm4 build has the PMU),
// and x86 refuses the store-exclusive events with the reason.
#include "lockprof/pmu/aliases.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/pmu/events.hpp"
#include "lockprof/pmu/libpfm.hpp"

using namespace lockprof;
using namespace lockprof::pmu;

namespace {

// libpfm4 cannot switch PMUs in-process (pfm_terminate leaves earlier PMUs active), so each
// forced model is checked in a fresh child process of this test binary.
constexpr const char* kChildFlag = "LOCKPROF_PMU_FORCED_CHILD";

struct ChildResult {
    int exit_code = -1;
    std::string output;
};

ChildResult run_child(const std::string& model, Isa isa) {
    char self[4096] = {};
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return {};
    const std::string command = fmt::format(
        "{}=1 LOCKPROF_PMU_FORCED_ISA={} LIBPFM_FORCE_PMU={} '{}' "
        "--gtest_filter=PmuAliasesForcedChild.CheckOneModel 2>&1",
        kChildFlag, isa == Isa::x86_64 ? "x86_64" : "aarch64", model, std::string(self, n));
    ChildResult r;
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return r;
    char buffer[4096];
    while (fgets(buffer, sizeof buffer, pipe)) r.output += buffer;
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

void check_models_encode(Isa isa) {
    std::map<std::string, bool> name_encoded_somewhere;  // "EVENT" -> encoded on some model
    std::vector<std::string> unsupported;
    for (const auto& model : known_pmu_models(isa)) {
        const ChildResult child = run_child(model, isa);
        if (child.output.find("UNSUPPORTED-PMU") != std::string::npos) {
            unsupported.push_back(model);
            continue;
        }
        EXPECT_EQ(child.exit_code, 0) << model << ":\n" << child.output;
        std::istringstream lines(child.output);
        std::string line;
        while (std::getline(lines, line)) {
            std::istringstream words(line);
            std::string tag, event;
            words >> tag >> event;
            if (tag == "NAME-OK") name_encoded_somewhere[event] = true;
            if (tag == "NAME-FAIL") name_encoded_somewhere.emplace(event, false);
        }
    }
    for (const auto& [event, encoded] : name_encoded_somewhere)
        EXPECT_TRUE(encoded) << event << " is listed in the alias table but libpfm4 encodes it "
                             << "on none of the PMU models it is listed for";
    if (unsupported.size() == known_pmu_models(isa).size()) {
        std::string names;
        for (const auto& m : unsupported) names += " " + m;
        GTEST_SKIP() << "this libpfm4 build has none of these PMU models (" << names
                     << "); the aarch64 suite encodes them with arm64 libpfm4 under qemu";
    }
}

}  // namespace

// Runs only as the child of *ModelNamesEncodeInLibpfm4, with LIBPFM_FORCE_PMU set before
// libpfm4 first initialises in this process.
TEST(PmuAliasesForcedChild, CheckOneModel) {
    if (!getenv(kChildFlag))
        GTEST_SKIP() << "helper: runs in a child process of PmuAliases.*ModelNamesEncodeInLibpfm4";
    const std::string model = getenv("LIBPFM_FORCE_PMU");
    const Isa isa =
        std::string(getenv("LOCKPROF_PMU_FORCED_ISA")) == "x86_64" ? Isa::x86_64 : Isa::aarch64;
    if (libpfm::core_pmu().name != model) {
        std::printf("UNSUPPORTED-PMU %s\n", model.c_str());
        return;
    }
    ASSERT_FALSE(libpfm::generic_perf_active());
    const std::string prefix = model + "::";
    for (const auto& alias : aliases()) {
        const AliasPlan plan = plan_alias(alias.name, isa, model);
        if (!plan.refusal.empty()) continue;  // refused with a reason: allowed
        bool model_specific = false, encoded = false;
        for (const auto& c : plan.candidates) {
            const auto enc = libpfm::encode(c.pfm_name, false);
            if (c.pfm_name.rfind(prefix, 0) == 0) {
                model_specific = true;
                std::printf("%s %s\n", enc.error == 0 ? "NAME-OK" : "NAME-FAIL",
                            c.pfm_name.substr(prefix.size()).c_str());
            }
            encoded |= enc.error == 0 || c.builtin_software;
        }
        // Aliases with only a generic perf:: name are refused while libpfm4's perf PMU is
        // hidden; everything with a name for this model must encode with one of them.
        if (model_specific || alias.software) {
            EXPECT_TRUE(encoded) << alias.name << " has names for " << model << " but none encodes";
        }
        if (isa != host_isa()) continue;
        const auto r = try_resolve_event(alias.name, false);
        if (encoded) {
            EXPECT_EQ(r.status, Resolution::Status::ok) << alias.name << ": " << r.message;
        } else {
            EXPECT_NE(r.message.find(model), std::string::npos) << r.message;
        }
    }
    if (model == "skl") {
        const auto e = resolve_event("skl::MEM_INST_RETIRED:LOCK_LOADS", false);
        EXPECT_EQ(e.pfm_name, "skl::MEM_INST_RETIRED:LOCK_LOADS");
        EXPECT_EQ(e.attr.config, 0x21d0ull);
        EXPECT_EQ(resolve_event("lock_loads", false).pfm_name, "skl::MEM_INST_RETIRED:LOCK_LOADS");
    }
}

// docs/events.md's alias table and the alias table in aliases.cpp list the same aliases, so a
// new alias is its entry and its row, and neither can be forgotten.
TEST(PmuAliases, TableListsEveryDocumentedAlias) {
    const std::string path = std::string(LOCKPROF_SOURCE_DIR) + "/docs/events.md";
    std::ifstream doc(path);
    // The emulated arm64 system's guest holds the test binaries but not the source tree; the
    // table is the same on every architecture, and the host's run checks it.
    if (!doc) GTEST_SKIP() << path << " is not here (a machine with the binaries only)";
    std::set<std::string> expected;
    bool in_table = false;
    for (std::string line; std::getline(doc, line);) {
        if (line.rfind("| alias |", 0) == 0)
            in_table = true;
        else if (in_table && line.rfind("| `", 0) == 0)
            expected.insert(line.substr(3, line.find('`', 3) - 3));
        else if (in_table && line.rfind("|---", 0) != 0)
            break;
    }
    ASSERT_GE(expected.size(), 10u) << "the alias table of docs/events.md was not found";
    std::set<std::string> listed;
    for (const auto& a : aliases()) listed.emplace(a.name);
    EXPECT_EQ(listed, expected);
    EXPECT_EQ(find_alias("nope"), nullptr);
    EXPECT_TRUE(find_alias("task_clock")->software);
    EXPECT_FALSE(find_alias("cycles")->software);
}

TEST(PmuAliases, EveryAliasResolvesOrRefusesOnEveryListedModel) {
    for (Isa isa : {Isa::x86_64, Isa::aarch64}) {
        for (const auto& model : known_pmu_models(isa)) {
            for (const auto& alias : aliases()) {
                const AliasPlan plan = plan_alias(alias.name, isa, model);
                EXPECT_NE(plan.candidates.empty(), plan.refusal.empty())
                    << alias.name << " on " << model << ": needs candidates xor a refusal";
            }
        }
    }
    EXPECT_TRUE(plan_alias("not_an_alias", Isa::x86_64, "skl").candidates.empty());
    EXPECT_TRUE(plan_alias("not_an_alias", Isa::x86_64, "skl").refusal.empty());
}

TEST(PmuAliases, StoreExclusiveCandidatesFollowThePmuModel) {
    auto first = [](std::string_view alias, std::string_view model) {
        return plan_alias(alias, Isa::aarch64, model).candidates.front().pfm_name;
    };
    for (const char* m :
         {"arm_n1", "arm_v1", "arm_n2", "arm_v2", "arm_kunpeng", "arm_thunderx2", "arm_ac76"}) {
        EXPECT_EQ(first("stxr_fail", m), std::string(m) + "::STREX_FAIL_SPEC");
        EXPECT_EQ(first("stxr_pass", m), std::string(m) + "::STREX_PASS_SPEC");
    }
    for (const char* m : {"arm_ac57", "arm_xgene"}) {
        EXPECT_EQ(first("stxr_fail", m), std::string(m) + "::INST_SPEC_EXEC_STREX_FAIL");
        EXPECT_EQ(first("ldrex", m), std::string(m) + "::INST_SPEC_EXEC_LDREX");
    }
    // Any other ARMv8 core: the raw architected event, said so.
    for (const char* m : {"arm_ac53", "arm_some_future_core", ""}) {
        const auto plan = plan_alias("stxr_fail", Isa::aarch64, m);
        ASSERT_FALSE(plan.candidates.empty()) << m;
        EXPECT_EQ(plan.candidates.back().pfm_name, "perf_raw::r6e");
        EXPECT_NE(plan.candidates.back().note.find("architected"), std::string::npos);
    }
    // The raw fallback stays last behind the named event.
    EXPECT_EQ(plan_alias("stxr_fail", Isa::aarch64, "arm_n1").candidates.back().pfm_name,
              "perf_raw::r6e");
}

TEST(PmuAliases, X86RefusesStoreExclusiveEventsWithReasonAndSuggestions) {
    for (const char* alias : {"stxr_fail", "stxr_pass", "strex", "ldrex"}) {
        for (const char* model : {"skl", "amd64_fam19h_zen3", ""}) {
            const auto plan = plan_alias(alias, Isa::x86_64, model);
            EXPECT_TRUE(plan.candidates.empty());
            EXPECT_NE(plan.refusal.find("no load-linked/store-conditional"), std::string::npos);
            EXPECT_NE(plan.refusal.find("lock_loads"), std::string::npos);
            EXPECT_NE(plan.refusal.find("mem_order_clears"), std::string::npos);
            EXPECT_NE(plan.refusal.find("cache-line transfer"), std::string::npos);
        }
    }
    // And ARM refuses the x86-only ones.
    EXPECT_NE(plan_alias("lock_loads", Isa::aarch64, "arm_n1").refusal.find("x86"),
              std::string::npos);
}

TEST(PmuAliases, HostRefusalComesThroughResolveEventAsUsageError) {
    if (host_isa() != Isa::x86_64) GTEST_SKIP() << "x86 refusal; this host is aarch64";
    try {
        resolve_event("stxr_fail", false);
        FAIL() << "stxr_fail resolved on x86";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("x86"), std::string::npos);
        EXPECT_EQ(e.exit_code(), 2);
    }
}

TEST(PmuAliases, X86ModelNamesEncodeInLibpfm4) {
    check_models_encode(Isa::x86_64);
}

TEST(PmuAliases, ArmModelNamesEncodeInLibpfm4) {
    check_models_encode(Isa::aarch64);
}
