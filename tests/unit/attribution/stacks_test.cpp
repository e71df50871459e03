#include "lockprof/attribution/stacks.hpp"

#include <sys/mman.h>

#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lockprof/common/files.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "support/sanitizers.hpp"

// Functions of this test binary to put synthetic samples in.
extern "C" __attribute__((noinline)) int stacks_test_callee(int x) {
    for (int i = 0; i < 50; ++i) x = x * 7 + i;
    return x;
}
extern "C" __attribute__((noinline)) int stacks_test_caller(int x) {
    return stacks_test_callee(x) + 1;
}

namespace lockprof::attribution {
namespace {

std::uint64_t address_of(int (*f)(int)) {
    return reinterpret_cast<std::uint64_t>(reinterpret_cast<const void*>(f));
}

TEST(FrameName, SymbolModuleOrUnknown) {
    symbols::Location loc;
    EXPECT_EQ(frame_name(loc), "[unknown]");  // no mapped file: JIT code, anonymous memory
    loc.module = "/usr/lib/postgresql/15/bin/postgres";
    EXPECT_EQ(frame_name(loc), "[postgres]");  // stripped code: where, if not what
    loc.symbol = "std::vector<int, std::allocator<int> >::push_back(int const&)";
    EXPECT_EQ(frame_name(loc), "vector<int, allocator<int> >::push_back");
}

TEST(StackFolder, CallersRootFirstThenTheSampledFunctionAndItsInstruction) {
    const auto resolver = symbols::SymbolResolver::for_process();
    measure::RawSample s;
    s.ip = address_of(&stacks_test_callee) + 4;
    s.callchain = {address_of(&stacks_test_caller) + 8};  // a return address inside the caller

    StackFolder functions(resolver, Leaf::function);
    EXPECT_EQ(functions.frames("root", s),
              (std::vector<std::string>{"root", "stacks_test_caller", "stacks_test_callee"}));

    const auto loc = resolver.resolve(s.ip);
    const MnemonicMap mnemonics{{{loc.module, loc.file_address(s.ip)}, "xchg"}};
    StackFolder instructions(resolver, Leaf::instruction, &mnemonics);
    const auto frames = instructions.frames("root", s);
    ASSERT_EQ(frames.size(), 4u);
    EXPECT_EQ(frames[3], "stacks_test_callee+0x4 xchg");
}

TEST(StackFolder, CodeOutsideEveryFileIsUnknown) {
    const auto resolver = symbols::SymbolResolver::for_process();
    void* anonymous = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(anonymous, MAP_FAILED);
    measure::RawSample s;
    s.ip = reinterpret_cast<std::uint64_t>(anonymous) + 16;
    StackFolder folder(resolver, Leaf::instruction);
    const auto frames = folder.frames("p", s);
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[1], "[unknown]");
    EXPECT_EQ(frames[2], fmt::format("{:#x}", s.ip));
    munmap(anonymous, 4096);
}

// A sample in this binary's measured loop, at the tas atomic: with phase leaves the loop's
// frame is followed by its phase and the instruction; a caller frame in the loop (the call
// to a lock's out-of-line function) gets its call site's phase; function leaves have neither.
TEST(StackFolder, MeasuredLoopFramesAreFollowedByTheirPhase) {
#if defined(LOCKPROF_TEST_TSAN)
    GTEST_SKIP() << "TSan turns the lock's atomics into calls to its runtime; the real loop's "
                    "code is checked in the other builds";
#endif
    const auto self = std::filesystem::read_symlink("/proc/self/exe");
    if (!lockprof::program_exists(symbols::default_objdump(self)))
        GTEST_SKIP() << symbols::default_objdump(self) << " not found";
    const auto resolver = symbols::SymbolResolver::for_process();
    const std::uint64_t bias = resolver.resolve(address_of(&stacks_test_callee)).bias;
    std::uint64_t atomic = 0, release = 0;
    std::string module;
    for (auto& f : symbols::function_symbols(self)) {
        if (!is_measured_loop(f.name) || f.name.find("::TasLock<") == std::string::npos) continue;
        for (const auto& insn :
             symbols::Disassembler().disassemble(self, f.address, f.address + f.size)) {
            const auto phase = loop_phase(resolver.inlined_at(insn.address + bias));
            if (insn.is_atomic() && phase == LoopPhase::acquire && !atomic)
                atomic = insn.address + bias;
            if (phase == LoopPhase::release && !release) release = insn.address + bias;
        }
        if (atomic && release) break;
        atomic = release = 0;
    }
    ASSERT_TRUE(atomic && release) << "no measured_loop<TasLock...> with an atomic and a release";
    measure::RawSample s;
    s.ip = atomic;
    s.callchain = {address_of(&stacks_test_caller) + 8};
    const auto loop = frame_name(resolver.resolve(atomic));
    const auto offset = resolver.resolve(atomic).offset;

    StackFolder phases(resolver, Leaf::phase);
    EXPECT_EQ(phases.frames("root", s),
              (std::vector<std::string>{"root", "stacks_test_caller", loop, "acquire",
                                        fmt::format("+{:#x}", offset)}));
    // The annotation's map marks the atomic as the acquire loop's.
    const auto loc = resolver.resolve(atomic);
    const PhaseMap map{{{loc.module, loc.file_address(atomic)}, {LoopPhase::acquire_loop, 1}}};
    StackFolder marked(resolver, Leaf::phase, nullptr, &map);
    EXPECT_EQ(marked.frames("root", s).at(3), "acquire loop");
    // Sampled elsewhere, called from the loop's release (return address just after it).
    measure::RawSample called;
    called.ip = address_of(&stacks_test_callee) + 4;
    called.callchain = {release + 1};
    EXPECT_EQ(phases.frames("root", called),
              (std::vector<std::string>{"root", loop, "release", "stacks_test_callee"}));
    StackFolder functions(resolver, Leaf::function);
    EXPECT_EQ(functions.frames("root", s),
              (std::vector<std::string>{"root", "stacks_test_caller", loop}));
}

}  // namespace
}  // namespace lockprof::attribution
