// What a listing row says: a call names what it reaches (not "call 1030"), and a function built
// without -g says so, with what that costs.
#include <gtest/gtest.h>

#include "lockprof/attribution/annotate.hpp"
#include "lockprof/report/annotation_report.hpp"

namespace lockprof::attribution {
namespace {

symbols::Instruction insn(std::string mnemonic, std::string operands, std::string reference) {
    symbols::Instruction i;
    i.mnemonic = std::move(mnemonic);
    i.operands = std::move(operands);
    i.reference = std::move(reference);
    return i;
}

TEST(ListingText, CallsNameWhatTheyReach) {
    EXPECT_EQ(insn("call", "1030", "pthread_spin_lock@plt").listing_text(),
              "call 1030 <pthread_spin_lock@plt>");
    EXPECT_EQ(insn("bl", "4005d0", "__aarch64_swp4_acq").listing_text(),
              "bl 4005d0 <__aarch64_swp4_acq>");
    // Branches inside the function stay short: their target is the address beside them.
    EXPECT_EQ(insn("jne", "8ff80", "pthread_spin_lock+0x10").listing_text(), "jne 8ff80");
    EXPECT_EQ(insn("call", "*%rax", "").listing_text(), "call *%rax");
}

TEST(ListingText, AFunctionWithoutLineInformationSaysWhatThatCosts) {
    HotFunction f;
    f.short_name = "s_lock";
    AnnotatedInstruction a;
    a.instruction = insn("pause", "", "");
    f.instructions = {a, a};
    const auto note = no_line_information_note(f);
    EXPECT_NE(note.find("s_lock: no line or inline information"), std::string::npos) << note;
    EXPECT_NE(note.find("rebuild with -g"), std::string::npos) << note;
    EXPECT_NE(report::render_function_listing(f, "acquire loop").find(note), std::string::npos);
    f.instructions[1].source = "s_lock.c:120";
    EXPECT_EQ(no_line_information_note(f), "");
    EXPECT_EQ(no_line_information_note(HotFunction{}), "") << "not disassembled: nothing to say";
}

}  // namespace
}  // namespace lockprof::attribution
