// "Head vs patch": compares the throughput of two runs cell by cell (lock, threads) and says
// whether each difference is real, with a stated method, and which provenance differences make
// the comparison itself doubtful (the 2020 thread's assert-enabled build).
//
// Every cell goes through the one engine (verdict.hpp): ratio of geometric means NEW / BASE of
// acquires/s over trials, Welch t interval on the logs, Bonferroni over the cells of one
// comparison, verdict against the equivalence band. Differences in build type, assertions,
// lockprof version, kernel, pinning, CPU frequency governor or boost, or VM status become the
// comparison's `caveat`, which every verdict line carries: such a comparison is not
// like-for-like, whatever the interval says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockprof/analysis/stats.hpp"
#include "lockprof/analysis/verdict.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::analysis {

struct CellComparison {
    std::string lock;
    unsigned threads = 0;
    Spread base;    // acquires/s per trial
    Spread other;   // acquires/s per trial
    Effect effect;  // other vs base (over processes when RunComparison::over_processes)
    // --read-fraction > 0 in a run: its acquires/s taken shared and exclusive (summary.hpp),
    // absent for a run without reads.
    std::optional<Spread> base_reads, base_writes, other_reads, other_writes;
};

// A provenance or workload difference that can make a throughput difference meaningless.
struct ProvenanceWarning {
    std::string field;  // "assertions", "cpu_model", "compiler_flags", "workload"...
    std::string base_value;
    std::string other_value;
    std::string message;  // one line for people, what differs and why it matters
};

struct MissingCell {
    std::string lock;
    unsigned threads = 0;
};

struct RunComparison {
    // Non-empty when the runs come from different machines: the provenance fields that say so
    // (hostname, arch, cpu_model, midr, lse, logical_cpus; analysis/hosts.hpp).
    std::vector<std::string> host_differences;
    std::vector<ProvenanceWarning> warnings;
    // What makes the runs not like-for-like, "" when nothing does: "the builds differ
    // (assertions on in base only); the kernels differ". Every verdict line carries it.
    std::string caveat;
    VerdictOptions options;
    std::size_t family = 0;  // cells compared, the Bonferroni family
    // Both runs made with --processes 3 or more: each cell's effect compares one value per
    // process (its trials' geometric mean), as the runs' own verdicts did; else every trial.
    bool over_processes = false;
    std::string resampling;             // which of the two, for the method line
    std::vector<CellComparison> cells;  // in BASE's cell order
    std::vector<MissingCell> only_in_base;
    std::vector<MissingCell> only_in_other;
};

// Differences between the two runs' provenance and workload that invalidate or weaken the
// comparison; also "assertions on in both" (numbers from such builds are not representative).
std::vector<ProvenanceWarning> provenance_warnings(const workload::RunResult& base,
                                                   const workload::RunResult& other);

// The differences that make two runs not like-for-like, as one phrase ("" when none): the
// machines (another host or CPU), build type, assertions (also on in both), lockprof version,
// kernel, pinning, CPU frequency governor or boost, VM status.
std::string like_for_like_caveat(const workload::RunResult& base, const workload::RunResult& other);

// "faster", or "faster, but not like-for-like: the builds differ (assertions on in new only)".
std::string verdict_line(const Effect& effect, const std::string& caveat);

RunComparison compare_runs(const workload::RunResult& base, const workload::RunResult& other,
                           const VerdictOptions& options = {});

}  // namespace lockprof::analysis
