// The acquire-loop heuristic (acquire_loop.hpp) on synthetic x86-64 and aarch64 listings, parsed
// from objdump text as the annotator gets them: the DWARF rule, the no-DWARF rule (in lockprof's
// own measured loop built without -g, without its busy work), listings without a backward
// branch, and branches out of range.
#include "lockprof/attribution/acquire_loop.hpp"

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lockprof/symbols/disassembler.hpp"

namespace lockprof::attribution {
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

// clang's ASan build of tas: a cold block of lock() (the sanitizer's check of the lock word)
// sits after the measured loop's other phases and branches back into lock(). That branch is on
// the lock path at both ends but holds the critical section: it is left out, and the poll loop
// is still marked (before, the whole rule was dropped and no acquire loop was found).
TEST(AcquireLoop, DwarfRuleLeavesOutABranchBackThatHoldsTheCriticalSection) {
    std::vector<Line> lines = kX86Ttas;
    lines.pop_back();  // the outer loop's jmp, after the inc of the critical section
    lines.push_back({"    101b:\tc3                   \tret"});
    lines.push_back({"    101c:\teb e4                \tjmp    1002 <f+0x2>", true});
    HotFunction f = function_of(lines);
    f.instructions[10].phase = LoopPhase::critical;  // the inc
    f.instructions[11].phase = LoopPhase::harness;   // the ret
    for (std::size_t i = 1; i <= 9; ++i) f.instructions[i].phase = LoopPhase::acquire;
    f.instructions[12].phase = LoopPhase::acquire;
    EXPECT_EQ(mark_acquire_loop(f), "inlined lock(), backward branch 100d..1013, 1002..1015");
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

// lockprof's measured loop of tas built without -g (x86-64): the first exchange, the retry loop
// [600b, 6016], an increment of a shared line, the critical section's busy work (arch::burn():
// `sub $0x1; jne` [6021, 6025]), the release store, the parallel busy work [6032, 6036], the
// harness and the loop's own back edge [6000, 6040].
constexpr const char* kMeasuredLoopName =
    "void lockprof::workload::native::measured_loop<lockprof::locks::native::TasLock<"
    "(lockprof::arch::Delay)1>, false>(void*, lockprof::workload::LoopArgs const&)";
const std::vector<Line> kX86MeasuredLoop = {
    {"    6000:\tba 01 00 00 00       \tmov    $0x1,%edx"},
    {"    6005:\t87 17                \txchg   %edx,(%rdi)"},
    {"    6007:\t85 d2                \ttest   %edx,%edx"},
    {"    6009:\t74 0d                \tje     6018 <f+0x18>"},
    {"    600b:\tf3 90                \tpause"},
    {"    600d:\tba 01 00 00 00       \tmov    $0x1,%edx"},
    {"    6012:\t87 17                \txchg   %edx,(%rdi)"},
    {"    6014:\t85 d2                \ttest   %edx,%edx"},
    {"    6016:\t75 f3                \tjne    600b <f+0xb>"},
    {"    6018:\t48 83 06 01          \taddq   $0x1,(%rsi)"},
    {"    601c:\t48 85 c9             \ttest   %rcx,%rcx"},
    {"    601f:\t74 06                \tje     6027 <f+0x27>"},
    {"    6021:\t48 83 e9 01          \tsub    $0x1,%rcx"},
    {"    6025:\t75 fa                \tjne    6021 <f+0x21>"},
    {"    6027:\tc7 07 00 00 00 00    \tmovl   $0x0,(%rdi)"},
    {"    602d:\t48 85 d2             \ttest   %rdx,%rdx"},
    {"    6030:\t74 06                \tje     6038 <f+0x38>"},
    {"    6032:\t48 83 ea 01          \tsub    $0x1,%rdx"},
    {"    6036:\t75 fa                \tjne    6032 <f+0x32>"},
    {"    6038:\t49 83 c0 01          \tadd    $0x1,%r8"},
    {"    603c:\t41 80 39 00          \tcmpb   $0x0,(%r9)"},
    {"    6040:\t74 be                \tje     6000 <f>"},
    {"    6042:\tc3                   \tret"},
};

HotFunction measured_loop_of(std::vector<Line> lines,
                             std::vector<std::pair<std::size_t, double>> weights,
                             const char* name = kMeasuredLoopName) {
    for (auto [index, weight] : weights) lines[index].weight = weight;
    HotFunction f = function_of(lines);
    f.name = name;
    return f;
}

TEST(AcquireLoop, AMeasuredLoopWithoutLinesIsOneWithoutDebugInformation) {
    HotFunction f = measured_loop_of(kX86MeasuredLoop, {});
    EXPECT_TRUE(measured_loop_without_lines(f));
    f.instructions[4].source = "tas.hpp:31";
    EXPECT_FALSE(measured_loop_without_lines(f)) << "a build with -g";
    EXPECT_FALSE(measured_loop_without_lines(measured_loop_of(kX86MeasuredLoop, {}, "s_lock")));
    HotFunction not_disassembled;
    not_disassembled.name = kMeasuredLoopName;
    EXPECT_FALSE(measured_loop_without_lines(not_disassembled));
}

// Without -g the busy work is where a long critical section's samples go, but it is no spin:
// the acquire loop is the loop with the most samples outside it.
constexpr const char* kWithoutLinesRule =
    "no inline info: the measured loop's hottest backward branch outside its busy work ";
TEST(AcquireLoop, WithoutLinesTheMeasuredLoopsBusyWorkIsNoAcquireLoop) {
    HotFunction f = measured_loop_of(kX86MeasuredLoop, {{12, 100}, {13, 80}, {6, 30}, {4, 10}});
    EXPECT_EQ(mark_acquire_loop(f), std::string(kWithoutLinesRule) + "600b..6016");
    EXPECT_EQ(marked(f), (Indices{4, 5, 6, 7, 8}));
    // Another program's two-instruction loop is taken as it always was.
    HotFunction other =
        measured_loop_of(kX86MeasuredLoop, {{12, 100}, {13, 80}, {6, 30}}, "spin_here");
    EXPECT_EQ(mark_acquire_loop(other),
              "no inline info: tightest backward branch around the hottest instruction "
              "6021..6025");
    // And so is lockprof's loop with -g (its acquire loop comes from the DWARF rule anyway).
    HotFunction with_lines = measured_loop_of(kX86MeasuredLoop, {{12, 100}, {6, 30}});
    with_lines.instructions[0].source = "loop.hpp:200";
    mark_acquire_loop(with_lines);
    EXPECT_EQ(marked(with_lines), (Indices{12, 13}));
}

// The first exchange, before the retry loop, is the hottest instruction (cas at low
// contention): the only loop around it is the measured loop itself, which holds the busy work
// and is no acquire loop; the retry loop, with fewer samples, is.
TEST(AcquireLoop, WithoutLinesTheMeasuredLoopItselfIsNoAcquireLoop) {
    HotFunction f = measured_loop_of(kX86MeasuredLoop, {{2, 50}, {6, 5}, {19, 5}});
    EXPECT_EQ(mark_acquire_loop(f), std::string(kWithoutLinesRule) + "600b..6016");
    EXPECT_EQ(marked(f), (Indices{4, 5, 6, 7, 8}));
    HotFunction other = measured_loop_of(kX86MeasuredLoop, {{2, 50}, {6, 5}, {19, 5}}, "spin_here");
    mark_acquire_loop(other);
    EXPECT_EQ(marked(other).size(), 22u) << "another program's outer loop, as before";
    // No sample in a loop but the busy work and the measured loop: no acquire loop at all.
    HotFunction busy = measured_loop_of(kX86MeasuredLoop, {{12, 100}, {17, 40}, {2, 10}});
    EXPECT_EQ(mark_acquire_loop(busy),
              "no inline info, and no samples in a loop but the measured loop itself and its "
              "busy work: acquire loop not marked");
    EXPECT_TRUE(marked(busy).empty());
}

// aarch64's busy work is `sub xN, xN, #0x1; cbnz`: the same rule.
TEST(AcquireLoop, WithoutLinesTheBusyWorkIsLeftOutOnAarch64Too) {
    HotFunction f = measured_loop_of(
        {
            {"  400600:\t52800021 \tmov\tw1, #0x1"},
            {"  400604:\t885ffe60 \tldaxr\tw0, [x19]"},
            {"  400608:\t35000060 \tcbnz\tw0, 400614 <f+0x14>"},
            {"  40060c:\t88027e61 \tstxr\tw2, w1, [x19]"},
            {"  400610:\t35ffffa2 \tcbnz\tw2, 400604 <f+0x4>"},
            {"  400614:\t35ffff80 \tcbnz\tw0, 400604 <f+0x4>"},
            {"  400618:\tb4000060 \tcbz\tx3, 400624 <f+0x24>"},
            {"  40061c:\td1000463 \tsub\tx3, x3, #0x1"},
            {"  400620:\tb5ffffe3 \tcbnz\tx3, 40061c <f+0x1c>"},
            {"  400624:\t889ffe7f \tstlr\twzr, [x19]"},
            {"  400628:\t17fffff6 \tb\t400600 <f>"},
        },
        {{7, 100}, {3, 30}});
    // [400604, 400610] and [400604, 400614] hold the same samples: the tighter one.
    EXPECT_EQ(mark_acquire_loop(f), std::string(kWithoutLinesRule) + "400604..400610");
    EXPECT_EQ(marked(f), (Indices{1, 2, 3, 4}));
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
}  // namespace lockprof::attribution
