// Loop phases (attribution/phases.hpp): the rule on synthetic inline chains, and on this test
// binary's own measured loop, whose DWARF must name every phase the flamegraph shows.
#include "lockprof/attribution/phases.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/common/files.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "support/sanitizers.hpp"

namespace lockprof::attribution {
namespace {

using Chain = std::vector<std::string>;

TEST(LoopPhase, TheOutermostCallOfTheLoopDecides) {
    const std::string lock =
        "lockprof::locks::x86::TasLock<(lockprof::locks::Delay)1>::lock("
        "lockprof::locks::x86::TasLock<(lockprof::locks::Delay)1>::Context&)";
    const std::string unlock =
        "lockprof::locks::x86::TasLock<(lockprof::locks::Delay)1>::unlock("
        "lockprof::locks::x86::TasLock<(lockprof::locks::Delay)1>::"
        "Context&)";
    const std::string critical =
        "unsigned long lockprof::workload::x86::critical_section<true>(std::atomic<unsigned "
        "long>&, lockprof::workload::SharedLine*, unsigned int, unsigned long)";
    const std::string parallel = "lockprof::workload::x86::parallel_work(unsigned long)";
    const std::string burn = "lockprof::arch::burn(unsigned long)";
    EXPECT_EQ(loop_phase({}), LoopPhase::harness);
    EXPECT_EQ(loop_phase({lock}), LoopPhase::acquire);
    EXPECT_EQ(loop_phase({"lockprof::locks::x86::CasLock<(lockprof::locks::Delay)0>::try_lock()"}),
              LoopPhase::acquire);
    EXPECT_EQ(loop_phase({unlock}), LoopPhase::release);
    EXPECT_EQ(loop_phase({burn, critical}), LoopPhase::critical);
    EXPECT_EQ(loop_phase({burn, parallel}), LoopPhase::parallel);
    EXPECT_EQ(loop_phase({burn}), LoopPhase::harness);
    // Innermost first: a lock() whose helper is called unlock is still acquiring.
    EXPECT_EQ(loop_phase({unlock, lock}), LoopPhase::acquire);
    // DWARF's plain names, when an inlined copy has no linkage name.
    EXPECT_EQ(loop_phase({"critical_section<false>"}), LoopPhase::critical);
    EXPECT_EQ(loop_phase({"parallel_work"}), LoopPhase::harness);  // no call: not this function
    EXPECT_EQ(loop_phase({"parallel_work(unsigned long)"}), LoopPhase::parallel);
    // Other programs' functions of the same names are not the loop's.
    EXPECT_EQ(loop_phase({"my::critical_section(int)", "std::mutex::lock()"}), LoopPhase::harness);
    EXPECT_EQ(loop_phase({"lockprof::locks::x86::TasLock<(lockprof::locks::Delay)1>::unlocked()"}),
              LoopPhase::harness);
}

TEST(LoopPhase, NamesAndMeasuredLoops) {
    EXPECT_EQ(phase_name(LoopPhase::acquire_loop), "acquire loop");
    EXPECT_EQ(phase_name(LoopPhase::rest_of_loop), "rest of loop");  // a build without -g
    EXPECT_EQ(phase_name(LoopPhase::none), "");
    for (const LoopPhase phase : kLoopPhases) EXPECT_FALSE(phase_name(phase).empty());
    EXPECT_TRUE(is_measured_loop(
        "void lockprof::workload::x86::measured_loop<lockprof::locks::x86::TasLock<"
        "(lockprof::locks::Delay)1>, false>(void*, lockprof::workload::LoopArgs const&)"));
    EXPECT_FALSE(is_measured_loop("measured_loop_helper()"));
    EXPECT_FALSE(is_measured_loop("void other::measured_loop<int>(void*)"));
    EXPECT_TRUE(is_lock_function("lockprof::locks::x86::McsLock::lock(Node&)"));
    EXPECT_FALSE(is_lock_function("lockprof::locks::x86::McsLock::unlock(Node&)"));
    EXPECT_FALSE(is_lock_function("std::mutex::lock()"));
}

TEST(LoopPhase, PhaseAtFindsTheInstructionContainingAnAddress) {
    PhaseMap map;
    map[{"/bin/a", 0x100}] = {LoopPhase::acquire_loop, 4};
    map[{"/bin/a", 0x104}] = {LoopPhase::critical, 2};
    EXPECT_EQ(phase_at(map, "/bin/a", 0x100), LoopPhase::acquire_loop);
    EXPECT_EQ(phase_at(map, "/bin/a", 0x103), LoopPhase::acquire_loop);  // a return address - 1
    EXPECT_EQ(phase_at(map, "/bin/a", 0x105), LoopPhase::critical);
    EXPECT_EQ(phase_at(map, "/bin/a", 0x106), LoopPhase::none);  // past the last instruction
    EXPECT_EQ(phase_at(map, "/bin/a", 0xff), LoopPhase::none);
    EXPECT_EQ(phase_at(map, "/bin/b", 0x100), LoopPhase::none);
}

// This binary's measured_loop<TasLock<...>, false> in every flavour it holds: each of the
// loop's parts has instructions DWARF attributes to it, and tas's atomic is the acquire's.
TEST(LoopPhase, EveryPhaseOfTheRealLoopIsNamedByItsInlineChain) {
#if defined(LOCKPROF_TEST_TSAN)
    GTEST_SKIP() << "TSan turns the lock's atomics into calls to its runtime; the real loop's "
                    "code is checked in the other builds";
#endif
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    if (!lockprof::program_exists(symbols::default_objdump(self)))
        GTEST_SKIP() << symbols::default_objdump(self) << " not found";
    const auto resolver = symbols::SymbolResolver::for_process();
    // Runtime minus file address of this executable (PIE), from a function of this file.
    const auto here = reinterpret_cast<std::uint64_t>(reinterpret_cast<const void*>(&phase_name));
    const std::uint64_t runtime_bias = resolver.resolve(here).bias;
    const symbols::Disassembler disassembler;
    unsigned loops = 0;
    for (auto& f : symbols::function_symbols(self)) {
        if (!is_measured_loop(f.name) || f.name.find("::TasLock<") == std::string::npos ||
            f.name.find(", false>(") == std::string::npos)
            continue;
        SCOPED_TRACE(f.name);
        ++loops;
        const auto code = disassembler.disassemble(self, f.address, f.address + f.size);
        std::map<LoopPhase, unsigned> count;
        bool atomic_acquires = false;
        for (const auto& insn : code) {
            const auto phase = loop_phase(resolver.inlined_at(insn.address + runtime_bias));
            ++count[phase];
            if (insn.is_atomic() && phase == LoopPhase::acquire) atomic_acquires = true;
        }
        for (const LoopPhase phase : {LoopPhase::acquire, LoopPhase::critical, LoopPhase::release,
                                      LoopPhase::parallel, LoopPhase::harness})
            EXPECT_GT(count[phase], 0u) << phase_name(phase) << " has no instruction";
        EXPECT_TRUE(atomic_acquires) << "the lock's atomic is not in lock()'s inline chain";
    }
    EXPECT_GT(loops, 0u) << "no measured_loop<TasLock<...>, false> in this binary";
}

}  // namespace
}  // namespace lockprof::attribution
