#include "lockprof/export/perf_script.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "lockprof/common/error.hpp"

using namespace lockprof::exporting;

namespace {
// Shapes copied from `perf script` 6.1 output on this machine: with callchains (perf record -g)
// the header ends after the event and frames follow, tab-indented, leaf first.
const char* kCallchains =
    "p  8845  1129.476852:     250000 cpu-clock: \n"
    "\tffffffff81775b9a elf_load+0x28a ([kernel.kallsyms])\n"
    "\tffffffff81000130 entry_SYSCALL_64_after_hwframe+0x76 ([kernel.kallsyms])\n"
    "\t    7f50e20f2ad7 [unknown] ([unknown])\n"
    "\n"
    "p  8845  1129.477170:     250000 cpu-clock: \n"
    "\t          401136 leaf+0x16 (/tmp/perfcheck/p)\n"
    "\t          401160 main+0x10 (/tmp/perfcheck/p)\n"
    "\t    7f50e1f1fd8f __libc_start_call_main+0x7f (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\n"
    "p  8845  1129.477420:     250000 cpu-clock: \n"
    "\t          401136 leaf+0x16 (/tmp/perfcheck/p)\n"
    "\t          401160 main+0x10 (/tmp/perfcheck/p)\n"
    "\t    7f50e1f1fd8f __libc_start_call_main+0x7f (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\n";

FoldedStacks fold(const std::string& text, PerfScriptOptions options, PerfScriptReport& report) {
    std::istringstream in(text);
    return fold_perf_script(in, "perf.txt", options, report);
}
FoldedStacks fold(const std::string& text, PerfScriptOptions options = {}) {
    PerfScriptReport report;
    auto s = fold(text, options, report);
    EXPECT_EQ(report.skipped, 0u) << (report.problems.empty() ? "" : report.problems[0]);
    return s;
}
}  // namespace

TEST(FoldPerfScript, CallchainsBecomeRootFirstStacks) {
    PerfScriptReport report;
    const auto s = fold(kCallchains, {}, report);
    EXPECT_EQ(report.samples, 3u);
    EXPECT_EQ(report.folded, 3u);
    EXPECT_EQ(report.event, "cpu-clock");
    EXPECT_EQ(to_folded_text(s),
              "p;[unknown];entry_SYSCALL_64_after_hwframe_[k];elf_load_[k] 1\n"
              "p;__libc_start_call_main;main;leaf 2\n");
}

TEST(FoldPerfScript, WithoutCallchainsTheSampledFunctionIsTheLeaf) {
    const std::string text =
        "               p  8849  1130.786715:     250000 cpu-clock:  ffffffff81775b9a "
        "elf_load+0x28a ([kernel.kallsyms])\n"
        "               p  8849  1130.787402:     250000 cpu-clock:      7fea715e3c40 brk+0x0 "
        "(/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
        "               p  8849  1130.787403:     250000 cpu-clock:      7fea715e3c40 brk+0x0 "
        "(/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n";
    EXPECT_EQ(to_folded_text(fold(text)), "p;brk 2\np;elf_load_[k] 1\n");
}

TEST(FoldPerfScript, RootOptions) {
    PerfScriptOptions o;
    o.root = PerfScriptOptions::Root::comm_pid;
    EXPECT_EQ(fold(kCallchains, o).stacks().count("p-8845;__libc_start_call_main;main;leaf"), 1u);
    o.root = PerfScriptOptions::Root::none;
    EXPECT_EQ(fold(kCallchains, o).stacks().count("__libc_start_call_main;main;leaf"), 1u);
}

TEST(FoldPerfScript, CommWithSpacesPidTidAndCpu) {
    const std::string text =
        "Web Content 1234/1240 [003] 55.000001: 1000 cycles:u: \n"
        "\t 401136 js::RunScript(JSContext*, js::RunState&) (/usr/lib/libxul.so)\n\n";
    PerfScriptOptions o;
    o.root = PerfScriptOptions::Root::comm_pid;
    EXPECT_EQ(to_folded_text(fold(text, o)),
              "Web Content-1234/1240;js::RunScript(JSContext*, js::RunState&) 1\n");
}

TEST(FoldPerfScript, UnknownSymbolsNamedAfterModuleAndSeparatorsSanitised) {
    const std::string text =
        "prog 1 1.000001: 1 cpu-clock: \n"
        "\t 7f0000001000 [unknown] (/usr/lib/libfoo.so.1)\n"
        "\t 7f0000002000 weird;name+0x4 (/tmp/prog (deleted))\n"
        "\t ffffffffc0001000 nft_do_chain+0x10 ([nf_tables])\n"
        "\t ffffffffff600000 [unknown] ([vsyscall])\n\n";
    EXPECT_EQ(to_folded_text(fold(text)),
              "prog;[vsyscall];nft_do_chain_[k];weird:name;[libfoo.so.1] 1\n");
    PerfScriptOptions o;
    o.annotate_kernel = false;
    EXPECT_EQ(fold(text, o).stacks().begin()->first,
              "prog;[vsyscall];nft_do_chain;weird:name;[libfoo.so.1]");
}

// Found by fuzz_perf_script: names were cleaned of ';' and control characters only, so a
// symbol or process name with invalid UTF-8 (or a control character in the process name) made a
// folded line that `lockprof flamegraph` then refused, and that reached the SVG as it was. Names
// are now cleaned as sanitize_frame() cleans them.
TEST(FoldPerfScript, NamesWithInvalidUtf8AndControlCharactersFoldToValidLines) {
    const std::string text =
        "pr\x01og\xff 1 1.000001: 1 cpu-clock: \n"
        "\t 7f0000001000 sym\xc3"
        "bol+0x4 (/usr/lib/libfoo.so.1)\n"
        "\t 7f0000002000 [unknown] (/tmp/lib\xe9.so)\n"
        "\t 7f0000003000 del\x7f+0x4 (/usr/lib/libfoo.so.1)\n\n";
    const auto folded = to_folded_text(fold(text));
    EXPECT_EQ(folded, "pr og?;del;[lib?.so];sym?bol 1\n");
    std::istringstream in(folded);
    ParseReport report;
    EXPECT_NO_THROW(parse_folded(in, "folded", {.strict = true}, report));
}

TEST(FoldPerfScript, FirstEventByDefaultOthersOnRequest) {
    const std::string text =
        "a 1 1.000001: 1 cpu-clock: \n\t 401000 f (/x)\n\n"
        "a 1 1.000002: 1 page-faults: \n\t 401000 g (/x)\n\n"
        "a 1 1.000003: 1 cpu-clock: \n\t 401000 f (/x)\n\n";
    PerfScriptReport report;
    auto s = fold(text, {}, report);
    EXPECT_EQ(to_folded_text(s), "a;f 2\n");
    EXPECT_EQ(report.other_event, 1u);
    ASSERT_EQ(report.other_events.size(), 1u);
    EXPECT_EQ(report.other_events[0], "page-faults");
    PerfScriptOptions o;
    o.event = "page-faults";
    EXPECT_EQ(to_folded_text(fold(text, o)), "a;g 1\n");
    o.event = "all";
    EXPECT_EQ(fold(text, o).total(), 3u);
}

TEST(FoldPerfScript, WeightByPeriod) {
    const std::string text =
        "a 1 1.000001: 250000 cpu-clock: \n\t 401000 f (/x)\n\n"
        "a 1 1.000002: 500000 cpu-clock: \n\t 401000 f (/x)\n\n";
    PerfScriptOptions o;
    o.weight_by_period = true;
    EXPECT_EQ(to_folded_text(fold(text, o)), "a;f 750000\n");
    EXPECT_EQ(to_folded_text(fold(text)), "a;f 2\n");
}

// Found by fuzz_perf_script: a symbol that ended in a blank ("sym +0x10", or a NUL cleaned to
// ' ') folded to a line the folded reader reads as another stack (it drops trailing blanks).
TEST(FoldPerfScript, SymbolsEndingInABlankFoldToStacksThatReadBack) {
    const std::string text = std::string(
        "a 1 1.000001: 1 cpu-clock: \n\t 401000 f +0x10 (/x)\n\t 401100 g\0 (/x)\n\n", 68);
    const auto s = fold(text);
    EXPECT_EQ(to_folded_text(s), "a;g;f 1\n");
    std::istringstream in(to_folded_text(s));
    ParseReport report;
    EXPECT_EQ(parse_folded(in, "folded", {.strict = true}, report).stacks(), s.stacks());
}

// Found by the fuzz_perf_script invariant (the stacks' weights add up to the total): periods up
// to 2^64-1 summed past it and wrapped, so the flamegraph's total was a small number. A sample
// whose period would take the total over 2^64-1 is left out and reported.
TEST(FoldPerfScript, PeriodsTakingTheTotalPast64BitsAreLeftOut) {
    const std::string text =
        "a 1 1.000001: 18446744073709551615 cpu-clock: \n\t 401000 f (/x)\n\n"
        "a 1 1.000002: 2 cpu-clock: \n\t 401000 g (/x)\n\n";
    PerfScriptOptions o;
    o.weight_by_period = true;
    PerfScriptReport report;
    const auto s = fold(text, o, report);
    EXPECT_EQ(to_folded_text(s), "a;f 18446744073709551615\n");
    EXPECT_EQ(s.total(), 18446744073709551615u);
    EXPECT_EQ(report.folded, 1u);
    ASSERT_EQ(report.skipped, 1u);
    EXPECT_NE(report.problems[0].find("over 2^64-1"), std::string::npos) << report.problems[0];
}

TEST(FoldPerfScript, UnrecognisedLinesReportedAndStrictFails) {
    const std::string text = std::string("garbage here\n") + kCallchains + "more garbage\n";
    PerfScriptReport report;
    const auto s = fold(text, {}, report);
    EXPECT_EQ(s.total(), 3u);
    EXPECT_EQ(report.skipped, 2u);
    ASSERT_EQ(report.problems.size(), 2u);
    EXPECT_EQ(report.problems[0].rfind("perf.txt:1: unrecognised line", 0), 0u);
    EXPECT_EQ(report.problems[1].rfind("perf.txt:17: unrecognised line", 0), 0u);
    PerfScriptOptions o;
    o.strict = true;
    EXPECT_THROW(fold(text, o, report), lockprof::UsageError);
}

TEST(FoldPerfScript, EmptyInputFoldsNothing) {
    PerfScriptReport report;
    EXPECT_TRUE(fold("", {}, report).empty());
    EXPECT_EQ(report.samples, 0u);
}

// Not one sample in lines that are not perf script: the wrong file (a binary, a result JSON),
// refused in one line; empty input and comment-only input stay an empty profile.
TEST(FoldPerfScript, NoUsableLineIsAnError) {
    for (const std::string& text :
         {std::string("{\n  \"schema\": \"lockprof.result\",\n  \"cells\": []\n}\n"),
          std::string("\x7f"
                      "ELF\x02\x01\x01\0\0\0\0\n\xff\xfe\x01",
                      15)}) {
        PerfScriptReport report;
        try {
            fold(text, {}, report);
            ADD_FAILURE() << "folded input with no usable line";
        } catch (const lockprof::UsageError& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.rfind("perf.txt: none of its", 0), 0u) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
    }
    PerfScriptReport report;
    EXPECT_TRUE(fold("# perf script header\n\n", {}, report).empty());
}
