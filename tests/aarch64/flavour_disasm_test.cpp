// Each ISA flavour emits the instructions it claims, checked on this cross-built binary's own
// code with GNU objdump (Capstone 4.0.2, Debian's only version, cannot decode ARMv8.1 LSE):
//   tas@llsc  ldxr/ldaxr then stxr with no compare between (stores even when the lock is held)
//   cas@llsc  a compare and a branch out of the LL/SC sequence before its stxr
//   tas@lse   swp*, cas@lse cas*, and no store-exclusive anywhere in the lse flavour
//   @outline  calls to libgcc's __aarch64_* helpers (which pick LSE or LL/SC at run time)
// The code checked is workload::acquire_probe<Lock> (workload/loop.hpp), the out-of-line acquire
// path `lockprof list-locks --disasm` shows, compiled in the flavour unit with its flags.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/cli.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/symbols/disassembler.hpp"

using namespace lockprof;
using symbols::FunctionCode;
using symbols::Instruction;

namespace {

constexpr const char* kObjdump = "aarch64-linux-gnu-objdump";

bool starts(const std::string& s, std::string_view prefix) {
    return s.rfind(prefix, 0) == 0;
}
bool exclusive_load(const Instruction& i) {
    return starts(i.mnemonic, "ldx") || starts(i.mnemonic, "ldax");
}
bool exclusive_store(const Instruction& i) {
    return starts(i.mnemonic, "stx") || starts(i.mnemonic, "stlx");
}
bool lse_atomic(const Instruction& i) {
    for (std::string_view p :
         {"swp", "cas", "ldadd", "ldclr", "ldset", "ldeor", "ldsmax", "ldsmin", "ldumax", "ldumin",
          "stadd", "stclr", "stset", "steor", "stsmax", "stsmin", "stumax", "stumin"})
        if (starts(i.mnemonic, p)) return true;
    return false;
}
bool outline_call(const Instruction& i) {
    return i.mnemonic == "bl" && starts(i.reference, "__aarch64_");
}
bool compare(const Instruction& i) {
    for (std::string_view m : {"cmp", "cmn", "subs", "adds", "tst", "ands", "ccmp", "ccmn"})
        if (i.mnemonic == m) return true;
    return false;
}
bool conditional_branch(const Instruction& i) {
    return starts(i.mnemonic, "b.") || i.mnemonic == "cbz" || i.mnemonic == "cbnz" ||
           i.mnemonic == "tbz" || i.mnemonic == "tbnz";
}

std::filesystem::path self() {
    return std::filesystem::read_symlink("/proc/self/exe");
}

// Every acquire probe of `flavour`, e.g. lockprof::workload::llsc::acquire_probe<...>.
std::vector<FunctionCode> probes(const std::string& flavour, const std::string& lock_type = "") {
    const std::string prefix =
        "void lockprof::workload::" + flavour + "::acquire_probe<" +
        (lock_type.empty() ? "" : "lockprof::locks::" + flavour + "::" + lock_type + "<");
    std::vector<FunctionCode> out;
    const symbols::Disassembler disassembler(kObjdump);
    for (auto& f : symbols::function_symbols(self())) {
        if (!starts(f.name, prefix)) continue;
        f.instructions = disassembler.disassemble(self(), f.address, f.address + f.size);
        out.push_back(std::move(f));
    }
    return out;
}

// The delay policy a probe was instantiated with: "(lockprof::arch::Delay)4" is wfe, whose
// wait arms the exclusive monitor with an ldaxr of its own (arch::spin_until).
bool is_wfe_probe(const FunctionCode& f) {
    return f.name.find("(lockprof::arch::Delay)4") != std::string::npos;
}

std::string listing(const FunctionCode& f) {
    std::string out =
        "  " + f.name.substr(0, f.name.find('(', f.name.find("acquire_probe"))) + "\n";
    for (const auto& i : f.instructions)
        out +=
            "    " +
            std::string(lse_atomic(i) || exclusive_load(i) || exclusive_store(i) || outline_call(i)
                            ? "* "
                            : "  ") +
            i.text() + (i.reference.empty() || i.branch_target ? "" : " <" + i.reference + ">") +
            "\n";
    return out;
}

class FlavourDisasm : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!lockprof::program_exists(kObjdump))
            GTEST_SKIP() << kObjdump << " not found: install binutils-aarch64-linux-gnu";
    }
};

// The no-delay instantiation: the acquire path and nothing else.
FunctionCode one_probe(const std::string& flavour, const std::string& lock_type) {
    for (auto& f : probes(flavour, lock_type))
        if (f.name.find("(lockprof::arch::Delay)0>") != std::string::npos) return f;
    ADD_FAILURE() << "no acquire_probe for " << lock_type << " in flavour " << flavour;
    return {};
}

TEST_F(FlavourDisasm, TasLlscStoresWithoutComparing) {
    const FunctionCode f = one_probe("llsc", "TasLock");
    std::printf("tas@llsc acquire:\n%s", listing(f).c_str());
    const auto& code = f.instructions;
    unsigned pairs = 0;
    for (std::size_t i = 0; i < code.size(); ++i) {
        if (!exclusive_load(code[i])) continue;
        std::size_t j = i + 1;
        while (j < code.size() && !exclusive_store(code[j])) {
            EXPECT_FALSE(compare(code[j]) || conditional_branch(code[j]))
                << "tas@llsc tests the value before its store-exclusive: " << code[j].text();
            ++j;
        }
        ASSERT_LT(j, code.size()) << "ldxr without a stxr after it";
        // The stxr status is retried: a conditional branch back to the load right after.
        ASSERT_LT(j + 1, code.size());
        EXPECT_TRUE(conditional_branch(code[j + 1]) && code[j + 1].branch_target &&
                    *code[j + 1].branch_target == code[i].address)
            << "no retry of a failed stxr: " << code[j + 1].text();
        ++pairs;
    }
    EXPECT_GE(pairs, 1u) << "tas@llsc has no ldxr/stxr pair";
    for (const auto& i : code) EXPECT_FALSE(lse_atomic(i) || outline_call(i)) << i.text();
}

TEST_F(FlavourDisasm, CasLlscBranchesOutBeforeStoring) {
    const FunctionCode f = one_probe("llsc", "CasLock");
    std::printf("cas@llsc acquire:\n%s", listing(f).c_str());
    const auto& code = f.instructions;
    unsigned sequences = 0;
    for (std::size_t i = 0; i < code.size(); ++i) {
        if (!exclusive_load(code[i])) continue;
        std::size_t j = i + 1;
        while (j < code.size() && !exclusive_store(code[j])) ++j;
        ASSERT_LT(j, code.size()) << "ldxr without a stxr after it";
        bool compared = false, leaves = false;
        for (std::size_t k = i + 1; k < j; ++k) {
            // cbz/cbnz compare with zero themselves; b.cond needs a cmp before it.
            compared |= compare(code[k]) || code[k].mnemonic == "cbz" || code[k].mnemonic == "cbnz";
            if (compared && conditional_branch(code[k]) && code[k].branch_target)
                leaves |= *code[k].branch_target > code[j].address ||
                          *code[k].branch_target < code[i].address;
        }
        EXPECT_TRUE(compared && leaves) << "cas@llsc: no compare and branch out between "
                                        << code[i].text() << " and " << code[j].text();
        ++sequences;
    }
    EXPECT_GE(sequences, 1u) << "cas@llsc has no ldxr/stxr sequence";
    for (const auto& i : code) EXPECT_FALSE(lse_atomic(i) || outline_call(i)) << i.text();
}

TEST_F(FlavourDisasm, LseUsesSwpForTasAndCasForCas) {
    const FunctionCode tas = one_probe("lse", "TasLock");
    const FunctionCode cas = one_probe("lse", "CasLock");
    std::printf("tas@lse acquire:\n%scas@lse acquire:\n%s", listing(tas).c_str(),
                listing(cas).c_str());
    auto has = [](const FunctionCode& f, std::string_view prefix) {
        for (const auto& i : f.instructions)
            if (starts(i.mnemonic, prefix)) return true;
        return false;
    };
    EXPECT_TRUE(has(tas, "swp")) << "tas@lse has no swp";
    EXPECT_TRUE(has(cas, "cas")) << "cas@lse has no cas";
    for (const auto* f : {&tas, &cas})
        for (const auto& i : f->instructions)
            EXPECT_FALSE(exclusive_load(i) || exclusive_store(i) || outline_call(i)) << i.text();
}

TEST_F(FlavourDisasm, OutlineCallsLibgccHelpers) {
    const FunctionCode tas = one_probe("outline", "TasLock");
    const FunctionCode cas = one_probe("outline", "CasLock");
    std::printf("tas@outline acquire:\n%scas@outline acquire:\n%s", listing(tas).c_str(),
                listing(cas).c_str());
    auto calls = [](const FunctionCode& f, std::string_view helper) {
        for (const auto& i : f.instructions)
            if (i.mnemonic == "bl" && starts(i.reference, helper)) return true;
        return false;
    };
    EXPECT_TRUE(calls(tas, "__aarch64_swp4_acq")) << "tas@outline does not call the swp helper";
    EXPECT_TRUE(calls(cas, "__aarch64_cas4_acq")) << "cas@outline does not call the cas helper";
    for (const auto* f : {&tas, &cas})
        for (const auto& i : f->instructions)
            EXPECT_FALSE(exclusive_load(i) || exclusive_store(i) || lse_atomic(i)) << i.text();
}

// Across every lock and delay of a flavour: nothing of another flavour leaks in (an llsc
// kernel calling an outline helper would silently run LSE on LSE cores; an LSE instruction in
// the default build would SIGILL on ARMv8.0 cores).
TEST_F(FlavourDisasm, NoFlavourUsesAnotherFlavoursAtomics) {
    struct Rule {
        const char* flavour;
        bool lse_allowed, exclusive_store_allowed, outline_allowed;
    };
    for (const Rule& rule :
         {Rule{"llsc", false, true, false}, Rule{"lse", true, false, false},
          Rule{"outline", false, false, true}, Rule{"native", false, true, true}}) {
        const auto all = probes(rule.flavour);
        EXPECT_GE(all.size(), 13u) << "too few acquire probes in flavour " << rule.flavour;
        unsigned lse = 0, stores = 0, helpers = 0;
        for (const auto& f : all) {
            for (const auto& i : f.instructions) {
                lse += lse_atomic(i);
                stores += exclusive_store(i);
                helpers += outline_call(i);
                EXPECT_TRUE(rule.lse_allowed || !lse_atomic(i))
                    << rule.flavour << ": " << f.name << ": " << i.text();
                EXPECT_TRUE(rule.exclusive_store_allowed || !exclusive_store(i))
                    << rule.flavour << ": " << f.name << ": " << i.text();
                EXPECT_TRUE(rule.outline_allowed || !outline_call(i))
                    << rule.flavour << ": " << f.name << ": " << i.text();
            }
            // Only the wfe wait may hold an exclusive load outside the llsc flavour.
            if (std::string(rule.flavour) == "lse" && !is_wfe_probe(f)) {
                for (const auto& i : f.instructions)
                    EXPECT_FALSE(exclusive_load(i)) << f.name << ": " << i.text();
            }
        }
        std::printf(
            "[ FLAVOUR  ] %-8s %3zu acquire paths: %3u LSE atomics, %3u store-exclusives, "
            "%3u __aarch64_* calls\n",
            rule.flavour, all.size(), lse, stores, helpers);
    }
}

// Lock type's try_lock in `flavour` (locks::try_lock_probe, instantiated per flavour by
// locks/catalog.hpp), e.g. lockprof::locks::llsc::try_lock_probe<lockprof::locks::llsc::McsLock<.
FunctionCode try_lock_probe(const std::string& flavour, const std::string& lock_type) {
    const std::string prefix = "bool lockprof::locks::" + flavour +
                               "::try_lock_probe<lockprof::locks::" + flavour + "::" + lock_type +
                               "<";
    const symbols::Disassembler disassembler(kObjdump);
    for (auto& f : symbols::function_symbols(self())) {
        if (!starts(f.name, prefix)) continue;
        f.instructions = disassembler.disassemble(self(), f.address, f.address + f.size);
        return f;
    }
    ADD_FAILURE() << "no try_lock_probe for " << lock_type << " in flavour " << flavour;
    return {};
}

// An LSE atomic's ordering is its suffix after the operation: a (acquire), l (release), al
// (both), then b or h for the size: casal and casl release, cas and casa do not.
bool lse_release(const std::string& m) {
    for (std::string_view stem : {"casp", "cas", "swp", "ldadd", "ldclr", "ldset", "ldeor",
                                  "ldsmax", "ldsmin", "ldumax", "ldumin"}) {
        if (!starts(m, stem)) continue;
        std::string rest = m.substr(stem.size());
        if (!rest.empty() && (rest.back() == 'b' || rest.back() == 'h')) rest.pop_back();
        return rest == "l" || rest == "al";
    }
    return false;
}

// The read-modify-write instructions of a try_lock and whether each has release semantics:
// LL/SC stlxr (not stxr), LSE casal/casl (not cas/casa), and the outline helpers
// __aarch64_cas*_acq_rel / _rel (not _acq / _relax).
struct Publish {
    std::string text;
    bool release;
};
std::vector<Publish> publishing_rmws(const FunctionCode& f) {
    std::vector<Publish> out;
    for (const auto& i : f.instructions) {
        const std::string& m = i.mnemonic;
        if (exclusive_store(i))
            out.push_back({i.text(), starts(m, "stlx")});
        else if (lse_atomic(i))
            out.push_back({i.text(), lse_release(m)});
        else if (outline_call(i))
            out.push_back({"bl " + i.reference,
                           i.reference.find("_acq_rel") != std::string::npos ||
                               (i.reference.size() > 4 &&
                                i.reference.compare(i.reference.size() - 4, 4, "_rel") == 0)});
    }
    return out;
}

// MCS try_lock stores next = nullptr into its node and publishes the node with one
// compare-and-swap on the tail. Unless that store is ordered before the node becomes visible, a
// successor that found our node at the tail can link itself (our node's next = it) before our
// late nullptr store lands; the store then erases the link and unlock waits for it forever. The
// compare-and-swap must therefore be a release (concurrencykit fences there), in every flavour.
TEST_F(FlavourDisasm, McsTryLockPublishesItsNodeWithARelease) {
    for (const std::string flavour : {"llsc", "lse", "outline", "native"}) {
        const FunctionCode f = try_lock_probe(flavour, "McsLock");
        std::printf("mcs try_lock (%s):\n%s", flavour.c_str(), listing(f).c_str());
        const auto rmws = publishing_rmws(f);
        EXPECT_FALSE(rmws.empty()) << "mcs@" << flavour << ": no compare-and-swap in try_lock";
        for (const auto& rmw : rmws)
            EXPECT_TRUE(rmw.release)
                << "mcs@" << flavour
                << " try_lock publishes its node without release: " << rmw.text;
    }
}

// `lockprof list-locks --disasm NAME --delay DELAY`, captured.
std::string list_locks_disasm(const std::string& name, const std::string& delay) {
    std::ostringstream captured;
    auto* old = std::cout.rdbuf(captured.rdbuf());
    try {
        cli::list_locks_command({"--disasm", name, "--delay", delay}, {});
    } catch (...) {
        std::cout.rdbuf(old);
        throw;
    }
    std::cout.rdbuf(old);
    return captured.str();
}

// The part of a list-locks --disasm listing that belongs to `lock` (up to the blank line).
std::string section_of(const std::string& out, const std::string& lock) {
    const std::size_t at = out.find(lock + " (delay ");
    if (at == std::string::npos) return "<missing>";
    return out.substr(at, out.find("\n\n", at) - at);
}

// PostgreSQL's TAS is __sync_lock_test_and_set in every release, not an acquire exchange: on
// ARMv8.0 `ldxr; stxr; cbnz; dmb ish` (a plain exclusive load and a full barrier after), with LSE
// `swpa`, with outline atomics the libgcc helper __aarch64_swp4_sync. The pg*-slock fast path
// (S_LOCK's inlined TAS) must be that code, or it measures a different lock.
TEST_F(FlavourDisasm, PgSlockTasIsSyncLockTestAndSet) {
    for (const std::string lock : {"pg-slock", "pg13-slock", "pg15-slock", "pg18-slock"}) {
        const std::string delay = lock == "pg13-slock" ? "none" : "isb";
        const std::string out = list_locks_disasm(lock, delay);
        const std::string llsc = section_of(out, lock + "@llsc");
        const std::string lse = section_of(out, lock + "@lse");
        const std::string outline = section_of(out, lock + "@outline");
        std::printf("%s\n\n%s\n\n%s\n\n", llsc.c_str(), lse.c_str(), outline.c_str());
        EXPECT_NE(llsc.find("atomics: ldxr, stxr"), std::string::npos) << llsc;
        EXPECT_EQ(llsc.find("ldaxr"), std::string::npos) << lock << "@llsc: an acquire exchange";
        EXPECT_NE(llsc.find("dmb ish"), std::string::npos) << lock << "@llsc: no dmb ish after TAS";
        EXPECT_NE(lse.find("atomics: swpa"), std::string::npos) << lse;
        EXPECT_NE(outline.find("atomics: bl __aarch64_swp4_sync"), std::string::npos) << outline;
    }
}

// `lockprof list-locks --disasm` of every lock, each with its default delay, captured once.
const std::string& whole_catalog_disasm() {
    static const std::string out = [] {
        std::ostringstream captured;
        auto* old = std::cout.rdbuf(captured.rdbuf());
        try {
            cli::list_locks_command({"--disasm"}, {});
        } catch (...) {
            std::cout.rdbuf(old);
            throw;
        }
        std::cout.rdbuf(old);
        return captured.str();
    }();
    return out;
}

// The atomics a section's header names, as a list to search: ", ldaxr, stxr, ".
std::string atomics_line(const std::string& section) {
    const std::size_t at = section.find("atomics: ");
    if (at == std::string::npos) return "<none listed>";
    return ", " + section.substr(at + 9, section.find('\n', at) - at - 9) + ", ";
}

// An LSE operation in any ordering and size: "swp" matches swp, swpa, swpal, swph...; an
// ld<op> also as its st<op> alias (the result unused: stadd is ldadd into the zero register).
bool lists_lse_op(const std::string& atomics, const std::string& op) {
    std::vector<std::string> stems = {op};
    if (op.rfind("ld", 0) == 0) stems.push_back("st" + op.substr(2));
    for (const auto& stem : stems)
        if (atomics.find(", " + stem) != std::string::npos) return true;
    return false;
}

// Every lock of the catalog in every flavour: the acquire path (with the lock functions it
// calls, where a slow path is kept out of line) uses the atomic its algorithm is built on, in
// the flavour's form: llsc an exclusive load and store and nothing of LSE, lse the LSE
// operation and no store-exclusive, outline the libgcc helper of that operation.
TEST_F(FlavourDisasm, EveryLockUsesItsAtomicInEveryFlavour) {
    struct Expected {
        const char* algorithm;
        std::vector<const char*> lse;  // LSE operations (stems), each must appear
    };
    const std::vector<Expected> catalog = {
        {"tas", {"swp"}},
        {"ttas", {"swp"}},
        {"cas", {"cas"}},
        {"ttas-cas", {"cas"}},
        {"tas-backoff", {"swp"}},
        {"ttas-backoff", {"swp"}},
        {"ticket", {"ldadd"}},
        {"mcs", {"swp"}},
        {"clh", {"swp"}},
        {"pg-slock", {"swp"}},
        {"pg13-slock", {"swp"}},
        {"pg15-slock", {"swp"}},
        {"pg18-slock", {"swp"}},
        // The fast path's compare-and-swap, the slow path's pending bit (fetch_or) and tail
        // exchange (a 16-bit swap), as the kernel's arm64 qspinlock.
        {"qspinlock", {"cas", "ldset", "swp"}},
        {"osq", {"swp", "cas"}},
        {"event-mutex", {"cas"}},
        {"rw-cas", {"cas"}},
        {"spin-rw", {"cas", "ldset"}},
        {"lockref", {"cas"}},
        {"refcount", {"ldadd"}},
    };
    const std::string& out = whole_catalog_disasm();
    for (const auto& e : catalog) {
        for (const std::string flavour : {"llsc", "lse", "outline"}) {
            const std::string lock = std::string(e.algorithm) + "@" + flavour;
            SCOPED_TRACE(lock);
            const std::size_t at = out.find(lock + " (delay ");
            ASSERT_NE(at, std::string::npos) << lock << " missing from list-locks --disasm";
            const std::string section = out.substr(at, out.find("\n\n", at) - at);
            const std::string atomics = atomics_line(section);
            const bool exclusive_store = atomics.find(", stxr") != std::string::npos ||
                                         atomics.find(", stlxr") != std::string::npos;
            const bool exclusive_load = atomics.find(", ldxr") != std::string::npos ||
                                        atomics.find(", ldaxr") != std::string::npos;
            const bool helper = atomics.find(", bl __aarch64_") != std::string::npos;
            bool lse = false;
            for (const char* op : {"swp", "cas", "ldadd", "ldset", "ldclr", "ldeor"})
                lse |= lists_lse_op(atomics, op);
            if (flavour == "llsc") {
                EXPECT_TRUE(exclusive_load && exclusive_store) << section;
                EXPECT_FALSE(lse || helper) << section;
            } else if (flavour == "lse") {
                for (const char* op : e.lse)
                    EXPECT_TRUE(lists_lse_op(atomics, op)) << op << "\n" << section;
                EXPECT_FALSE(exclusive_store || helper) << section;
            } else {
                for (const char* op : e.lse) {
                    const std::string call = std::string(", bl __aarch64_") + op;
                    EXPECT_NE(atomics.find(call), std::string::npos) << op << "\n" << section;
                }
                EXPECT_FALSE(exclusive_store || lse) << section;
            }
        }
    }
    // Every flavour-dependent lock of the catalog has an expectation above.
    std::size_t llsc = 0;
    for (std::size_t at = out.find("@llsc (delay "); at != std::string::npos;
         at = out.find("@llsc (delay ", at + 1))
        ++llsc;
    EXPECT_EQ(llsc, catalog.size()) << out;
}

// The user-facing view of the same code: `lockprof list-locks --disasm`.
TEST_F(FlavourDisasm, ListLocksDisasmShowsEachFlavour) {
    std::ostringstream captured;
    auto* old = std::cout.rdbuf(captured.rdbuf());
    int rc = -1;
    try {
        rc = cli::list_locks_command({"--disasm", "tas", "--delay", "none"}, {});
    } catch (...) {
        std::cout.rdbuf(old);
        throw;
    }
    std::cout.rdbuf(old);
    const std::string out = captured.str();
    std::printf("%s", out.c_str());
    EXPECT_EQ(rc, 0);
    auto atomics_of = [&](const std::string& lock) {
        const std::string head = lock + " (delay none): acquire path, ";
        const std::size_t at = out.find(head);
        if (at == std::string::npos) return std::string("<missing>");
        const std::size_t from = out.find("atomics: ", at);
        return out.substr(from + 9, out.find('\n', from) - from - 9);
    };
    EXPECT_NE(atomics_of("tas@llsc").find("stxr"), std::string::npos) << atomics_of("tas@llsc");
    EXPECT_EQ(atomics_of("tas@llsc").find("swp"), std::string::npos) << atomics_of("tas@llsc");
    EXPECT_TRUE(starts(atomics_of("tas@lse"), "swp")) << atomics_of("tas@lse");
    EXPECT_EQ(atomics_of("tas@outline"), "bl __aarch64_swp4_acq");
    EXPECT_NE(atomics_of("tas"), "<missing>");
}

}  // namespace
