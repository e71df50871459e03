#include "lockprof/report/json.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"
#include "lockprof/results/result_reader.hpp"

using namespace lockprof;

namespace {
workload::RunResult sample_run() {
    workload::RunResult run;
    run.provenance.lockprof_version = "0.1.0";
    run.provenance.cpu_model = "Test CPU";
    run.provenance.assertions = true;
    run.spec.locks = {"tas", "cas"};
    run.spec.threads = {2};
    run.spec.duration_ns = 1000;
    run.spec.delay = arch::Delay::pause;
    run.calibration = {1.5, 2.5};
    run.notes = {"a note"};
    workload::CellResult cell;
    cell.lock = cell.algorithm = "tas";
    cell.delay = arch::Delay::pause;
    cell.threads = 2;
    workload::TrialResult trial;
    trial.wall_ns = 1000;
    trial.ticks = 2500;
    for (unsigned i = 0; i < 2; ++i) {
        workload::ThreadResult t;
        t.index = i;
        t.acquires = 100 + i;
        t.rmw_attempts = 300;
        t.cpu_ns = 900;
        t.end_ns = 1000;  // the trial's window, wall_ns
        t.latency.record(40);
        t.latency.record(4000);
        t.counters.push_back({"task_clock", 900, 1000, 500});
        trial.threads.push_back(t);
    }
    cell.trials.push_back(trial);
    run.cells.push_back(cell);
    return run;
}
}  // namespace

TEST(ResultJson, RoundTripKeepsRawData) {
    const auto run = sample_run();
    const auto doc = report::to_json(run, analysis::summarize(run));
    EXPECT_EQ(doc["schema"], "lockprof.result");
    EXPECT_EQ(doc["schema_version"], report::kSchemaVersion);
    EXPECT_TRUE(doc["cells"][0].contains("summary"));
    const auto back = results::result_from_json(doc);
    ASSERT_EQ(back.cells.size(), 1u);
    const auto& t = back.cells[0].trials[0].threads[1];
    EXPECT_EQ(t.acquires, 101u);
    EXPECT_EQ(t.latency.total(), 2u);
    EXPECT_EQ(t.latency.max(), 4000u);
    ASSERT_EQ(t.counters.size(), 1u);
    EXPECT_EQ(t.counters[0].running_ns, 500u);
    EXPECT_EQ(back.spec.delay, arch::Delay::pause);
    EXPECT_TRUE(back.provenance.assertions);
    EXPECT_EQ(back.calibration.ticks_per_ns, 2.5);
    // Same summaries from the round-tripped data.
    EXPECT_EQ(report::to_json(back, analysis::summarize(back))["cells"], doc["cells"]);
}

TEST(ResultJson, SamplingKeepsTheGrantedPreciseIpAndItsSkid) {
    auto run = sample_run();
    run.provenance.arch = "aarch64";
    measure::SamplingInfo info;
    info.sampler = "perf";
    info.event = info.requested_event = "cycles";
    info.precise_ip = 2;                   // granted by the arm64 kernel ...
    info.skid = measure::Skid::arbitrary;  // ... and meaningless there
    info.precise_note = "note";
    run.sampling = info;
    auto doc = report::to_json(run, {});
    EXPECT_EQ(doc["sampling"]["precise_ip"], 2);
    EXPECT_EQ(doc["sampling"]["skid"], "arbitrary");
    auto back = results::result_from_json(doc);
    ASSERT_TRUE(back.sampling);
    EXPECT_EQ(back.sampling->precise_ip, 2);
    EXPECT_EQ(back.sampling->skid, measure::Skid::arbitrary);
    EXPECT_EQ(report::to_json(back, {})["sampling"], doc["sampling"]);
    for (auto skid : {measure::Skid::constant, measure::Skid::zero}) {
        doc["sampling"]["skid"] = std::string(measure::skid_name(skid));
        EXPECT_EQ(results::result_from_json(doc).sampling->skid, skid);
    }
    // Files from before the field: derived from precise_ip on the architecture that wrote them.
    doc["sampling"].erase("skid");
    EXPECT_EQ(results::result_from_json(doc).sampling->skid, measure::Skid::arbitrary);
    doc["provenance"]["arch"] = "x86_64";
    EXPECT_EQ(results::result_from_json(doc).sampling->skid, measure::Skid::zero);
    doc["sampling"]["precise_ip"] = 1;
    EXPECT_EQ(results::result_from_json(doc).sampling->skid, measure::Skid::constant);
    doc["sampling"]["skid"] = "none at all";
    EXPECT_THROW(results::result_from_json(doc), UsageError);
}

TEST(ResultJson, SamplingKeepsHowCallStacksWereTaken) {
    auto run = sample_run();
    measure::SamplingInfo info;
    info.sampler = "perf";
    info.event = info.requested_event = "cpu-clock";
    info.call_graph = "dwarf";
    info.stack_size = 4096;
    info.unwound = 120;
    info.unwound_without_callers = 3;
    info.unwind_seconds = 0.25;
    run.sampling = info;
    auto doc = report::to_json(run, {});
    EXPECT_EQ(doc["sampling"]["call_graph"], "dwarf");
    EXPECT_EQ(doc["sampling"]["stack_size"], 4096);
    auto back = results::result_from_json(doc);
    ASSERT_TRUE(back.sampling);
    EXPECT_EQ(back.sampling->call_graph, "dwarf");
    EXPECT_EQ(back.sampling->stack_size, 4096u);
    EXPECT_EQ(back.sampling->unwound, 120u);
    EXPECT_EQ(back.sampling->unwound_without_callers, 3u);
    EXPECT_EQ(report::to_json(back, {})["sampling"], doc["sampling"]);
    // Files from before --call-graph: frame pointers.
    for (const char* key : {"call_graph", "stack_size", "call_graph_note", "unwound",
                            "unwound_without_callers", "unwind_s"})
        doc["sampling"].erase(key);
    EXPECT_EQ(results::result_from_json(doc).sampling->call_graph, "fp");
    doc["sampling"]["call_graph"] = "lbr";
    doc["sampling"]["stack_size"] = 0;
    EXPECT_THROW(results::result_from_json(doc), UsageError);
}

TEST(ResultJson, RefusesOtherSchemasAndVersions) {
    auto doc = report::to_json(sample_run(), {});
    doc["schema_version"] = 999;
    EXPECT_THROW(results::result_from_json(doc), UsageError);
    EXPECT_THROW(results::result_from_json(nlohmann::json{{"hello", 1}}), UsageError);
}

TEST(ResultJson, ReadResultExplainsTruncation) {
    const auto path = std::filesystem::temp_directory_path() / "lockprof-truncated.json";
    std::ofstream(path) << report::to_json(sample_run(), {}).dump().substr(0, 100);
    try {
        results::read_result(path);
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
}

// Found by fuzz_result_json: a number beyond a double's range ("1e999") is valid JSON that
// nlohmann's parser refuses with out_of_range, not parse_error, so it escaped read_result as
// "lockprof: internal error: [json.exception.out_of_range.406] ...". Now a UsageError naming
// the file.
TEST(ResultJson, NumberBeyondADoubleIsAUsageErrorNamingTheFile) {
    std::string text = report::to_json(sample_run(), {}).dump();
    const std::string key = "\"ticks_per_ns\":";
    const auto at = text.find(key);
    ASSERT_NE(at, std::string::npos);
    text.insert(at + key.size(), "1e999,\"x\":");
    try {
        results::result_from_text(text, "huge.json");
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("'huge.json'"), std::string::npos) << e.what();
    }
}

// Found by fuzz_result_json under UBSan: a real number where the schema has a whole one
// ("acquires": 1e30) reached nlohmann's conversion to an integer, a cast that is undefined
// behaviour beyond the integer's range (9.4e33 is outside the range of unsigned long). Such a
// number is refused with its JSON path; real numbers stay where the schema has them.
TEST(ResultJson, RealNumberWhereTheSchemaHasAWholeOneIsRefusedWithItsPath) {
    auto doc = report::to_json(sample_run(), {});
    doc["cells"][0]["trials"][0]["threads"][0]["acquires"] = 1e30;
    try {
        results::result_from_json(doc);
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "cells[0].trials[0].threads[0].acquires: 1e+30 is not a whole number"),
                  std::string::npos)
            << e.what();
    }
    doc = report::to_json(sample_run(), {});
    doc["config"]["threads"][0] = 2.5;
    EXPECT_THROW(results::result_from_json(doc), UsageError);
    doc = report::to_json(sample_run(), {});
    doc["calibration"]["ticks_per_ns"] = 3e40;
    doc["cells"][0]["trials"][0]["threads"][0]["critical_work_ns"] = 12.5;
    EXPECT_NO_THROW(results::result_from_json(doc));
}

namespace {

// A result in which every field holds something other than its default, so a field the writer
// or the reader forgets shows up as a difference.
workload::RunResult every_field_set() {
    workload::RunResult run;
    run.interrupted = true;
    auto& p = run.provenance;
    p.lockprof_version = "9.9.9";
    p.git_revision = "abc1234";
    p.command_line = "lockprof --lock=tas";
    p.timestamp_utc = "2026-12-01T00:00:00Z";
    p.hostname = "host";
    p.arch = "aarch64";
    p.cpu_model = "Neoverse N1";
    p.cpu_vendor = "ARM";
    p.midr = "implementer 0x41 part 0xd0c variant 0x3 revision 0x1";
    p.lse = p.spe = p.assertions = true;
    p.logical_cpus = 64;
    p.kernel = "Linux 6.1";
    p.perf_event_paranoid = 1;
    p.vm_hint = "kvm";
    p.compiler = "GNU 12";
    p.compiler_flags = "-O2";
    p.build_type = "RelWithDebInfo";
    p.cpufreq_governor = "performance";
    p.cpu_boost = "off";
    auto& s = run.spec;
    s.locks = {"tas", "cas@lse"};
    s.threads = {1, 4};
    s.duration_ns = 5'000'000;
    s.acquires_per_thread = 777;
    s.work.critical_ns = 11;
    s.work.parallel_instructions = 44;  // --parallel-ins: parallel_ns stays 0
    s.work.shared_lines = 3;
    s.work.data = workload::DataPlacement::same_line;
    s.work.lock_page = workload::LockPage::huge;
    s.work.read_fraction = 0.25;
    s.delay = arch::Delay::isb;
    s.pin.mode = workload::PinMode::list;
    s.pin.cpus = {2, 5};
    s.pin.cpu_order_file = "order.txt";
    s.sched = workload::SchedPolicy::fifo;
    s.warmup_ns = 33;
    s.trials = 4;
    s.seed = 44;
    s.latency = true;
    s.watchdog_ns = 555'000'000;
    run.calibration = {1.25, 0.5};
    run.notes = {"one", "two"};
    measure::SamplingInfo info;
    info.sampler = "perf";
    info.sampler_reason = "why";
    info.requested_event = "cycles";
    info.event = "cpu-clock";
    info.event_note = "fallback";
    info.period = 1000;
    info.frequency = 0;
    info.precise_ip = 1;
    info.skid = measure::Skid::constant;
    info.precise_note = "note";
    info.modules.push_back({"/bin/x", 0x1000, 0x2000, 0x10, "r-xp", "beef"});
    run.sampling = info;
    workload::CellResult cell;
    cell.lock = "cas@lse";
    cell.algorithm = "cas";
    cell.flavour = "lse";
    cell.delay = arch::Delay::isb;
    cell.threads = 2;
    cell.complete = false;
    cell.overlaps = 6 + 5;  // the threads' and the verification's
    cell.lost_updates = 7;
    cell.verification = workload::Verification{1, 40'000, 200'000'000, 5, 2};
    workload::TrialResult trial;
    trial.trial = 3;
    trial.wall_ns = 1'000'000;
    trial.ticks = 2'000'000;
    trial.lock_page = workload::LockPageUse{2u << 20, 0x1a4e00000};
    trial.steal = workload::TrialSteal{{4, 5}, 20'000'000, 1'200'000, 10'000'000};
    for (unsigned i = 0; i < 2; ++i) {
        workload::ThreadResult t;
        t.index = i;
        t.cpu = static_cast<int>(5 - i);
        t.acquires = 1000 + i;
        t.overlaps = 3;
        t.read_acquires = 250 + i;
        t.mix_seed = 0xABCDEF01u + i;
        t.rmw_attempts = 2000;
        t.spin_iterations = 3000;
        t.sleeps = 4;
        t.burn_iterations_per_ns = 2.5;
        t.critical_iterations = 28;
        t.parallel_iterations = 55;
        t.critical_work_ns = 11.5;
        t.parallel_work_ns = 22.5;
        t.cpu_ns = 900'000;
        t.start_ns = 10 + i;
        t.end_ns = 1'000'010 - i;  // the window, first start to last end, is wall_ns
        t.latency.record(7);
        t.latency.record(70'000);
        t.read_latency.record(7);
        t.counters.push_back({"cycles", 123, 1000, 900});
        t.samples.push_back({0x1234, 99, 555, 1000, {0x10, 0x20}, 98});
        t.samples_lost = 2;
        t.sampled = true;
        trial.threads.push_back(t);
    }
    cell.trials.push_back(trial);
    run.cells.push_back(cell);
    return run;
}

}  // namespace

// to_json and result_from_json are each other's inverse: write, read, write again gives the
// same document, and the fields a reader acts on (compare's pin warning, sample pids) survive.
TEST(ResultJson, EveryFieldSurvivesARoundTrip) {
    const auto run = every_field_set();
    const auto doc = report::to_json(run, analysis::summarize(run));
    const auto back = results::result_from_json(doc);
    const auto again = report::to_json(back, analysis::summarize(back));
    EXPECT_EQ(again.dump(2), doc.dump(2));
    EXPECT_EQ(back.spec.pin.mode, workload::PinMode::list);
    EXPECT_EQ(back.spec.pin.cpus, (std::vector<int>{2, 5}));
    EXPECT_EQ(back.spec.pin.cpu_order_file, "order.txt");
    EXPECT_EQ(back.spec.sched, workload::SchedPolicy::fifo);
    ASSERT_EQ(back.cells.at(0).trials.at(0).threads.at(1).samples.size(), 1u);
    EXPECT_EQ(back.cells[0].trials[0].threads[1].samples[0].pid, 98u);
    // --read-fraction: the share asked for, each thread's reads, mix seed and read latency,
    // and the cell's read/write split derived from them.
    EXPECT_EQ(back.spec.work.read_fraction, 0.25);
    EXPECT_EQ(back.cells[0].trials[0].threads[1].read_acquires, 251u);
    EXPECT_EQ(back.cells[0].trials[0].threads[1].mix_seed, 0xABCDEF02u);
    EXPECT_EQ(back.cells[0].trials[0].threads[1].read_latency.total(), 1u);
    ASSERT_TRUE(doc["cells"][0]["summary"].contains("read_acquires"));
    EXPECT_EQ(doc["cells"][0]["summary"]["read_acquires"]["median"], 501.0);
    EXPECT_TRUE(doc["cells"][0]["summary"].contains("write_latency_ns"));
    EXPECT_EQ(doc["cells"][0]["summary"]["write_latency_ns"]["samples"], 2u);
    ASSERT_TRUE(back.cells[0].verification);
    EXPECT_EQ(back.cells[0].verification->acquires, 40'000u);
    EXPECT_EQ(back.cells[0].verification->lost_updates, 2u);
    // Files written before verification trials: none, and the threads' overlaps alone.
    auto before = doc;
    before["cells"][0].erase("verification");
    before["cells"][0]["overlaps"] = 6;
    EXPECT_FALSE(results::result_from_json(before).cells[0].verification);
    EXPECT_EQ(back.provenance.cpufreq_governor, "performance");
    EXPECT_EQ(back.provenance.cpu_boost, "off");
    // Files written before the frequency fields existed read as "unknown".
    auto old = doc;
    old["provenance"].erase("cpufreq_governor");
    old["provenance"].erase("cpu_boost");
    EXPECT_EQ(results::result_from_json(old).provenance.cpu_boost, "");
    // Files written before --sched and --cpu-order: SCHED_OTHER, no order file.
    old["config"].erase("sched");
    old["config"]["pin"].erase("cpu_order_file");
    EXPECT_EQ(results::result_from_json(old).spec.sched, workload::SchedPolicy::other);
    EXPECT_EQ(results::result_from_json(old).spec.pin.cpu_order_file, "");
    auto bad_sched = doc;
    bad_sched["config"]["sched"] = "batch";
    EXPECT_THROW(results::result_from_json(bad_sched), UsageError);
    // Every pin mode by name.
    for (auto mode : {workload::PinMode::none, workload::PinMode::compact,
                      workload::PinMode::scatter, workload::PinMode::list}) {
        auto d = doc;
        d["config"]["pin"]["mode"] = workload::pin_mode_name(mode);
        EXPECT_EQ(results::result_from_json(d).spec.pin.mode, mode);
    }
    auto bad = doc;
    bad["config"]["pin"]["mode"] = "everywhere";
    EXPECT_THROW(results::result_from_json(bad), UsageError);
}

// --critical-ins / --parallel-ins and --lock-page: written, read back, absent in older files,
// and what a reader refuses (both units at once, a trial's page without huge placement, a
// physical address of 0: null is how "not recorded" is written).
TEST(ResultJson, InstructionWorkAndLockPageSurviveARoundTrip) {
    const auto run = every_field_set();
    const auto doc = report::to_json(run, analysis::summarize(run));
    EXPECT_TRUE(doc["config"]["critical_instructions"].is_null());
    EXPECT_EQ(doc["config"]["parallel_instructions"], 44);
    EXPECT_EQ(doc["config"]["lock_page"], "huge");
    EXPECT_EQ(doc["cells"][0]["trials"][0]["lock_page"]["page_size"], 2u << 20);
    EXPECT_EQ(doc["cells"][0]["trials"][0]["lock_page"]["physical_address"], 0x1a4e00000u);
    const auto back = results::result_from_json(doc);
    EXPECT_FALSE(back.spec.work.critical_instructions.has_value());
    EXPECT_EQ(back.spec.work.parallel_instructions, 44u);
    EXPECT_EQ(back.spec.work.lock_page, workload::LockPage::huge);
    ASSERT_TRUE(back.cells[0].trials[0].lock_page.has_value());
    EXPECT_EQ(back.cells[0].trials[0].lock_page->physical_address, 0x1a4e00000u);

    auto unknown = doc;  // not root: the address is null, and stays unknown
    unknown["cells"][0]["trials"][0]["lock_page"]["physical_address"] = nullptr;
    EXPECT_FALSE(results::result_from_json(unknown)
                     .cells[0]
                     .trials[0]
                     .lock_page->physical_address.has_value());

    auto old = doc;  // written before either option: ns and the heap
    old["config"].erase("critical_instructions");
    old["config"].erase("parallel_instructions");
    old["config"].erase("lock_page");
    old["cells"][0]["trials"][0].erase("lock_page");
    const auto old_run = results::result_from_json(old);
    EXPECT_FALSE(old_run.spec.work.parallel_instructions.has_value());
    EXPECT_EQ(old_run.spec.work.lock_page, workload::LockPage::normal);

    const auto refused = [](nlohmann::json d, const std::string& path) {
        try {
            results::result_from_json(d);
            ADD_FAILURE() << "accepted: " << path;
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        }
    };
    auto both = doc;
    both["config"]["critical_instructions"] = 100;  // critical_ns is 11
    refused(both, "config.critical_instructions: is set, and so is critical_ns");
    auto zero = doc;
    zero["cells"][0]["trials"][0]["lock_page"]["physical_address"] = 0;
    refused(zero, "cells[0].trials[0].lock_page.physical_address: is 0");
    auto missing = doc;
    missing["cells"][0]["trials"][0].erase("lock_page");
    refused(missing, "cells[0].trials[0].lock_page: is missing");
    auto stray = old;
    stray["cells"][0]["trials"][0]["lock_page"] = doc["cells"][0]["trials"][0]["lock_page"];
    refused(stray, "cells[0].trials[0].lock_page: is set, but config.lock_page is not huge");
    auto page = doc;
    page["config"]["lock_page"] = "giant";
    refused(page, "config.lock_page: unknown lock page 'giant'");
}

// A trial's steal: written with the CPUs it covers, read back; null (not measured) and absent
// (files written before it) both read as unknown, never 0; what a reader refuses.
TEST(ResultJson, StealSurvivesARoundTripAndIsUnknownWhereNotMeasured) {
    const auto run = every_field_set();
    const auto doc = report::to_json(run, analysis::summarize(run));
    const auto& written = doc["cells"][0]["trials"][0]["steal"];
    EXPECT_EQ(written["cpus"], nlohmann::json::array({4, 5}));
    EXPECT_EQ(written["steal_ns"], 20'000'000u);
    EXPECT_EQ(written["window_ns"], 1'200'000u);
    EXPECT_EQ(written["tick_ns"], 10'000'000u);
    const auto back = results::result_from_json(doc);
    ASSERT_TRUE(back.cells[0].trials[0].steal.has_value());
    EXPECT_EQ(back.cells[0].trials[0].steal->cpus, (std::vector<int>{4, 5}));
    EXPECT_EQ(back.cells[0].trials[0].steal->steal_ns, 20'000'000u);

    auto unmeasured = run;
    unmeasured.cells[0].trials[0].steal.reset();
    const auto null_doc = report::to_json(unmeasured, {});
    EXPECT_TRUE(null_doc["cells"][0]["trials"][0]["steal"].is_null());
    EXPECT_FALSE(results::result_from_json(null_doc).cells[0].trials[0].steal.has_value());
    auto old = doc;
    old["cells"][0]["trials"][0].erase("steal");
    EXPECT_FALSE(results::result_from_json(old).cells[0].trials[0].steal.has_value());

    const auto refused = [&doc](const char* key, nlohmann::json value, const std::string& why) {
        auto d = doc;
        d["cells"][0]["trials"][0]["steal"][key] = std::move(value);
        try {
            results::result_from_json(d);
            ADD_FAILURE() << "accepted: " << why;
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    };
    refused("cpus", nlohmann::json::array(), "cells[0].trials[0].steal.cpus: is empty");
    refused("cpus", {4, 4}, "cells[0].trials[0].steal.cpus[1]: 4 is repeated");
    refused("cpus", {-1}, "cells[0].trials[0].steal.cpus[0]: -1 is not a CPU number");
    refused("steal_ns", -5, "cells[0].trials[0].steal.steal_ns: -5 is negative");
    refused("window_ns", 0, "cells[0].trials[0].steal.window_ns: is 0");
    refused("tick_ns", 0, "cells[0].trials[0].steal.tick_ns: is 0");
}
