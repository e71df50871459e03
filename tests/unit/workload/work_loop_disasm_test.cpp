// The busy work's loop, read from this binary's measured loop with GNU objdump: `--critical-ins N`
// and `--parallel-ins N` run N / kBurnInstructionsPerTrip trips of arch::burn(), so each trip must
// be exactly kBurnInstructionsPerTrip instructions (a decrement and a branch back), entered
// through a test that skips it when there are no trips (kBurnEntryInstructions instructions), in
// the code that really runs: measured_loop<TasLock<none>, latency> of every flavour this build
// compiles (x86: native; aarch64: native, llsc, lse, outline). A work loop is a backward branch
// whose body touches no memory: the lock's spins and retries load or store its word, and the
// loop over the shared lines loads and stores them.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "support/sanitizers.hpp"

using namespace lockprof;
using symbols::FunctionCode;
using symbols::Instruction;

namespace {

constexpr bool kWorkLoopOnX86 = arch::kArchName == "x86_64";

bool work_starts(const std::string& s, std::string_view prefix) {
    return s.rfind(prefix, 0) == 0;
}

bool touches_memory(const Instruction& i) {
    if (i.is_call() || i.is_atomic()) return true;
    if constexpr (kWorkLoopOnX86) return i.operands.find('(') != std::string::npos;
    for (std::string_view p : {"ld", "st", "cas", "swp", "prfm"})
        if (work_starts(i.mnemonic, p)) return true;
    return false;
}

// The decrement of the trip count: x86 `sub $0x1,%reg`, aarch64 `sub xN, xN, #0x1`.
bool is_decrement(const Instruction& i) {
    if constexpr (kWorkLoopOnX86) return i.mnemonic == "sub" && work_starts(i.operands, "$0x1,%");
    return i.mnemonic == "sub" && i.operands.find("#0x1") != std::string::npos;
}

std::string work_listing(const std::vector<Instruction>& code, std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t i = from; i <= to && i < code.size(); ++i)
        out += "    " + code[i].text() + "\n";
    return out;
}

// measured_loop<TasLock<(Delay)0>, latency> of every flavour: key "flavour latency".
std::map<std::string, FunctionCode> tas_measured_loops() {
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    const symbols::Disassembler disassembler;
    std::map<std::string, FunctionCode> out;
    for (auto& f : symbols::function_symbols(self)) {
        const std::string prefix = "void lockprof::workload::";
        if (!work_starts(f.name, prefix)) continue;
        const auto ns_end = f.name.find("::measured_loop<lockprof::locks::", prefix.size());
        if (ns_end == std::string::npos) continue;
        const std::string flavour = f.name.substr(prefix.size(), ns_end - prefix.size());
        const std::string lock =
            "::measured_loop<lockprof::locks::" + flavour + "::TasLock<(lockprof::arch::Delay)0>, ";
        if (f.name.compare(ns_end, lock.size(), lock) != 0) continue;
        const std::string latency =
            f.name.compare(ns_end + lock.size(), 4, "true") == 0 ? "latency" : "throughput";
        f.instructions = disassembler.disassemble(self, f.address, f.address + f.size);
        out[flavour + " " + latency] = std::move(f);
    }
    return out;
}

}  // namespace

TEST(WorkLoopCode, EachTripIsTheStatedInstructionCount) {
#if defined(LOCKPROF_TEST_TSAN) || defined(LOCKPROF_TEST_ASAN)
    GTEST_SKIP() << "sanitizers add calls to every memory access; the code checked is the "
                    "release build's. Runs in the other builds";
#endif
    if (!lockprof::program_exists(symbols::default_objdump("/proc/self/exe")))
        GTEST_SKIP() << symbols::default_objdump("/proc/self/exe") << " not found";
    const auto loops = tas_measured_loops();
    ASSERT_FALSE(loops.empty()) << "no measured_loop<TasLock<none>, ...> in this binary";
    for (const auto& [key, f] : loops) {
        SCOPED_TRACE(key);
        const auto& code = f.instructions;
        std::map<std::uint64_t, std::size_t> index;
        for (std::size_t i = 0; i < code.size(); ++i) index[code[i].address] = i;
        unsigned work_loops = 0;
        for (std::size_t end = 0; end < code.size(); ++end) {
            if (!code[end].is_backward_branch() || !index.count(*code[end].branch_target)) continue;
            const std::size_t head = index[*code[end].branch_target];
            bool memory = false;
            for (std::size_t i = head; i <= end; ++i) memory |= touches_memory(code[i]);
            if (memory) continue;
            ++work_loops;
            const std::string body = work_listing(code, head, end);
            EXPECT_EQ(end - head + 1, arch::kBurnInstructionsPerTrip)
                << "a work loop of " << end - head + 1 << " instructions a trip:\n"
                << body;
            EXPECT_TRUE(is_decrement(code[head])) << body;
            // The entry: a branch just before the loop to just after it, and on x86 the test
            // it branches on.
            ASSERT_GE(head, arch::kBurnEntryInstructions) << body;
            const Instruction& skip = code[head - 1];
            EXPECT_TRUE(skip.is_branch() && skip.branch_target && end + 1 < code.size() &&
                        *skip.branch_target == code[end + 1].address)
                << "no branch around the work loop:\n"
                << work_listing(code, head - arch::kBurnEntryInstructions, end + 1);
            if constexpr (kWorkLoopOnX86) {
                EXPECT_EQ(code[head - 2].mnemonic, "test") << body;
            }
        }
        // The critical section's work and the parallel work.
        EXPECT_EQ(work_loops, 2u) << "work loops in " << f.name;
    }
}
