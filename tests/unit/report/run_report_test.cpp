// The run's table and CSV: which figures appear, and when.
#include "lockprof/report/run_report.hpp"

#include <gtest/gtest.h>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/report/html_report.hpp"

using namespace lockprof;

namespace {

// One cell of `threads` threads and one 1-second trial; each thread acquires 1000 times.
workload::CellResult cell(const std::string& lock, unsigned threads) {
    workload::CellResult c;
    c.lock = c.algorithm = lock;
    c.threads = threads;
    workload::TrialResult t;
    t.wall_ns = 1'000'000'000;
    for (unsigned i = 0; i < threads; ++i) {
        workload::ThreadResult th;
        th.index = i;
        th.acquires = 1000;
        th.end_ns = t.wall_ns;
        t.threads.push_back(th);
    }
    c.trials.push_back(t);
    return c;
}

std::string header_of(const std::string& csv) {
    return csv.substr(0, csv.find('\n'));
}

// The CSV column `name` of data row `row` (1: the first cell).
std::string csv_field(const std::string& csv, const std::string& name, int row) {
    auto split = [](const std::string& line) {
        std::vector<std::string> fields;
        std::size_t from = 0, comma;
        while ((comma = line.find(',', from)) != std::string::npos)
            fields.push_back(line.substr(from, comma - from)), from = comma + 1;
        fields.push_back(line.substr(from));
        return fields;
    };
    std::vector<std::string> lines;
    std::size_t from = 0, nl;
    while ((nl = csv.find('\n', from)) != std::string::npos)
        lines.push_back(csv.substr(from, nl - from)), from = nl + 1;
    const auto names = split(lines.at(0));
    const auto values = split(lines.at(static_cast<std::size_t>(row)));
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return values.at(i);
    ADD_FAILURE() << "no CSV column " << name;
    return "";
}

}  // namespace

TEST(RunReport, SleepsShowOnlyWhereALockSlept) {
    workload::RunResult run;
    run.cells = {cell("tas", 2), cell("pg-slock", 2)};
    auto table = report::render_table(run, analysis::summarize(run));
    EXPECT_EQ(table.find("sleeps/acq"), std::string::npos) << table;
    auto csv = report::render_csv(run, analysis::summarize(run));
    EXPECT_EQ(csv_field(csv, "sleeps_per_acquire", 2), "0") << "the CSV always has it";

    for (auto& t : run.cells[1].trials[0].threads) t.sleeps = 50;  // 100 of 2000 acquires
    table = report::render_table(run, analysis::summarize(run));
    EXPECT_NE(table.find("sleeps/acq"), std::string::npos) << table;
    EXPECT_NE(table.find("pg_usleep"), std::string::npos) << "the legend explains it";
    csv = report::render_csv(run, analysis::summarize(run));
    EXPECT_EQ(csv_field(csv, "sleeps_per_acquire", 2), "0.05");
    EXPECT_EQ(csv_field(csv, "sleeps_per_acquire", 1), "0");
    // Columns scripts read by position stay where they were.
    EXPECT_EQ(header_of(csv).rfind("lock,algorithm,flavour,delay,threads,trials,complete,"
                                   "lost_updates,acquires_per_second,acquires_per_second_min,"
                                   "acquires_per_second_max,wall_ns_per_acquire,",
                                   0),
              0u);
}

// --read-fraction: the reads and writes split appears only when reads were asked for, with the
// shares the threads counted, and the workload line names the fraction and seed.
TEST(RunReport, ReadsAndWritesShowOnlyWithAReadFraction) {
    workload::RunResult run;
    run.cells = {cell("tas", 2), cell("rw-cas", 2)};
    auto table = report::render_table(run, analysis::summarize(run));
    EXPECT_EQ(table.find("reads/s"), std::string::npos) << table;
    EXPECT_EQ(table.find("read fraction"), std::string::npos) << table;

    run.spec.work.read_fraction = 0.75;
    run.spec.seed = 9;
    for (auto& t : run.cells[1].trials[0].threads) t.read_acquires = 750;
    table = report::render_table(run, analysis::summarize(run));
    EXPECT_NE(table.find("read fraction 0.75 (seed 9)"), std::string::npos) << table;
    EXPECT_NE(table.find("reads/s"), std::string::npos) << table;
    EXPECT_NE(table.find("75.0%"), std::string::npos) << "rw-cas's read share: " << table;
    EXPECT_NE(table.find("0.0%"), std::string::npos) << "tas took none shared: " << table;
}

// Acquire-limited runs of unfair locks: one thread finishes long before the other, which then
// runs alone. The table says how much of the window had every thread running.
TEST(RunReport, FullConcurrencyBelowNinetyPercentIsShownWithANote) {
    workload::RunResult run;
    run.cells = {cell("tas", 2), cell("ticket", 2)};
    auto table = report::render_table(run, analysis::summarize(run));
    EXPECT_EQ(table.find("all-run"), std::string::npos) << "everyone ran throughout:\n" << table;
    // tas: thread 0 ran 0-1 s, thread 1 from 0.2 s to 0.6 s: all ran together 0.4 of 1 s.
    auto& threads = run.cells[0].trials[0].threads;
    threads[1].start_ns = 200'000'000;
    threads[1].end_ns = 600'000'000;
    table = report::render_table(run, analysis::summarize(run));
    EXPECT_NE(table.find("all-run"), std::string::npos) << table;
    EXPECT_NE(table.find("40%"), std::string::npos) << table;
    EXPECT_NE(table.find("note: tas with 2 threads"), std::string::npos) << table;
    EXPECT_EQ(table.find("note: ticket"), std::string::npos) << table;
    const auto csv = report::render_csv(run, analysis::summarize(run));
    EXPECT_EQ(csv_field(csv, "full_concurrency", 1), "0.4");
    EXPECT_EQ(csv_field(csv, "full_concurrency", 2), "1");
}

// How many CPUs the threads got: more threads than online CPUs is oversubscription, and
// threads that ran on far fewer CPUs than they could waited off-CPU; both get a note, in the
// table and the HTML report. No CPU time recorded says nothing.
TEST(RunReport, CpuUseNotesOversubscriptionAndOffCpuWaiting) {
    workload::RunResult run;
    run.provenance.logical_cpus = 2;
    run.cells = {cell("tas", 2), cell("pg-slock", 2), cell("ttas", 4)};
    EXPECT_TRUE(report::cell_notes(run, analysis::summarize(run)).empty())
        << "no CPU time recorded: nothing to say";
    auto set_cpu = [&](workload::CellResult& c, std::uint64_t ns) {
        for (auto& t : c.trials[0].threads) t.cpu_ns = ns;
    };
    set_cpu(run.cells[0], 990'000'000);  // 1.98 CPUs of 2
    set_cpu(run.cells[1], 300'000'000);  // 0.6 CPUs of 2
    set_cpu(run.cells[2], 490'000'000);  // 4 threads on 2 CPUs: 1.96
    for (auto& t : run.cells[1].trials[0].threads) t.sleeps = 100;
    const auto summaries = analysis::summarize(run);
    EXPECT_NEAR(summaries[0].cpus_used.median, 1.98, 1e-9);
    EXPECT_EQ(report::cpu_use_note(summaries[0], 2), "");
    const auto slept = report::cpu_use_note(summaries[1], 2);
    EXPECT_NE(slept.find("pg-slock with 2 threads: the threads ran on only 0.60 of 2 CPUs"),
              std::string::npos)
        << slept;
    EXPECT_NE(slept.find("the lock sleeps while it waits: 100 times a second per thread"),
              std::string::npos)
        << slept;
    const auto over = report::cpu_use_note(summaries[2], 2);
    EXPECT_NE(over.find("ttas with 4 threads on 2 online CPUs: oversubscribed, the threads ran on "
                        "1.96 CPUs"),
              std::string::npos)
        << over;
    EXPECT_EQ(report::cpu_use_note(summaries[2], 0).find("oversubscribed"), std::string::npos)
        << "unknown CPU count: no oversubscription claim";
    const auto table = report::render_table(run, summaries);
    EXPECT_NE(table.find("note: pg-slock with 2 threads: the threads ran on only"),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("note: ttas with 4 threads on 2 online CPUs"), std::string::npos);
    EXPECT_EQ(table.find("note: tas with"), std::string::npos) << table;
    EXPECT_NE(table.find("ticks/acq: the tick counter"), std::string::npos) << "legend";
}

// High steal in trials of several cells is one note under the table, not one per cell.
TEST(RunReport, HighStealInManyCellsIsOneNote) {
    workload::RunResult run;
    run.cells = {cell("tas", 2), cell("cas", 2), cell("tas", 1)};
    const auto with_steal = [](workload::CellResult& c, std::uint64_t steal_ns) {
        c.trials[0].steal = workload::TrialSteal{{0, 1}, steal_ns, 1'000'000'000, 10'000'000};
    };
    with_steal(run.cells[0], 180'000'000);  // 9%
    with_steal(run.cells[1], 280'000'000);  // 14%
    with_steal(run.cells[2], 10'000'000);   // 0.5%
    const auto table = report::render_table(run, analysis::summarize(run));
    const std::string note =
        "note: hypervisor steal: the hypervisor took 9-14% of the threads' CPUs in 2 of 3 "
        "trials";
    const auto at = table.find(note);
    EXPECT_NE(at, std::string::npos) << table;
    EXPECT_EQ(table.find("hypervisor steal", at + note.size()), std::string::npos) << table;
    for (auto& c : run.cells) c.trials[0].steal.reset();
    EXPECT_EQ(report::render_table(run, analysis::summarize(run)).find("hypervisor"),
              std::string::npos);
}

// "spread" is one figure everywhere: (max - min) / median of the trials' acquires/s, the same
// in the terminal table, its legend and the HTML report (compare prints analysis::spread_text
// too). Before, the terminal showed half the range (±15.0% here) and the HTML the full range.
TEST(RunReport, SpreadIsTheFullRangeOverTheMedianInTableAndReport) {
    workload::RunResult run;
    run.spec.trials = 3;
    run.calibration.ticks_per_ns = 1;
    auto c = cell("tas", 1);
    c.trials.resize(3, c.trials[0]);
    c.trials[0].threads[0].acquires = 900;   // 900, 1000, 1200 acquires/s
    c.trials[2].threads[0].acquires = 1200;  // (1200 - 900) / 1000 = 30%
    run.cells.push_back(c);
    const auto summaries = analysis::summarize(run);
    EXPECT_EQ(analysis::spread_text(summaries.at(0).acquires_per_second), "30.0%");
    const auto table = report::render_table(run, summaries);
    EXPECT_NE(table.find(" 30.0% "), std::string::npos) << table;
    EXPECT_EQ(table.find("±"), std::string::npos) << table;
    EXPECT_NE(table.find(std::string(analysis::kSpreadDefinition)), std::string::npos) << table;
    const auto html = report::render_html_report(run, summaries, report::ReportExtras{});
    EXPECT_NE(html.find("<td>30.0%</td>"), std::string::npos);
    EXPECT_EQ(analysis::spread_text(analysis::summarize({5})), "-");
    EXPECT_EQ(analysis::spread_text(analysis::summarize({5}), "1 trial"), "1 trial");
}

// The exclusion line says what was verified: none in files from before verification trials,
// one trial per cell, one per process with --processes, and which cells failed.
TEST(RunReport, ExclusionLineSaysWhatTheVerificationTrialsChecked) {
    workload::RunResult run;
    run.cells = {cell("tas", 2), cell("cas", 2)};
    EXPECT_EQ(report::exclusion_summary(run), "");
    for (auto& c : run.cells) c.verification = workload::Verification{1, 3000, 1000, 0, 0};
    EXPECT_EQ(report::exclusion_summary(run),
              "no second holder in 6000 checked acquires (a verification trial in each of 2 "
              "cells)");
    EXPECT_NE(report::render_table(run, analysis::summarize(run))
                  .find("\nexclusion: no second holder in 6000 checked acquires"),
              std::string::npos);
    run.spec.processes = 2;
    for (auto& c : run.cells) c.verification->trials = 2;
    EXPECT_EQ(report::exclusion_summary(run),
              "no second holder in 6000 checked acquires (a verification trial in each of 2 "
              "cells in each of 2 processes)");
    run.cells[1].verification.reset();
    run.cells[1].lost_updates = 4;  // a measured trial's count of line 0 came up short
    EXPECT_EQ(report::exclusion_summary(run),
              "FAILED for cas with 2 threads (see the notes); 3000 acquires checked, a "
              "verification trial in 1 of 2 cells in each of 2 processes");
    EXPECT_TRUE(report::exclusion_failed(run));
}
