#include "lockprof/sampling/stacks.hpp"

#include <sys/mman.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

// Functions of this test binary to put synthetic samples in.
extern "C" __attribute__((noinline)) int stacks_test_callee(int x) {
    for (int i = 0; i < 50; ++i) x = x * 7 + i;
    return x;
}
extern "C" __attribute__((noinline)) int stacks_test_caller(int x) {
    return stacks_test_callee(x) + 1;
}

namespace lockprof::sampling {
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
    profiling::RawSample s;
    s.ip = address_of(&stacks_test_callee) + 4;
    s.callchain = {address_of(&stacks_test_caller) + 8};  // a return address inside the caller

    StackFolder functions(resolver, false);
    EXPECT_EQ(functions.frames("root", s),
              (std::vector<std::string>{"root", "stacks_test_caller", "stacks_test_callee"}));

    const auto loc = resolver.resolve(s.ip);
    const MnemonicMap mnemonics{{{loc.module, loc.file_address(s.ip)}, "xchg"}};
    StackFolder instructions(resolver, true, &mnemonics);
    const auto frames = instructions.frames("root", s);
    ASSERT_EQ(frames.size(), 4u);
    EXPECT_EQ(frames[3], "stacks_test_callee+0x4 xchg");
}

TEST(StackFolder, CodeOutsideEveryFileIsUnknown) {
    const auto resolver = symbols::SymbolResolver::for_process();
    void* anonymous = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(anonymous, MAP_FAILED);
    profiling::RawSample s;
    s.ip = reinterpret_cast<std::uint64_t>(anonymous) + 16;
    StackFolder folder(resolver, true);
    const auto frames = folder.frames("p", s);
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[1], "[unknown]");
    EXPECT_EQ(frames[2], fmt::format("{:#x}", s.ip));
    munmap(anonymous, 4096);
}

}  // namespace
}  // namespace lockprof::sampling
