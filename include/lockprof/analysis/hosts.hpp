// Many machines, one answer: result files from different hosts read side by side, as the 2020
// thread compared a Kunpeng 920, two M1s, Graviton2 and x86 boxes by pasting tables into mail.
// For each lock pair every file has, each host's own verdict per thread count (the one engine,
// verdict.hpp, on that host's trials; Bonferroni over that host's comparisons), and one line on
// where the conclusion holds and where it does not; the hosts' provenance side by side, with
// the differences that can explain a result marked; and what each host's PMU counted. Analysis
// only: report/hosts_report renders it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "lockprof/analysis/summary.hpp"
#include "lockprof/analysis/verdict.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::analysis {

// One result file, named by its host.
struct HostInput {
    std::string name;  // "" to name it from its provenance (host_name())
    std::string file;
    workload::RunResult run;
};

struct Host {
    std::string name;   // unique within the report
    std::string label;  // name with what sets its atomics apart: "m1-mini (aarch64, LSE)"
    std::string file;
    const workload::RunResult* run = nullptr;
    std::vector<CellSummary> summaries;
    std::size_t family = 0;  // this host's comparisons, its Bonferroni family
};

// One host's answer to "other vs base" at one thread count; no effect where the host lacks one
// of the two cells there.
struct HostPairCell {
    unsigned threads = 0;
    std::optional<Effect> effect;
};

struct HostPairRow {
    std::size_t host = 0;             // index into HostsComparison::hosts
    std::vector<HostPairCell> cells;  // one per HostsComparison::threads
    std::string verdicts;             // "faster", "faster at 2 and 4 threads, equivalent at 1"
};

// `other` against `base` on every host.
struct HostPair {
    std::string base, other;
    std::vector<HostPairRow> rows;
    // The verdict most cells decided ("faster"), "" when no host decided any; and one line:
    // "cas vs tas: faster on x86-vm, qemu-cortex-a72 (aarch64, no LSE); equivalent on
    // qemu-max (aarch64, LSE); unsettled on guest-n1".
    std::string conclusion;
    std::string summary;
};

// One provenance field across the hosts.
struct HostField {
    std::string field;  // "cpu_model"
    std::string label;  // "CPU"
    std::vector<std::string> values;
    bool differs = false;
    // A difference (or, for assertions, a value) that can explain a result by itself, and why:
    // assertions on, build type, compiler flags, LSE, lockprof version, VM.
    bool explains = false;
    std::string why;
};

// What one host's PMU counted for the pairs' locks at its largest thread count, or why not.
struct HostEvidence {
    std::size_t host = 0;
    unsigned threads = 0;
    // "tas: stxr_fail 0.83/acquire, cycles 312/acquire"; empty when nothing was counted.
    std::vector<std::string> lines;
    // What the run could not count and why (its "not counted" note), or, when it counted
    // nothing, why not; "" when everything asked for was counted.
    std::string not_counted;
};

struct HostsComparison {
    std::vector<Host> hosts;
    std::vector<unsigned> threads;    // every host's thread counts, ascending
    std::vector<std::string> locks;   // in every file, in the first file's order
    std::vector<HostPair> pairs;      // each lock against the first of `locks`
    std::vector<std::string> absent;  // locks only some files have: "ttas: not in b.json"
    std::vector<HostField> provenance;
    std::vector<std::string> warnings;  // one line each, for the top: assertions, versions
    std::vector<HostEvidence> evidence;
    VerdictOptions options;
};

// The hostname of a result ("unnamed host" when it has none). compare_hosts adds the CPU, or
// the architecture and LSE, where files share a hostname (qemu-user runs on one machine).
std::string host_name(const workload::Provenance& provenance);

// The hosts side by side. Names given ("name=FILE") are kept; the rest come from provenance and
// are made unique ("#2"). UsageError when fewer than two files are given.
HostsComparison compare_hosts(std::vector<HostInput>& inputs, const VerdictOptions& options = {});

// Whether two results come from different machines (hostname, architecture, CPU model, MIDR,
// LSE or CPU count differ), and which of those fields differ.
std::vector<std::string> host_differences(const workload::Provenance& a,
                                          const workload::Provenance& b);

}  // namespace lockprof::analysis
