// What a run prints by default (Detail::brief) and with --verbose (Detail::full): the line
// budget of a 6-cell run, one note per kind naming its cells and its figure's range, and every
// sentence the brief form drops coming back in full (issue 30).
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lockprof/analysis/explain.hpp"
#include "lockprof/analysis/notes.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/report/run_report.hpp"
#include "support/screen.hpp"

using namespace lockprof;
using analysis::Detail;

namespace {

constexpr std::uint64_t kWindow = 200'000'000;  // 200 ms trials

// One cell: `threads` threads, one trial per entry of `acquires` (acquires per thread), each
// thread on `cpu_share` of the window on a CPU, with a context switch or two counted.
workload::CellResult cell(const std::string& lock, unsigned threads,
                          const std::vector<std::uint64_t>& acquires, double cpu_share) {
    workload::CellResult c;
    c.lock = c.algorithm = lock;
    c.threads = threads;
    c.delay = arch::Delay::pause;
    unsigned index = 0;
    for (std::uint64_t per_thread : acquires) {
        workload::TrialResult t;
        t.trial = index++;
        t.wall_ns = kWindow;
        for (unsigned i = 0; i < threads; ++i) {
            workload::ThreadResult th;
            th.index = i;
            th.acquires = per_thread;
            th.rmw_attempts = per_thread;
            th.end_ns = t.wall_ns;
            th.cpu_ns = static_cast<std::uint64_t>(cpu_share * kWindow);
            th.counters.push_back({"context_switches", 2 + i, kWindow, kWindow});
            t.threads.push_back(th);
        }
        c.trials.push_back(t);
    }
    return c;
}

// The run, `--lock=tas,ttas,cas --threads=1,2 --trials=3 --duration=200ms` on a
// 2-core VM without a PMU: every pair inconclusive (spreads of 40-60%), the threads off-CPU in
// every cell (0.6 of what they could use), no event that tells anything apart.
workload::RunResult vm_run() {
    workload::RunResult run;
    run.provenance.lockprof_version = "0.1.0";
    run.provenance.git_revision = "abc1234";
    run.provenance.arch = "x86_64";
    run.provenance.cpu_model = "AMD EPYC";
    run.provenance.logical_cpus = 2;
    run.provenance.vm_hint = "hypervisor flag set";
    run.provenance.build_type = "RelWithDebInfo";
    run.provenance.compiler = "GNU 12.2.0";
    run.provenance.kernel = "Linux 6.1 x86_64";
    run.spec.locks = {"tas", "ttas", "cas"};
    run.spec.threads = {1, 2};
    run.spec.duration_ns = kWindow;
    run.spec.trials = 3;
    const std::vector<std::vector<std::uint64_t>> one = {{20'000'000, 14'000'000, 19'000'000},
                                                         {16'000'000, 19'500'000, 11'000'000},
                                                         {11'000'000, 18'000'000, 15'000'000}};
    const std::vector<std::vector<std::uint64_t>> two = {{10'000'000, 6'000'000, 9'000'000},
                                                         {5'000'000, 8'500'000, 7'000'000},
                                                         {7'000'000, 4'000'000, 9'500'000}};
    const char* locks[] = {"tas", "ttas", "cas"};
    for (int i = 0; i < 3; ++i) run.cells.push_back(cell(locks[i], 1, one[i], 0.62));
    for (int i = 0; i < 3; ++i) run.cells.push_back(cell(locks[i], 2, two[i], 0.61));
    run.notes.push_back(
        "cycles, instructions, cache_misses: not counted: the kernel exposes no PMU for them "
        "(ENOENT; a VM without a vPMU?); run on bare metal or enable the vPMU; software events "
        "still count");
    return run;
}

std::string output(const workload::RunResult& run, Detail detail) {
    const auto summaries = analysis::summarize(run);
    analysis::ExplainThresholds thresholds;
    thresholds.verdict = analysis::verdict_options(summaries);
    return report::render_table(run, summaries, detail) + "\n" +
           analysis::render_explanation(
               analysis::explain(analysis::evidence_from(summaries), thresholds), detail);
}

using test::screen_lines;

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

}  // namespace

// The 6-cell run printed 62 lines; the answer fits one screen, with every verdict, its
// interval, the remedy and the missing PMU events still in it.
TEST(BriefOutput, SixCellRunFitsTwentyFiveLinesAtOneHundredColumns) {
    const auto run = vm_run();
    const std::string text = output(run, Detail::brief);
    EXPECT_LE(screen_lines(text), 25) << text;
    // The verdicts and their intervals (one line), with the remedy.
    EXPECT_EQ(count(text, "inconclusive"), 4u + 1u + 1u)
        << "four table cells, the verdict line and the explanation's one line:\n"
        << text;
    EXPECT_NE(text.find("inconclusive at 3 trials, intervals ttas "), std::string::npos) << text;
    EXPECT_NE(text.find("trials each would likely settle them"), std::string::npos) << text;
    // One off-CPU note for all six cells, with its range per thread count.
    EXPECT_EQ(count(text, "off-CPU"), 1u) << text;
    EXPECT_NE(text.find("0.62 of 1 CPU in all 3 cells at 1 thread and 1.22 of 2 in all 3 cells "
                        "at 2 threads"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("cycles, instructions, cache_misses: not counted"), std::string::npos);
    EXPECT_NE(text.find("context_switches: under 0.005 per acquire in every cell"),
              std::string::npos)
        << text;
    // The explanation: one line for the four pairs, not four blocks of numbered points.
    EXPECT_NE(text.find("ttas, cas vs tas at 1 and 2 threads: inconclusive"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("    1. "), std::string::npos) << text;
    EXPECT_EQ(text.find("1 threads"), std::string::npos) << text;
}

// Everything the brief form leaves out comes back with --verbose: each cell's note, the whole
// legend and method, the per-pair verdict lines, the dropped columns, the numbered findings.
TEST(BriefOutput, VerboseRestoresEverySentenceTheBriefFormDrops) {
    const auto run = vm_run();
    const auto summaries = analysis::summarize(run);
    const std::string brief = output(run, Detail::brief);
    const std::string full = output(run, Detail::full);
    for (const auto& note : report::cell_notes(run, summaries, Detail::full))
        EXPECT_NE(full.find("note: " + note), std::string::npos) << note;
    EXPECT_EQ(count(full, "the threads ran on only"), 6u) << full;
    EXPECT_NE(full.find(analysis::method_text(analysis::verdict_options(summaries), 4)),
              std::string::npos)
        << full;
    for (const char* sentence :
         {"ns/acq: wall time / acquires", "ticks/acq: the tick counter", "fairness: Jain's index",
          "ttas vs tas at 1 thread: inconclusive, interval",
          "build: GNU 12.2.0 RelWithDebInfo; kernel Linux 6.1", "lock page normal (heap), pin none",
          "context_switches/acq", "    1. throughput inconclusive",
          "inconclusive: the throughput verdict is not settled"}) {
        EXPECT_NE(full.find(sentence), std::string::npos) << sentence << "\n" << full;
        EXPECT_EQ(brief.find(sentence), std::string::npos) << sentence << "\n" << brief;
    }
    // Each brief line that is not in the full form merges lines that are.
    EXPECT_GT(screen_lines(full), 2 * screen_lines(brief));
}

// Each per-cell note kind becomes one note naming its cells and its figure's range.
TEST(BriefOutput, OversubscribedAndSleepingCellsAreOneNoteEach) {
    workload::RunResult run;
    run.provenance.logical_cpus = 2;
    run.cells = {cell("tas", 4, {1000}, 0.49), cell("cas", 4, {1000}, 0.48),
                 cell("pg-slock", 2, {1000}, 0.3), cell("event-mutex", 2, {1000}, 0.25)};
    for (auto& c : {&run.cells[2], &run.cells[3]})
        for (auto& t : c->trials[0].threads) t.sleeps = 100;
    const auto notes = report::cell_notes(run, analysis::summarize(run), Detail::brief);
    ASSERT_EQ(notes.size(), 2u) << ::testing::PrintToString(notes);
    EXPECT_NE(notes[0].find("oversubscribed: all 2 cells at 4 threads had more threads than the 2 "
                            "online CPUs and ran on 1.92-1.96 CPUs"),
              std::string::npos)
        << notes[0];
    EXPECT_NE(notes[1].find("all 2 cells at 2 threads: the lock sleeps while it waits"),
              std::string::npos)
        << notes[1];
    EXPECT_NE(notes[1].find("ran on only 0.50-0.60 CPUs"), std::string::npos) << notes[1];
    // --verbose: one note per cell.
    EXPECT_EQ(report::cell_notes(run, analysis::summarize(run), Detail::full).size(), 4u);
}

// A low all-run share is one note, and its cause fits the run's own stop rule: --acquires
// lets threads finish early, --duration does not (the run blamed --acquires on a
// --duration run).
TEST(BriefOutput, PartialConcurrencyNoteFitsTheRunsStopRule) {
    workload::RunResult run;
    run.cells = {cell("tas", 2, {1000}, 1.0), cell("cas", 2, {1000}, 1.0)};
    for (auto& c : run.cells) {
        c.trials[0].threads[1].start_ns = 100'000'000;  // half the 200 ms window
        c.trials[0].threads[1].cpu_ns = 100'000'000;
    }
    run.spec.duration_ns = kWindow;
    auto notes = report::cell_notes(run, analysis::summarize(run), Detail::brief);
    ASSERT_EQ(notes.size(), 1u) << ::testing::PrintToString(notes);
    EXPECT_NE(notes[0].find("all threads ran at once for only 50% of the trial window in all 2 "
                            "cells at 2 threads"),
              std::string::npos)
        << notes[0];
    EXPECT_EQ(notes[0].find("--acquires"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("started late"), std::string::npos) << notes[0];
    for (const auto& note : report::cell_notes(run, analysis::summarize(run), Detail::full))
        EXPECT_EQ(note.find("Unfair locks with --acquires"), std::string::npos) << note;

    run.spec.duration_ns.reset();
    run.spec.acquires_per_thread = 1000;
    notes = report::cell_notes(run, analysis::summarize(run), Detail::brief);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("Unfair locks with --acquires do this"), std::string::npos) << notes[0];
}

// The verdict lines: limits that read the same are one line naming every pair.
TEST(BriefOutput, TooFewTrialsIsOneLineForEveryPair) {
    workload::RunResult run;
    run.cells = {cell("tas", 1, {1000}, 1.0), cell("ttas", 1, {900}, 1.0),
                 cell("cas", 1, {800}, 1.0), cell("tas", 2, {500}, 1.0),
                 cell("cas", 2, {400}, 1.0)};
    const auto lines = analysis::verdict_notes(analysis::summarize(run), Detail::brief);
    ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
    EXPECT_EQ(lines[1].rfind("ttas, cas vs tas at 1 thread; cas vs tas at 2 threads: ", 0), 0u)
        << lines[1];
    EXPECT_EQ(analysis::verdict_notes(analysis::summarize(run), Detail::full).size(), 4u);
}

// `--trials auto`: the cells the --max-time budget stopped unsettled are one line, with the
// range of their trials and interval widths; --verbose gives each its own.
TEST(BriefOutput, BudgetStoppedCellsAreOneLine) {
    workload::RunResult run;
    run.spec.max_time_ns = 10'000'000'000;
    run.cells = {cell("tas", 2, {1000, 1500, 800, 1200}, 1.0),
                 cell("ttas", 2, {900, 1400, 700, 1300, 1000}, 1.0),
                 cell("cas", 2, {1000, 1010, 995}, 1.0)};
    run.cells[0].stop = run.cells[1].stop = workload::TrialStop::budget;
    run.cells[2].stop = workload::TrialStop::settled;
    const auto summaries = analysis::summarize(run);
    const auto full = analysis::adaptive_notes(summaries);
    ASSERT_EQ(full.size(), 3u) << ::testing::PrintToString(full);
    const auto brief = analysis::verdict_notes(summaries, Detail::brief);
    const auto line = std::find_if(brief.begin(), brief.end(), [](const std::string& l) {
        return l.find("stayed inconclusive") != std::string::npos;
    });
    ASSERT_NE(line, brief.end()) << ::testing::PrintToString(brief);
    EXPECT_EQ(line->rfind("trials auto: tas, ttas at 2 threads stayed inconclusive: the --max-time "
                          "budget ran out after 4-5 trials with intervals ±",
                          0),
              0u)
        << *line;
    EXPECT_EQ(std::count_if(brief.begin(), brief.end(),
                            [](const std::string& l) {
                                return l.find("stayed inconclusive") != std::string::npos;
                            }),
              1);
}

// The table's acquires/s is the geometric mean the `vs first` ratio divides, so the ratio is
// of the figures shown (the row read 36.47M ... 0.92x beside a 35.67M baseline).
TEST(BriefOutput, VsFirstIsTheRatioOfTheFiguresShown) {
    workload::RunResult run;
    run.cells = {cell("tas", 1, {1000, 4000, 3000}, 1.0), cell("cas", 1, {3000, 2500, 2600}, 1.0)};
    const auto summaries = analysis::summarize(run);
    const double base = std::cbrt(1000.0 * 4000 * 3000) / 0.2;  // acquires per second
    const double other = std::cbrt(3000.0 * 2500 * 2600) / 0.2;
    EXPECT_NEAR(summaries[0].throughput, base, 1e-6 * base);
    EXPECT_NEAR(summaries[1].comparison->effect.ratio, other / base, 1e-9);
    for (Detail detail : {Detail::brief, Detail::full}) {
        const auto table = report::render_table(run, summaries, detail);
        EXPECT_NE(table.find(format_si(base)), std::string::npos) << table;
        EXPECT_NE(table.find(format_si(other)), std::string::npos) << table;
        EXPECT_EQ(table.find(format_si(summaries[0].acquires_per_second.median)), std::string::npos)
            << "the median is not what is compared: " << table;
    }
}

// x86 has no LL/SC: a run comparing LL/SC-sensitive locks says so once; aarch64 does not, nor
// a run of locks whose code is the C library's.
TEST(BriefOutput, NoLlscOnX86IsOneNoteWhereItMatters) {
    auto run = vm_run();
    const std::string note = "x86_64 has no LL/SC";
    EXPECT_EQ(count(report::render_table(run, analysis::summarize(run), Detail::brief), note), 1u);
    EXPECT_EQ(count(report::render_table(run, analysis::summarize(run), Detail::full), note), 1u);
    for (const char* arch : {"aarch64", "armv7l", "riscv64"}) {
        run.provenance.arch = arch;
        EXPECT_EQ(count(report::render_table(run, analysis::summarize(run)), "has no LL/SC"), 0u)
            << arch;
    }
    run.provenance.arch = "x86_64";
    run.cells = {cell("pthread-mutex", 1, {1000}, 1.0), cell("tas", 1, {900}, 1.0)};
    EXPECT_EQ(count(report::render_table(run, analysis::summarize(run)), "has no LL/SC"), 0u);
}

// An interrupted sweep's cells that never ran a trial: marked by trials 0 and empty figures in
// the CSV, not a row of zeros a script would read as measured.
TEST(BriefOutput, CsvRowOfACellThatNeverRanHasNoFigures) {
    workload::RunResult run;
    run.cells = {cell("tas", 1, {1000}, 1.0), cell("cas", 1, {}, 1.0)};
    run.cells[1].complete = false;
    const auto csv = report::render_csv(run, analysis::summarize(run));
    std::istringstream in(csv);
    std::string header, first, second;
    std::getline(in, header), std::getline(in, first), std::getline(in, second);
    EXPECT_EQ(second.rfind("cas,cas,,pause,1,0,0,0,", 0), 0u) << second;
    EXPECT_EQ(second.find_first_not_of(',', std::string("cas,cas,,pause,1,0,0,0,").size()),
              std::string::npos)
        << "every figure empty: " << second;
    EXPECT_EQ(std::count(second.begin(), second.end(), ','),
              std::count(header.begin(), header.end(), ','));
}

// Pairs with nothing but an inconclusive verdict share one line, whose remedy fits what the
// run already had: no "try --sample" for a sampled run.
TEST(BriefOutput, InconclusivePairsShareOneLineWithTheRemedyTheyLack) {
    analysis::PairDiagnosis d;
    d.baseline = "tas";
    d.other = "cas";
    d.threads = 2;
    d.inconclusive = true;
    d.findings.push_back({"throughput", "throughput inconclusive: ...", false});
    d.findings.push_back({"inconclusive", "inconclusive: ...", false});
    auto ttas = d;
    ttas.other = "ttas";
    std::string text = analysis::render_explanation({ttas, d}, Detail::brief);
    EXPECT_NE(text.find("  ttas, cas vs tas at 2 threads: inconclusive, nothing counted tells "
                        "them apart; try --sample\n"),
              std::string::npos)
        << text;
    d.sampled = ttas.sampled = true;
    text = analysis::render_explanation({ttas, d}, Detail::brief);
    EXPECT_EQ(text.find("--sample"), std::string::npos) << text;
    EXPECT_NE(text.find("nothing counted or sampled"), std::string::npos) << text;
}

TEST(Notes, CellsAndPairsAreNamedTogether) {
    using analysis::CellRef;
    const std::vector<CellRef> all = {{"tas", 1}, {"cas", 1}, {"tas", 2}, {"cas", 2}};
    EXPECT_EQ(analysis::cells_text(all, all), "all 2 cells at 1 thread and all 2 at 2 threads");
    EXPECT_EQ(analysis::cells_text({{"tas", 1}, {"cas", 2}}, all),
              "tas at 1 thread and cas at 2 threads");
    EXPECT_EQ(analysis::cells_text({{"tas", 1}, {"cas", 1}}, {}), "tas, cas at 1 thread");
    EXPECT_EQ(analysis::pairs_text(
                  {{"ttas", "tas", 1}, {"cas", "tas", 1}, {"ttas", "tas", 2}, {"cas", "tas", 2}}),
              "ttas, cas vs tas at 1 and 2 threads");
    EXPECT_EQ(analysis::pairs_text({{"cas", "tas", 1}, {"ttas", "tas", 4}}),
              "cas vs tas at 1 thread; ttas vs tas at 4 threads");
    EXPECT_EQ(threads_text(1), "1 thread");
    EXPECT_EQ(threads_text(8), "8 threads");
}
