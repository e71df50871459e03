// Reading a result file checks what docs/result-schema.md promises ("Validation when
// reading"): each rule, with a damaged copy of a valid document, refused by its JSON path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/report/json.hpp"
#include "lockprof/results/result_reader.hpp"

namespace lockprof {
namespace {

using nlohmann::json;

// Two trials of tas with two threads, every figure consistent.
workload::RunResult valid_run() {
    workload::RunResult run;
    run.spec.locks = {"tas"};
    run.spec.threads = {2};
    run.spec.trials = 2;
    run.spec.duration_ns = 1'000'000;
    run.calibration.burn_iterations_per_ns = 1.0;
    run.calibration.ticks_per_ns = 1.0;
    workload::CellResult cell;
    cell.lock = cell.algorithm = "tas";
    cell.threads = 2;
    cell.complete = true;
    for (unsigned i = 0; i < 2; ++i) {
        workload::TrialResult trial;
        trial.trial = i;
        trial.wall_ns = 1'000'000;
        trial.ticks = 1'000'000;
        for (unsigned k = 0; k < 2; ++k) {
            workload::ThreadResult t;
            t.index = k;
            t.acquires = 1000 + k;
            t.rmw_attempts = 1200;
            t.cpu_ns = 900'000;
            t.start_ns = k * 10;
            t.end_ns = 1'000'000 - k * 10;
            trial.threads.push_back(t);
        }
        cell.trials.push_back(trial);
    }
    run.cells.push_back(cell);
    return run;
}

json valid_doc() {
    const auto run = valid_run();
    return report::to_json(run, analysis::summarize(run));
}

// What result_from_json refused `doc` with, or "" when it accepted it.
std::string refusal(const json& doc) {
    try {
        results::result_from_json(doc);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

TEST(ResultValidation, AValidDocumentIsAccepted) {
    EXPECT_EQ(refusal(valid_doc()), "");
    const auto back = results::result_from_json(valid_doc());
    ASSERT_EQ(back.cells.size(), 1u);
    EXPECT_EQ(back.cells[0].trials[1].threads[1].acquires, 1001u);
    EXPECT_FALSE(back.spec.perturbation_check);
    EXPECT_TRUE(back.cells[0].plain_trials.empty());
}

// The observer-effect check's twins are written and read back, and judged again the same way.
TEST(ResultValidation, PlainTrialsRoundTripWithTheirPerturbation) {
    auto run = valid_run();
    run.spec.perturbation_check = true;
    auto& cell = run.cells[0];
    cell.plain_trials = cell.trials;
    for (auto& t : cell.plain_trials)
        for (auto& th : t.threads) th.acquires *= 2;  // the instruments halved throughput
    const auto summaries = analysis::summarize(run);
    ASSERT_TRUE(summaries[0].perturbation);
    EXPECT_NEAR(summaries[0].perturbation->ratio, 0.5, 0.01);
    const auto doc = report::to_json(run, summaries);
    EXPECT_EQ(refusal(doc), "");
    const auto back = results::result_from_json(doc);
    EXPECT_TRUE(back.spec.perturbation_check);
    ASSERT_EQ(back.cells[0].plain_trials.size(), 2u);
    EXPECT_EQ(back.cells[0].plain_trials[1].threads[1].acquires, 2002u);
    const auto again = analysis::summarize(back);
    ASSERT_TRUE(again[0].perturbation);
    EXPECT_EQ(again[0].perturbation->ratio, summaries[0].perturbation->ratio);
    EXPECT_EQ(doc["cells"][0]["summary"]["perturbation"]["verdict"], "too few trials");
}

struct Damage {
    const char* name;
    std::function<void(json&)> damage;
    const char* refused;  // the path and reason expected in the message
};

// clang-format off
const std::vector<Damage> kDamages = {
    // The three: a negative count, a zero duration, a cell with no trials.
    {"negative acquires", [](json& d) { d["cells"][0]["trials"][0]["threads"][1]["acquires"] = -5; },
     "cells[0].trials[0].threads[1].acquires: -5 is negative"},
    {"zero wall_ns", [](json& d) { d["cells"][0]["trials"][1]["wall_ns"] = 0; },
     "cells[0].trials[1].wall_ns: is 0, and must be positive"},
    {"cell with no trials", [](json& d) {
         d["cells"][0]["trials"] = json::array();
         d["cells"][0]["complete"] = false;
         d["cells"][0].erase("summary"); },
     "cells[0].trials: tas with 2 threads has no trials, yet the run was not interrupted"},
    // The class: counts, other numbers, durations, types, presence.
    {"fractional count", [](json& d) { d["cells"][0]["trials"][0]["threads"][0]["cpu_ns"] = 1.5; },
     "cells[0].trials[0].threads[0].cpu_ns: 1.5 is not a whole number"},
    {"string for a count", [](json& d) { d["cells"][0]["lost_updates"] = "none"; },
     "cells[0].lost_updates: \"none\" is not a whole number"},
    {"negative ticks", [](json& d) { d["cells"][0]["trials"][0]["ticks"] = -1; },
     "cells[0].trials[0].ticks: -1 is negative"},
    {"negative work", [](json& d) {
         d["cells"][0]["trials"][0]["threads"][0]["critical_work_ns"] = -3.0; },
     "cells[0].trials[0].threads[0].critical_work_ns: -3.0 is negative"},
    {"zero ticks_per_ns", [](json& d) { d["calibration"]["ticks_per_ns"] = 0.0; },
     "calibration.ticks_per_ns: is 0, and must be positive"},
    {"zero trials asked", [](json& d) { d["config"]["trials"] = 0; },
     "config.trials: is 0, and must be positive"},
    {"zero threads asked", [](json& d) { d["config"]["threads"][0] = 0; },
     "config.threads[0]: is 0, and must be positive"},
    {"zero duration", [](json& d) { d["config"]["duration_ns"] = 0; },
     "config.duration_ns: is 0, and must be positive"},
    {"missing field", [](json& d) { d["cells"][0].erase("lock"); },
     "cells[0].lock: is missing"},
    {"not an array", [](json& d) { d["cells"][0]["trials"] = 3; },
     "cells[0].trials: is not an array"},
    {"bad cpu", [](json& d) { d["cells"][0]["trials"][0]["threads"][0]["cpu"] = -7; },
     "cells[0].trials[0].threads[0].cpu: -7 is not a CPU"},
    // Per-thread consistency.
    {"end before start", [](json& d) {
         d["cells"][0]["trials"][0]["threads"][1]["end_ns"] = 5; },
     "cells[0].trials[0].threads[1].end_ns: 5 is before start_ns 10"},
    {"more overlaps than acquires", [](json& d) {
         d["cells"][0]["trials"][0]["threads"][0]["overlaps"] = 5000; },
     "cells[0].trials[0].threads[0].overlaps: 5000 is more than the thread's 1000 acquires"},
    {"running longer than enabled", [](json& d) {
         d["cells"][0]["trials"][0]["threads"][0]["counters"] =
             json::array({{{"event", "cycles"}, {"raw", 1}, {"enabled_ns", 5},
                           {"running_ns", 9}}}); },
     "cells[0].trials[0].threads[0].counters[0].running_ns: 9 is more than enabled_ns 5"},
    {"latency bucket out of range", [](json& d) {
         d["cells"][0]["trials"][0]["threads"][0]["latency_ticks"] =
             {{"sub_bucket_bits", 5}, {"max", 1}, {"buckets", json::array({{99999, 1}})}}; },
     "cells[0].trials[0].threads[0].latency_ticks.buckets[0][0]: bucket 99999 does not exist"},
    // Per-trial consistency.
    {"wall_ns not the threads' window", [](json& d) {
         d["cells"][0]["trials"][0]["wall_ns"] = 5'000'000; },
     "cells[0].trials[0].wall_ns: 5000000 is not the threads' window"},
    {"a thread missing", [](json& d) { d["cells"][0]["trials"][0]["threads"].erase(1); },
     "cells[0].trials[0].threads: 1 thread, but the cell ran 2"},
    {"a thread twice", [](json& d) { d["cells"][0]["trials"][0]["threads"][1]["index"] = 0; },
     "cells[0].trials[0].threads[1].index: 0 is repeated"},
    {"a trial twice", [](json& d) { d["cells"][0]["trials"][1]["trial"] = 0; },
     "cells[0].trials[1].trial: 0 is repeated"},
    // Per-cell consistency.
    {"complete with a trial missing", [](json& d) {
         d["cells"][0]["trials"].erase(1);
         d["cells"][0].erase("summary"); },
     "cells[0].complete: says true with 1 of the 2 trials"},
    {"unknown stop reason", [](json& d) { d["cells"][0]["stop"]["reason"] = "bored"; },
     "cells[0].stop.reason: unknown reason 'bored'"},
    {"stop trials not the cell's", [](json& d) { d["cells"][0]["stop"]["trials"] = 7; },
     "cells[0].stop.trials: 7 trials, but the cell holds 2"},
    {"settled without trials auto", [](json& d) { d["cells"][0]["stop"]["reason"] = "settled"; },
     "cells[0].stop.reason: is 'settled', but config.trials_auto is not set"},
    {"planned with trials auto", [](json& d) { d["config"]["trials_auto"] = {{"max_time_ns", 1000}}; },
     "cells[0].stop.reason: is 'planned', but config.trials_auto is set"},
    {"process out of range", [](json& d) { d["cells"][0]["trials"][0]["process"] = 1; },
     "cells[0].trials[0].process: 1 is out of range (config.processes is 1)"},
    {"trials of a missing process", [](json& d) { d["config"]["processes"] = 2; },
     "cells[0].complete: says true with 2 of the 4 trials"},
    {"zero budget", [](json& d) { d["config"]["trials_auto"] = {{"max_time_ns", 0}}; },
     "config.trials_auto.max_time_ns: is 0"},
    {"cell overlaps not the threads'", [](json& d) { d["cells"][0]["overlaps"] = 3; },
     "cells[0].overlaps: 3, but the verification's and the threads' overlaps add up to 0"},
    {"cell overlaps not the verification's", [](json& d) {
         d["cells"][0]["verification"] = {{"trials", 1}, {"acquires", 900}, {"wall_ns", 1000},
                                          {"overlaps", 2}, {"lost_updates", 0}}; },
     "cells[0].overlaps: 0, but the verification's and the threads' overlaps add up to 2"},
    {"verification of no trial", [](json& d) {
         d["cells"][0]["verification"] = {{"trials", 0}, {"acquires", 900}, {"wall_ns", 1000},
                                          {"overlaps", 0}, {"lost_updates", 0}}; },
     "cells[0].verification.trials: is 0; a cell has 1 to config.processes (1) verification"},
    {"verification overlaps beyond its acquires", [](json& d) {
         d["cells"][0]["overlaps"] = 901;
         d["cells"][0]["verification"] = {{"trials", 1}, {"acquires", 900}, {"wall_ns", 1000},
                                          {"overlaps", 901}, {"lost_updates", 0}}; },
     "cells[0].verification.overlaps: 901 is more than the 900 acquires checked"},
    {"cell lost updates below the verification's", [](json& d) {
         d["cells"][0]["verification"] = {{"trials", 1}, {"acquires", 900}, {"wall_ns", 1000},
                                          {"overlaps", 0}, {"lost_updates", 4}}; },
     "cells[0].lost_updates: 0, fewer than the verification's 4"},
    {"summary acquires not the threads' sum", [](json& d) {
         d["cells"][0]["summary"]["acquires"]["trials"][1] = 7.0; },
     "cells[0].summary.acquires.trials[1]: 7 acquires, but the trial's threads add up to 2001"},
    {"summary trial count", [](json& d) { d["cells"][0]["summary"]["trials"] = 5; },
     "cells[0].summary.trials: 5 trials, but the cell holds 2"},
    // The observer-effect check's plain twins.
    {"plain trials without the check", [](json& d) {
         d["cells"][0]["plain_trials"] = d["cells"][0]["trials"]; },
     "cells[0].plain_trials: is present, but config.perturbation_check is not set"},
    {"a plain trial twice", [](json& d) {
         d["config"]["perturbation_check"] = true;
         d["cells"][0]["plain_trials"] = d["cells"][0]["trials"];
         d["cells"][0]["plain_trials"][1]["trial"] = 0; },
     "cells[0].plain_trials[1].trial: 0 is repeated (plain trials are 0 to 1, each once)"},
    {"a damaged plain trial", [](json& d) {
         d["config"]["perturbation_check"] = true;
         d["cells"][0]["plain_trials"] = d["cells"][0]["trials"];
         d["cells"][0]["plain_trials"][0]["wall_ns"] = 0; },
     "cells[0].plain_trials[0].wall_ns: is 0, and must be positive"},
};
// clang-format on

TEST(ResultValidation, EachDamageIsRefusedByItsPathInOneLine) {
    for (const auto& d : kDamages) {
        json doc = valid_doc();
        d.damage(doc);
        const std::string e = refusal(doc);
        EXPECT_NE(e.find(d.refused), std::string::npos) << d.name << ": " << e;
        EXPECT_EQ(e.find('\n'), std::string::npos) << d.name << ": " << e;
        EXPECT_NE(e.find("damaged or was edited"), std::string::npos) << d.name << ": " << e;
    }
}

TEST(ResultValidation, AnInterruptedRunMayHaveCellsWithoutTrials) {
    json doc = valid_doc();
    doc["interrupted"] = true;
    doc["cells"][0]["trials"] = json::array();
    doc["cells"][0]["complete"] = false;
    doc["cells"][0]["stop"] = {{"reason", "interrupted"}, {"trials", 0}};
    doc["cells"][0].erase("summary");
    EXPECT_EQ(refusal(doc), "");
    doc["cells"][0].erase("stop");  // files from before `stop`: derived from `complete`
    EXPECT_EQ(refusal(doc), "");
}

TEST(ResultValidation, ReadResultNamesTheFile) {
    json doc = valid_doc();
    doc["cells"][0]["trials"][0]["threads"][1]["acquires"] = -5;
    const auto path = std::filesystem::temp_directory_path() /
                      ("lockprof-validation-" + std::to_string(getpid()) + ".json");
    std::ofstream(path) << doc.dump(1);
    try {
        results::read_result(path);
        ADD_FAILURE() << "a negative count was read";
    } catch (const UsageError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("'" + path.string() + "': cells[0]", 0), 0u)
            << e.what();
        EXPECT_EQ(e.exit_code(), 2);
    }
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace lockprof
