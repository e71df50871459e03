// The stack copies a recording holds for --call-graph dwarf (src/record/stack_copies.hpp),
// alone: what stays held until its process's mappings are known, the budget that unwinds
// during the recording, and the kept --spin stacks unwound into call chains. Zeroed
// registers unwind to no frames; what is checked is which copies are unwound and when.
#include "record/stack_copies.hpp"

#include <gtest/gtest.h>

namespace lockprof::record {
namespace {

measure::RawSample copied_sample(std::uint32_t pid, std::size_t stack_bytes) {
    measure::RawSample s;
    s.pid = s.tid = pid;
    s.user_regs.assign(32, 0);
    s.user_stack.assign(stack_bytes, 0);
    return s;
}

struct HeldCopies {
    std::vector<measure::RawSample> samples;
    std::optional<SpinRecording> spin;
    std::vector<measure::MappedModule> modules;  // none: what is checked is when, not how
    std::uint32_t known_pid = 0;                 // the one process whose mappings are known
    StackCopies copies;
    explicit HeldCopies(std::size_t budget)
        : copies(
              samples, spin,
              [this](std::uint32_t pid) { return pid == known_pid ? &modules : nullptr; }, budget) {
    }
    void add(std::uint32_t pid, std::size_t bytes) {
        samples.push_back(copied_sample(pid, bytes));
        copies.hold_sample(bytes);
    }
};

TEST(RecordStackCopies, AnUnknownProcessesCopiesStayHeldUntilItIsKnownOrTheEnd) {
    HeldCopies c(kHeldStackBytes);
    c.known_pid = 10;
    c.add(10, 100);
    c.add(20, 300);
    EXPECT_EQ(c.copies.held_bytes(), 400u);
    c.copies.unwind(false);
    EXPECT_TRUE(c.samples[0].user_regs.empty()) << "a known process's copy is unwound";
    EXPECT_FALSE(c.samples[1].user_regs.empty()) << "an unknown one waits";
    EXPECT_EQ(c.copies.held_bytes(), 300u);
    EXPECT_EQ(c.copies.sample_stats().stacks, 1u);
    c.copies.unwind(true);
    EXPECT_TRUE(c.samples[1].user_regs.empty());
    EXPECT_TRUE(c.samples[1].user_stack.empty());
    EXPECT_EQ(c.copies.held_bytes(), 0u);
    EXPECT_EQ(c.copies.sample_stats().stacks, 2u);
}

TEST(RecordStackCopies, TheBudgetUnwindsOnlyOnceItIsPassedAndThenAnotherBudgetLater) {
    HeldCopies c(1000);
    c.known_pid = 10;
    c.add(20, 800);  // unknown: stays held
    c.add(10, 150);
    c.copies.unwind_if_over_budget();
    EXPECT_FALSE(c.samples[1].user_regs.empty()) << "950 bytes are within the budget";
    c.add(10, 100);
    c.copies.unwind_if_over_budget();
    EXPECT_TRUE(c.samples[1].user_regs.empty());
    EXPECT_TRUE(c.samples[2].user_regs.empty());
    EXPECT_EQ(c.copies.held_bytes(), 800u);
    // The next unwinding waits for the held 800 plus another budget.
    c.add(10, 900);
    c.copies.unwind_if_over_budget();
    EXPECT_FALSE(c.samples[3].user_regs.empty());
    c.add(10, 200);
    c.copies.unwind_if_over_budget();
    EXPECT_TRUE(c.samples[3].user_regs.empty());
}

TEST(RecordStackCopies, AKeptSpinStackBecomesACallChainStartingAtItsCaller) {
    HeldCopies c(kHeldStackBytes);
    c.spin.emplace();
    SpinHit hit;
    hit.pid = hit.tid = 30;
    hit.is_stack = true;
    hit.return_address = 0x401234;
    hit.user_regs.assign(32, 0);
    hit.user_stack.assign(64, 0);
    c.spin->hits.push_back(hit);
    c.copies.hold_spin_stack(0, 64);
    EXPECT_EQ(c.copies.held_bytes(), 64u);
    c.copies.unwind(false);
    EXPECT_FALSE(c.spin->hits[0].user_regs.empty()) << "process 30 is not known yet";
    c.copies.unwind(true);
    const auto& h = c.spin->hits[0];
    ASSERT_FALSE(h.callchain.empty());
    EXPECT_EQ(h.callchain.front(), 0x401234u);
    EXPECT_TRUE(h.user_regs.empty());
    EXPECT_TRUE(h.user_stack.empty());
    EXPECT_EQ(c.copies.held_bytes(), 0u);
    EXPECT_EQ(c.copies.spin_stats().stacks, 1u);
}

}  // namespace
}  // namespace lockprof::record
