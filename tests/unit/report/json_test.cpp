#include "lockprof/report/json.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "lockprof/common/error.hpp"

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
    const auto back = report::result_from_json(doc);
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
    workload::SamplingInfo info;
    info.sampler = "perf";
    info.event = info.requested_event = "cycles";
    info.precise_ip = 2;                    // granted by the arm64 kernel ...
    info.skid = workload::Skid::arbitrary;  // ... and meaningless there
    info.precise_note = "note";
    run.sampling = info;
    auto doc = report::to_json(run, {});
    EXPECT_EQ(doc["sampling"]["precise_ip"], 2);
    EXPECT_EQ(doc["sampling"]["skid"], "arbitrary");
    auto back = report::result_from_json(doc);
    ASSERT_TRUE(back.sampling);
    EXPECT_EQ(back.sampling->precise_ip, 2);
    EXPECT_EQ(back.sampling->skid, workload::Skid::arbitrary);
    EXPECT_EQ(report::to_json(back, {})["sampling"], doc["sampling"]);
    for (auto skid : {workload::Skid::constant, workload::Skid::zero}) {
        doc["sampling"]["skid"] = std::string(workload::skid_name(skid));
        EXPECT_EQ(report::result_from_json(doc).sampling->skid, skid);
    }
    // Files from before the field: derived from precise_ip on the architecture that wrote them.
    doc["sampling"].erase("skid");
    EXPECT_EQ(report::result_from_json(doc).sampling->skid, workload::Skid::arbitrary);
    doc["provenance"]["arch"] = "x86_64";
    EXPECT_EQ(report::result_from_json(doc).sampling->skid, workload::Skid::zero);
    doc["sampling"]["precise_ip"] = 1;
    EXPECT_EQ(report::result_from_json(doc).sampling->skid, workload::Skid::constant);
    doc["sampling"]["skid"] = "none at all";
    EXPECT_THROW(report::result_from_json(doc), UsageError);
}

TEST(ResultJson, RefusesOtherSchemasAndVersions) {
    auto doc = report::to_json(sample_run(), {});
    doc["schema_version"] = 999;
    EXPECT_THROW(report::result_from_json(doc), UsageError);
    EXPECT_THROW(report::result_from_json(nlohmann::json{{"hello", 1}}), UsageError);
}

TEST(ResultJson, ReadResultExplainsTruncation) {
    const auto path = std::filesystem::temp_directory_path() / "lockprof-truncated.json";
    std::ofstream(path) << report::to_json(sample_run(), {}).dump().substr(0, 100);
    try {
        report::read_result(path);
        FAIL();
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
}
