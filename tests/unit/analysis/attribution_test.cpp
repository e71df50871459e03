// The explanation's evidence from a sampled run: whether samples are read as naming the
// instruction that caused the event (zero skid) follows what precise_ip means on the CPU that
// ran, not the granted level alone.
#include "lockprof/analysis/attribution.hpp"

#include <gtest/gtest.h>

#include "lockprof/report/json.hpp"

namespace lockprof::analysis {
namespace {

workload::RunResult sampled_run(const std::string& arch, int precise_ip) {
    workload::RunResult run;
    run.provenance.arch = arch;
    run.spec.locks = {"tas"};
    run.spec.threads = {2};
    run.calibration.ticks_per_ns = 1.0;
    workload::CellResult cell;
    cell.lock = cell.algorithm = "tas";
    cell.threads = 2;
    workload::TrialResult trial;
    trial.wall_ns = 1000;  // a result file's figures are consistent: the threads' window
    for (unsigned i = 0; i < 2; ++i) {
        workload::ThreadResult thread;
        thread.index = i;
        thread.acquires = 1000;
        thread.end_ns = 1000;
        thread.sampled = true;
        if (i == 0) thread.samples.push_back({0x1000, 1, 1, 1, {}, 0});
        trial.threads.push_back(thread);
    }
    cell.trials.push_back(trial);
    run.cells.push_back(cell);
    profiling::SamplingInfo info;
    info.sampler = "perf";
    info.event = info.requested_event = "cycles";
    info.frequency = 1000;
    info.precise_ip = precise_ip;
    run.sampling = info;
    return run;
}

// The run as a result file written before "skid" existed (the first arm64 guest runs), read
// back.
workload::RunResult read_back_without_skid(const workload::RunResult& run) {
    auto doc = report::to_json(run, {});
    doc["sampling"].erase("skid");
    return report::result_from_json(doc);
}

bool evidence_is_precise(const workload::RunResult& run) {
    const auto summaries = analysis::summarize(run);
    Attribution attribution;
    attribution.cells.resize(run.cells.size());
    attribution.cells[0].samples = 1;
    const auto evidence = gather_evidence(run, summaries, &attribution);
    EXPECT_EQ(evidence.size(), 1u);
    return !evidence.empty() && evidence[0].precise;
}

TEST(GatherEvidence, Arm64PreciseIpIsNotZeroSkid) {
    // arm64 grants precise_ip 2 on PMUv3 and ignores it: the samples still have skid.
    EXPECT_FALSE(evidence_is_precise(read_back_without_skid(sampled_run("aarch64", 2))));
    // x86 precise_ip 2 is zero skid (PEBS with the IP fix-up, IBS); 1 is constant skid.
    EXPECT_TRUE(evidence_is_precise(read_back_without_skid(sampled_run("x86_64", 2))));
    EXPECT_FALSE(evidence_is_precise(read_back_without_skid(sampled_run("x86_64", 1))));
}

TEST(GatherEvidence, FollowsTheRecordedSkid) {
    auto run = sampled_run("aarch64", 2);
    run.sampling->skid = profiling::Skid::arbitrary;
    EXPECT_FALSE(evidence_is_precise(run));
    run = sampled_run("x86_64", 2);
    run.sampling->skid = profiling::Skid::zero;
    EXPECT_TRUE(evidence_is_precise(run));
    run.sampling->skid = profiling::Skid::constant;
    EXPECT_FALSE(evidence_is_precise(run));
}

}  // namespace
}  // namespace lockprof::analysis
