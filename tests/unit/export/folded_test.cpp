#include "lockprof/export/folded.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "lockprof/common/error.hpp"

using namespace lockprof::exporting;

namespace {
struct Parsed {
    FoldedStacks stacks;
    ParseReport report;
};
Parsed parse(const std::string& text, bool strict = false) {
    std::istringstream in(text);
    Parsed p;
    ParseOptions options;
    options.strict = strict;
    p.stacks = parse_folded(in, "in.folded", options, p.report);
    return p;
}
// Parses one bad line between two good ones; returns the single problem reported.
std::string problem_of(const std::string& bad_line) {
    auto p = parse("a;b 1\n" + bad_line + "\na;c 2\n");
    EXPECT_EQ(p.report.skipped, 1u) << bad_line;
    EXPECT_EQ(p.stacks.total(), 3u) << "the good lines around a bad one must survive";
    return p.report.problems.empty() ? "" : p.report.problems[0];
}
}  // namespace

// Found by the fuzz_folded invariant (the stacks' weights add up to the total): counts summing
// past 2^64-1 wrapped the total, so every flamegraph percentage was wrong. The line that would
// take the total over is malformed: skipped and reported, refused with --strict.
TEST(ParseFolded, CountsTakingTheTotalPast64BitsAreRefused) {
    auto p = parse("a;b 18446744073709551615\na;c 1\n");
    EXPECT_EQ(p.stacks.total(), 18446744073709551615u);
    EXPECT_EQ(p.stacks.size(), 1u);
    ASSERT_EQ(p.report.skipped, 1u);
    EXPECT_NE(p.report.problems[0].find("in.folded:2: count 1 takes the file's total over 2^64-1"),
              std::string::npos)
        << p.report.problems[0];
    EXPECT_THROW(parse("a;b 18446744073709551615\na;c 1\n", true), lockprof::UsageError);
}

TEST(FoldedStacks, AddJoinsRootFirstAndSums) {
    FoldedStacks s;
    s.add({"main", "lock", "s_lock"}, 3);
    s.add({"main", "lock", "s_lock"}, 4);
    s.add({"main", "work"}, 5);
    s.add({}, 9);                // no frames: nothing
    s.add({"main", "idle"}, 0);  // zero weight: nothing
    EXPECT_EQ(s.total(), 12u);
    EXPECT_EQ(s.size(), 2u);
    EXPECT_EQ(s.stacks().at("main;lock;s_lock"), 7u);
    EXPECT_EQ(to_folded_text(s), "main;lock;s_lock 7\nmain;work 5\n");
}

TEST(FoldedStacks, AddSanitisesSeparatorsNewlinesAndBadBytes) {
    FoldedStacks s;
    s.add({"std::map<a;b>", "line\nbreak\r", "",
           "bad\xff"
           "byte",
           "caf\xc3\xa9"},
          1);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s.stacks().begin()->first, "std::map<a:b>;line break;[unknown];bad?byte;caf\xc3\xa9");
}

// Found by fuzz_perf_script (folded stacks read back unchanged): a leaf frame ending in a blank
// (a symbol "f\0", "sym +0x10") was written as "a;f  1", which the reader takes as the stack
// "a;f". Frame names never end in a blank; one that is only blanks is "[unknown]".
TEST(FoldedStacks, FrameNamesNeverEndInABlank) {
    FoldedStacks s;
    s.add({"main", std::string("f\0", 2)}, 1);
    s.add({"main", "\t\r"}, 1);
    EXPECT_EQ(to_folded_text(s), "main;[unknown] 1\nmain;f 1\n");
    std::istringstream in(to_folded_text(s));
    ParseReport report;
    EXPECT_EQ(parse_folded(in, "in.folded", {.strict = true}, report).stacks(), s.stacks());
}

// Nor begin in one: a line starting with a blank is refused by the reader (an indented line is
// not folded text), so a root frame " x" (a perf script command name) must not write one.
TEST(FoldedStacks, FrameNamesNeverBeginInABlank) {
    FoldedStacks s;
    s.add({" sh", "\tf"}, 1);
    EXPECT_EQ(to_folded_text(s), "sh;f 1\n");
    std::istringstream in(to_folded_text(s));
    ParseReport report;
    EXPECT_EQ(parse_folded(in, "in.folded", {.strict = true}, report).stacks(), s.stacks());
}

// Found by the perf_script fuzz target: a header whose process name is "#  p" (after its
// control bytes) folded to "#  p 250000", which the folded reader takes for a comment.
TEST(FoldedStacks, ALineNeverBeginsAsAComment) {
    FoldedStacks s;
    s.add({"#  p", "f"}, 2);
    s.add({"\x01#x"}, 1);
    s.add_line("#y;g", 3);
    FoldedStacks merged;
    merged.merge(s, "#root");
    for (const FoldedStacks* stacks : {&s, &merged}) {
        const std::string text = to_folded_text(*stacks);
        EXPECT_EQ(text.find("\n#"), std::string::npos) << text;
        EXPECT_NE(text.front(), '#') << text;
        std::istringstream in(text);
        ParseReport report;
        EXPECT_EQ(parse_folded(in, "in.folded", {.strict = true}, report).stacks(),
                  stacks->stacks());
    }
    EXPECT_EQ(to_folded_text(s), "?  p;f 2\n?x 1\n?y;g 3\n");
}

TEST(FoldedStacks, MergePrefixesRootFrame) {
    FoldedStacks cell, sweep;
    cell.add_line("main;lock", 2);
    sweep.merge(cell, "tas/4t");
    sweep.merge(cell, "cas;4t");
    EXPECT_EQ(to_folded_text(sweep), "cas:4t;main;lock 2\ntas/4t;main;lock 2\n");
}

TEST(ParseFolded, ReadsLinesSumsRepeatsAndRoundTrips) {
    auto p = parse("main;a 10\n\nmain;b 5\nmain;a 1\nlast;line 0\nno;newline 7");
    EXPECT_EQ(p.report.skipped, 0u);
    EXPECT_EQ(p.report.lines, 6u);
    EXPECT_EQ(p.stacks.total(), 23u);
    EXPECT_EQ(to_folded_text(p.stacks), "main;a 11\nmain;b 5\nno;newline 7\n");
    auto again = parse(to_folded_text(p.stacks));
    EXPECT_EQ(again.stacks.stacks(), p.stacks.stacks());
}

TEST(ParseFolded, FrameNamesMayContainSpaces) {
    auto p = parse("main;operator new(unsigned long) 4\n");
    EXPECT_EQ(p.stacks.stacks().at("main;operator new(unsigned long)"), 4u);
}

TEST(ParseFolded, EachBadInputClassIsReportedWithFileAndLine) {
    EXPECT_EQ(problem_of("main;a"),
              "in.folded:2: no count: expected 'frame;frame;... COUNT' "
              "with the count after the last space");
    EXPECT_NE(problem_of("main;a -5").find("in.folded:2: negative count '-5'"), std::string::npos);
    EXPECT_NE(problem_of("main;a 12x").find("in.folded:2: non-numeric count '12x'"),
              std::string::npos);
    EXPECT_NE(problem_of("main;a 1.5").find("non-numeric count"), std::string::npos);
    EXPECT_NE(problem_of(" 12").find("in.folded:2: empty stack"), std::string::npos);
    EXPECT_NE(problem_of("main;;a 3").find("empty frame"), std::string::npos);
    EXPECT_NE(problem_of("main;a 99999999999999999999").find("too large"), std::string::npos);
    EXPECT_NE(problem_of("main;a\xff\xfe 3").find("in.folded:2: invalid UTF-8 at byte 7"),
              std::string::npos);
    EXPECT_NE(problem_of("main;a 3\r").find("in.folded:2: CRLF"), std::string::npos);
    EXPECT_NE(problem_of(std::string("main;a\0b 3", 10)).find("NUL"), std::string::npos);
    EXPECT_NE(problem_of(std::string(kMaxFoldedLineBytes + 10, 'x') + " 3")
                  .find("in.folded:2: line longer than 1048576 bytes"),
              std::string::npos);
}

TEST(ParseFolded, OverlongLineDoesNotShiftLineNumbers) {
    auto p = parse(std::string(3 * kMaxFoldedLineBytes, 'y') + " 1\nok 1\nbad\n");
    EXPECT_EQ(p.report.skipped, 2u);
    ASSERT_EQ(p.report.problems.size(), 2u);
    EXPECT_EQ(p.report.problems[0].rfind("in.folded:1:", 0), 0u);
    EXPECT_EQ(p.report.problems[1].rfind("in.folded:3:", 0), 0u);
    EXPECT_EQ(p.stacks.total(), 1u);
}

TEST(ParseFolded, StrictThrowsUsageErrorAtFirstBadLine) {
    try {
        parse("a 1\nb 2\nc x\nd\n", true);
        FAIL() << "strict parsing accepted a bad line";
    } catch (const lockprof::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("in.folded:3: non-numeric count 'x'"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_NO_THROW(parse("a 1\n\nb 2\n", true));
}

TEST(ParseFolded, ProblemListIsCappedButCountIsNot) {
    std::string text = "good 1\n";
    for (int i = 0; i < 250; ++i) text += "bad\n";
    auto p = parse(text);
    EXPECT_EQ(p.report.skipped, 250u);
    EXPECT_EQ(p.report.problems.size(), kMaxReportedProblems);
}

// Not one usable line: the wrong file, refused in one line (a few bad lines are warnings).
TEST(ParseFolded, NoUsableLineIsAnError) {
    const std::string json_result =
        "{\n  \"schema\": \"lockprof.result\",\n  \"schema_version\": 1,\n"
        "  \"config\": {\n    \"trials\": 3,\n    \"watchdog_ns\": 10000000000\n  }\n}\n";
    const std::string binary(
        "\x7f"
        "ELF\x02\x01\x01\0\0\0\0\n\xff\xfe\x01 3\n",
        18);
    for (const auto& text : {json_result, binary, std::string("bad\nworse\n")}) {
        try {
            parse(text);
            ADD_FAILURE() << "parsed input with no usable line: " << text;
        } catch (const lockprof::UsageError& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.rfind("in.folded: none of its", 0), 0u) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
    }
    EXPECT_EQ(parse("").stacks.size(), 0u);      // empty: an empty profile
    EXPECT_EQ(parse("\n\n").stacks.size(), 0u);  // blank lines only: the same
}

TEST(ParseFolded, IndentedLinesAreNotStacks) {
    EXPECT_NE(problem_of("  \"threads\": 2").find("starts with whitespace"), std::string::npos);
}

// lockprof's folded files name their unit in a first comment line, which the reader takes and
// which no stack comes from; other comments are skipped too, and "samples" needs no comment.
TEST(ParseFolded, UnitCommentRoundTripsAndCommentsAreNoStacks) {
    FoldedStacks stacks;
    stacks.add({"main", "a"}, 5);
    const std::string text = to_folded_text(stacks, "ns of CPU time");
    EXPECT_EQ(text, "# lockprof folded stacks; counts are ns of CPU time\nmain;a 5\n");
    const auto p = parse(text + "# another comment 12\n");
    EXPECT_EQ(p.report.unit, "ns of CPU time");
    EXPECT_EQ(p.report.skipped, 0u);
    EXPECT_EQ(p.report.used, 1u);
    EXPECT_EQ(p.stacks.total(), 5u);
    EXPECT_EQ(to_folded_text(stacks, "samples"), "main;a 5\n");
    EXPECT_EQ(parse("main;a 5\n").report.unit, "");
}
