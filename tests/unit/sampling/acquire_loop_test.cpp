// The acquire-loop heuristic (acquire_loop.hpp) on synthetic x86-64 and aarch64 listings, parsed
// from objdump text as the annotator gets them: the DWARF rule, the no-DWARF rule, listings
// without a backward branch, and branches out of range.
#include "lockprof/sampling/acquire_loop.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lockprof/symbols/disassembler.hpp"

namespace lockprof::sampling {
namespace {

struct Line {
    const char* objdump;  // one `objdump -d -w` instruction line
    bool in_lock = false;
    double weight = 0;
};

HotFunction function_of(const std::vector<Line>& lines) {
    std::string text;
    for (const auto& line : lines) text += std::string(line.objdump) + "\n";
    const auto insns = symbols::parse_objdump(text);
    EXPECT_EQ(insns.size(), lines.size()) << "a synthetic line did not parse";
    HotFunction f;
    for (std::size_t i = 0; i < insns.size() && i < lines.size(); ++i) {
        AnnotatedInstruction ai;
        ai.instruction = insns[i];
        ai.in_lock = lines[i].in_lock;
        ai.weight = lines[i].weight;
        f.instructions.push_back(ai);
    }
    return f;
}

// Indices of the instructions marked in_acquire_loop.
std::vector<std::size_t> marked(const HotFunction& f) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < f.instructions.size(); ++i)
        if (f.instructions[i].in_acquire_loop) out.push_back(i);
    return out;
}

using Indices = std::vector<std::size_t>;

// A test-and-test-and-set lock inlined into a measured loop (x86-64): the fast path exchange,
// then a pause/poll loop, inside an outer loop that is not the lock's. The hottest instruction
// is in the outer loop, so only the DWARF rule can pick the poll loop.
const std::vector<Line> kX86Ttas = {
    {"    1000:\t8b 07                \tmov    (%rdi),%eax"},
    {"    1002:\tba 01 00 00 00       \tmov    $0x1,%edx", true},
    {"    1007:\t87 17                \txchg   %edx,(%rdi)", true, 5},
    {"    1009:\t85 d2                \ttest   %edx,%edx", true},
    {"    100b:\t74 0b                \tje     1018 <f+0x18>", true},
    {"    100d:\tf3 90                \tpause", true, 20},
    {"    100f:\t8b 07                \tmov    (%rdi),%eax", true, 10},
    {"    1011:\t85 c0                \ttest   %eax,%eax", true},
    {"    1013:\t75 f8                \tjne    100d <f+0xd>", true},
    {"    1015:\teb eb                \tjmp    1002 <f+0x2>", true},
    {"    1018:\t48 ff c1             \tinc    %rcx", false, 50},
    {"    101b:\teb e3                \tjmp    1000 <f>"},
};

TEST(AcquireLoop, DwarfRuleMarksEveryBackwardBranchOnTheLockPath) {
    HotFunction f = function_of(kX86Ttas);
    const std::string rule = mark_acquire_loop(f);
    // The poll loop [100d, 1013] and the retry [1002, 1015]; not the outer loop [1000, 101b].
    EXPECT_EQ(rule, "inlined lock(), backward branch 100d..1013, 1002..1015");
    EXPECT_EQ(marked(f), (Indices{1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(AcquireLoop, DwarfRuleNeedsTheTargetOnTheLockPathToo) {
    auto lines = kX86Ttas;
    lines[5].in_lock = false;  // the poll loop's target is outside lock()
    lines[1].in_lock = false;  // and so is the retry's
    HotFunction f = function_of(lines);
    // No span is on the lock path, so the fallback applies: the tightest loop around the
    // hottest instruction (inc at 1018) is the outer loop.
    EXPECT_EQ(mark_acquire_loop(f),
              "no inline info: tightest backward branch around the hottest instruction "
              "1000..101b");
    EXPECT_EQ(marked(f).size(), kX86Ttas.size());
}

// aarch64 LL/SC exchange with a WFE wait, no DWARF: the hottest instruction is the wfe loop's
// ldxr; the tightest backward branch around it is the wait loop, not the outer one.
const std::vector<Line> kAarch64Llsc = {
    {"  400540:\t52800021 \tmov\tw1, #0x1"},
    {"  400544:\t885ffe60 \tldaxr\tw0, [x19]", false, 4},
    {"  400548:\t35000080 \tcbnz\tw0, 400558 <tas+0x18>"},
    {"  40054c:\t88027e61 \tstxr\tw2, w1, [x19]", false, 2},
    {"  400550:\t35ffffa2 \tcbnz\tw2, 400544 <tas+0x4>"},
    {"  400554:\t14000005 \tb\t400568 <tas+0x28>"},
    {"  400558:\td503205f \twfe"},
    {"  40055c:\t885f7e60 \tldxr\tw0, [x19]", false, 40},
    {"  400560:\t35ffffc0 \tcbnz\tw0, 400558 <tas+0x18>"},
    {"  400564:\t17fffff8 \tb\t400544 <tas+0x4>"},
    {"  400568:\td65f03c0 \tret"},
};

TEST(AcquireLoop, WithoutDwarfTheTightestBackwardBranchAroundTheHottestInstruction) {
    HotFunction f = function_of(kAarch64Llsc);
    EXPECT_EQ(mark_acquire_loop(f),
              "no inline info: tightest backward branch around the hottest instruction "
              "400558..400560");
    EXPECT_EQ(marked(f), (Indices{6, 7, 8}));
}

TEST(AcquireLoop, WithoutDwarfALoopNotContainingTheHottestInstructionIsNotMarked) {
    auto lines = kAarch64Llsc;
    lines[7].weight = 0;
    lines[3].weight = 60;  // stxr: only the exchange retry [400544, 400550] contains it
    HotFunction f = function_of(lines);
    EXPECT_EQ(mark_acquire_loop(f),
              "no inline info: tightest backward branch around the hottest instruction "
              "400544..400550");
    EXPECT_EQ(marked(f), (Indices{1, 2, 3, 4}));
}

TEST(AcquireLoop, DwarfRuleOnAarch64) {
    auto lines = kAarch64Llsc;
    for (std::size_t i = 1; i <= 8; ++i) lines[i].in_lock = true;  // not the outer `b`
    HotFunction f = function_of(lines);
    EXPECT_EQ(mark_acquire_loop(f),
              "inlined lock(), backward branch 400544..400550, "
              "400558..400560");
    EXPECT_EQ(marked(f), (Indices{1, 2, 3, 4, 6, 7, 8}));
}

TEST(AcquireLoop, NoBackwardBranchMarksNothing) {
    HotFunction f = function_of({
        {"    2000:\tf0 0f b1 17          \tlock cmpxchg %edx,(%rdi)", true, 9},
        {"    2004:\t75 02                \tjne    2008 <g+0x8>", true},
        {"    2006:\t31 c0                \txor    %eax,%eax", true},
        {"    2008:\tc3                   \tret"},
    });
    EXPECT_EQ(mark_acquire_loop(f), "no backward branch found: acquire loop not marked");
    EXPECT_TRUE(marked(f).empty());
}

TEST(AcquireLoop, BranchTargetOutsideTheFunctionSpansNothing) {
    HotFunction f = function_of({
        {"    2000:\tf3 90                \tpause", true, 9},
        {"    2002:\t75 fa                \tjne    1ffe <h-0x2>", true},  // before the function
        {"    2004:\tc3                   \tret"},
    });
    EXPECT_EQ(mark_acquire_loop(f), "no backward branch found: acquire loop not marked");
    EXPECT_TRUE(marked(f).empty());
}

// `nops` nops, the hottest in the middle, then a backward branch to the first: a span whose
// branch index minus target index is `nops`.
HotFunction long_loop(std::size_t nops) {
    std::vector<std::string> text;
    for (std::size_t i = 0; i < nops; ++i)
        text.push_back(fmt::format("    {:x}:\t90                   \tnop", 0x3000 + i));
    text.push_back(fmt::format("    {:x}:\teb 00                \tjmp    3000 <k>", 0x3000 + nops));
    std::vector<Line> lines;
    for (const auto& t : text) lines.push_back({t.c_str()});
    lines[nops / 2].weight = 1;
    return function_of(lines);
}

TEST(AcquireLoop, WithoutDwarfAFallbackLoopLongerThanTheLimitIsNotMarked) {
    HotFunction at_limit = long_loop(kMaxFallbackLoop);
    EXPECT_EQ(mark_acquire_loop(at_limit),
              fmt::format("no inline info: tightest backward branch around the hottest "
                          "instruction 3000..{:x}",
                          0x3000 + kMaxFallbackLoop));
    EXPECT_EQ(marked(at_limit).size(), kMaxFallbackLoop + 1);

    HotFunction beyond = long_loop(kMaxFallbackLoop + 1);
    EXPECT_EQ(mark_acquire_loop(beyond), "no backward branch found: acquire loop not marked");
    EXPECT_TRUE(marked(beyond).empty());
}

}  // namespace
}  // namespace lockprof::sampling
