// The DWARF unwinder on stacks captured in this process: a known chain of noinline functions
// built without frame pointers (unit/symbols/unwind_chain.cpp) must come back in order, and
// garbage registers and stack bytes must give a short or empty chain, never a crash.
#include "lockprof/symbols/unwinder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lockprof/symbols/resolver.hpp"
#include "unit/symbols/unwind_chain.hpp"

namespace lockprof::symbols {
namespace {

constexpr std::size_t kStackBytes = 8192;

test::CapturedStack capture() {
    test::CapturedStack captured;
    captured.stack.resize(kStackBytes);
    EXPECT_GT(test::unwind_chain_outer(captured), 0);
    return captured;
}

// The function names of a chain's return addresses (each read as the call before it).
std::vector<std::string> names_of(const SymbolResolver& resolver,
                                  const std::vector<std::uint64_t>& chain) {
    std::vector<std::string> names;
    for (auto address : chain) names.push_back(short_name(resolver.resolve(address - 1).symbol));
    return names;
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += n + ";";
    return out;
}

TEST(Unwinder, KnownChainWithoutFramePointersComesBackInOrder) {
    const auto captured = capture();
    ASSERT_FALSE(captured.stack.empty());
    const auto modules = process_modules();
    const Unwinder unwinder(modules);
    ASSERT_EQ(unwinder.problem(), "");
    const auto chain = unwinder.unwind(captured.regs, captured.stack);
    const SymbolResolver resolver(modules);
    const auto frame = arch::initial_frame(arch::unwind_registers(), captured.regs);
    ASSERT_TRUE(frame);
    // The sampled PC is inside the capture, which is not repeated in the chain.
    EXPECT_NE(resolver.resolve(frame->pc).symbol.find("capture_user_stack"), std::string::npos);
    const auto names = names_of(resolver, chain);
    ASSERT_GE(names.size(), 4u) << joined(names);
    EXPECT_EQ(names[0], "unwind_chain_inner") << joined(names);
    EXPECT_EQ(names[1], "unwind_chain_middle") << joined(names);
    EXPECT_EQ(names[2], "unwind_chain_outer") << joined(names);
    // Then this test's own frames, through capture() (inlined or not) into its body.
    const bool reaches_test = std::any_of(names.begin() + 3, names.end(), [](const auto& n) {
        return n.find("KnownChainWithoutFramePointers") != std::string::npos || n == "capture";
    });
    EXPECT_TRUE(reaches_test) << joined(names);
    EXPECT_LE(chain.size(), kMaxUnwoundFrames);
}

TEST(Unwinder, StopsAtTheDepthLimitAndAtTheEndOfTheStackCopy) {
    const auto captured = capture();
    const auto modules = process_modules();
    const Unwinder unwinder(modules);
    EXPECT_EQ(unwinder.unwind(captured.regs, captured.stack, 2).size(), 2u);
    // A copy too short to hold the first return address: no caller can be read.
    const std::vector<unsigned char> little(captured.stack.begin(), captured.stack.begin() + 8);
    EXPECT_LE(unwinder.unwind(captured.regs, little).size(), 1u);
    EXPECT_TRUE(unwinder.unwind(captured.regs, {}).size() <= 1u);
}

TEST(Unwinder, OneUnwinderServesManySamples) {
    const auto modules = process_modules();
    const Unwinder unwinder(modules);
    const SymbolResolver resolver(modules);
    for (int i = 0; i < 50; ++i) {
        const auto captured = capture();
        const auto names = names_of(resolver, unwinder.unwind(captured.regs, captured.stack));
        ASSERT_GE(names.size(), 3u) << i;
        EXPECT_EQ(names[0], "unwind_chain_inner") << i;
        EXPECT_EQ(names[2], "unwind_chain_outer") << i;
    }
}

TEST(Unwinder, ShortRegistersAndNoModulesGiveNothing) {
    const auto captured = capture();
    const Unwinder unwinder(process_modules());
    const std::vector<std::uint64_t> short_regs(captured.regs.begin(), captured.regs.end() - 1);
    EXPECT_TRUE(unwinder.unwind(short_regs, captured.stack).empty());
    EXPECT_TRUE(unwinder.unwind({}, captured.stack).empty());
    const Unwinder nothing({});
    EXPECT_NE(nothing.problem(), "");
    EXPECT_TRUE(nothing.unwind(captured.regs, captured.stack).empty());
}

// Outside input: registers and stack bytes from a generator, alone and mixed with real ones
// (a real PC with a garbage stack, real registers with a garbage stack, a real stack read
// from a wrong stack pointer). Every chain must end within the limit; none may crash.
TEST(Unwinder, GarbageRegistersAndStacksNeverCrash) {
    const auto captured = capture();
    const auto modules = process_modules();
    const Unwinder unwinder(modules);
    const auto& table = arch::unwind_registers();
    const auto pc_index = static_cast<std::size_t>(
        std::popcount(table.sample_regs_user & ((std::uint64_t{1} << table.perf_pc) - 1)));
    const auto sp_index = static_cast<std::size_t>(
        std::popcount(table.sample_regs_user & ((std::uint64_t{1} << table.perf_sp) - 1)));
    std::mt19937_64 random(20261202);
    std::vector<std::uint64_t> code;  // addresses inside executable mappings
    for (const auto& m : modules)
        if (m.permissions.find('x') != std::string::npos && m.end > m.start)
            code.push_back(m.start + (m.end - m.start) / 2);
    ASSERT_FALSE(code.empty());
    for (int round = 0; round < 3000; ++round) {
        std::vector<std::uint64_t> regs = captured.regs;
        std::vector<unsigned char> stack = captured.stack;
        switch (round % 5) {
            case 0:  // everything random
                for (auto& r : regs) r = random();
                for (auto& b : stack) b = static_cast<unsigned char>(random());
                break;
            case 1:  // a PC in real code, everything else random
                for (auto& r : regs) r = random();
                regs[pc_index] = code[random() % code.size()] + random() % 4096;
                for (auto& b : stack) b = static_cast<unsigned char>(random());
                break;
            case 2:  // real registers, a stack of random words that look like code addresses
                for (std::size_t i = 0; i + 8 <= stack.size(); i += 8) {
                    const std::uint64_t word =
                        random() % 2 ? code[random() % code.size()] + random() % 65536 : random();
                    std::memcpy(stack.data() + i, &word, 8);
                }
                break;
            case 3:  // the real stack read from a wrong stack pointer
                regs[sp_index] += (random() % 512) * 8 - 2048;
                break;
            case 4:  // a few bytes of the real stack flipped, and a random length
                for (int i = 0; i < 16; ++i) stack[random() % stack.size()] ^= random();
                stack.resize(random() % (stack.size() + 1));
                break;
        }
        const auto chain = unwinder.unwind(regs, stack);
        ASSERT_LE(chain.size(), kMaxUnwoundFrames) << round;
    }
    // The unwinder is still good afterwards.
    const SymbolResolver resolver(modules);
    const auto names = names_of(resolver, unwinder.unwind(captured.regs, captured.stack));
    ASSERT_GE(names.size(), 1u);
    EXPECT_EQ(names[0], "unwind_chain_inner");
}

TEST(UnwinderCache, FillsTheCallChainAndFreesTheCopy) {
    const auto captured = capture();
    const auto modules = process_modules();
    UnwinderCache cache;
    measure::RawSample sample;
    sample.ip = arch::initial_frame(arch::unwind_registers(), captured.regs)->pc;
    sample.user_regs = captured.regs;
    sample.user_stack = captured.stack;
    cache.unwind(sample, modules);
    EXPECT_TRUE(sample.user_regs.empty());
    EXPECT_TRUE(sample.user_stack.empty());
    const SymbolResolver resolver(modules);
    const auto names = names_of(resolver, sample.callchain);
    ASSERT_GE(names.size(), 3u);
    EXPECT_EQ(names[0], "unwind_chain_inner");
    EXPECT_EQ(cache.stats().stacks, 1u);
    EXPECT_EQ(cache.stats().without_callers, 0u);
    EXPECT_EQ(cache.stats().frames, sample.callchain.size());

    // A kernel-mode sample keeps the kernel's frames first, then the user PC, then its callers.
    measure::RawSample kernel;
    kernel.ip = 0xffffffff81000000ull;
    kernel.callchain = {0xffffffff81000100ull};
    kernel.user_regs = captured.regs;
    kernel.user_stack = captured.stack;
    cache.unwind(kernel, modules);
    ASSERT_GE(kernel.callchain.size(), 3u);
    EXPECT_EQ(kernel.callchain[0], 0xffffffff81000100ull);
    EXPECT_EQ(kernel.callchain[1], sample.ip);
    EXPECT_EQ(kernel.callchain[2], sample.callchain[0]);

    // Without a copy, nothing changes and nothing is counted.
    measure::RawSample plain;
    plain.ip = 42;
    plain.callchain = {7};
    cache.unwind(plain, modules);
    EXPECT_EQ(plain.callchain, std::vector<std::uint64_t>{7});
    EXPECT_EQ(cache.stats().stacks, 2u);
}

}  // namespace
}  // namespace lockprof::symbols
