#include "lockprof/analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockprof/analysis/hosts.hpp"
#include "lockprof/analysis/summary.hpp"
#include "lockprof/workload/lock_page.hpp"

namespace lockprof::analysis {

namespace {

std::string yes_no(bool value) {
    return value ? "yes" : "no";
}

std::string stop_rule(const workload::RunSpec& spec) {
    if (spec.duration_ns) return fmt::format("{} ns per trial", *spec.duration_ns);
    return fmt::format("{} acquires per thread", spec.acquires_per_thread.value_or(0));
}

struct Keyed {
    const CellSummary* summary;
    bool matched = false;
};

// The warnings gathered so far, and the one rule for a field whose values differ.
struct Warnings {
    std::vector<ProvenanceWarning> out;
    void differ(const char* field, const std::string& bv, const std::string& ov, const char* why) {
        if (bv != ov)
            out.push_back(
                {field, bv, ov,
                 fmt::format("{} differs (base: '{}', new: '{}'): {}", field, bv, ov, why)});
    }
};

// The builds and the machines: assertions first, then CPU, compiler, kernel and clocks.
void build_and_machine_warnings(const workload::Provenance& b, const workload::Provenance& o,
                                Warnings& w) {
    // The 2020 thread's mistake comes first: it is the one that fooled people.
    if (b.assertions != o.assertions) {
        const char* which = o.assertions ? "new" : "base";
        w.out.push_back({"assertions", b.assertions ? "on" : "off", o.assertions ? "on" : "off",
                         fmt::format("assertions are ON in the {} build only: assert-enabled "
                                     "numbers are not representative (the 2020 thread's "
                                     "mistake); rebuild it with NDEBUG (CMAKE_BUILD_TYPE=Release "
                                     "or RelWithDebInfo) and run again",
                                     which)});
    } else if (b.assertions) {
        w.out.push_back({"assertions", "on", "on",
                         "assertions are ON in both builds: absolute numbers are not "
                         "representative and the ratio may be too; rebuild with NDEBUG"});
    }
    w.differ("arch", b.arch, o.arch, "different architectures cannot be compared as head vs patch");
    w.differ("cpu_model", b.cpu_model, o.cpu_model,
             "different CPUs; a ratio measures the machines, not the change");
    w.differ("midr", b.midr, o.midr, "different CPU cores (MIDR)");
    if (b.arch == "aarch64" || o.arch == "aarch64")
        w.differ("lse", yes_no(b.lse), yes_no(o.lse),
                 "LSE atomics change how every lock's read-modify-write executes");
    if (b.logical_cpus != o.logical_cpus)
        w.differ("logical_cpus", std::to_string(b.logical_cpus), std::to_string(o.logical_cpus),
                 "a different CPU count changes contention and oversubscription");
    w.differ("compiler", b.compiler, o.compiler, "a different compiler generates different code");
    w.differ("compiler_flags", b.compiler_flags, o.compiler_flags,
             "different flags (-O level, -march) change the generated code");
    w.differ("build_type", b.build_type, o.build_type, "optimisation level differs");
    w.differ("lockprof_version", b.lockprof_version, o.lockprof_version,
             "the measured loop or its accounting may have changed between versions");
    w.differ("kernel", b.kernel, o.kernel, "scheduler and perf_event behaviour may differ");
    w.differ("cpufreq_governor", b.cpufreq_governor.empty() ? "unknown" : b.cpufreq_governor,
             o.cpufreq_governor.empty() ? "unknown" : o.cpufreq_governor,
             "the frequency governor changes clock speed under load; pin it to performance");
    w.differ("cpu_boost", b.cpu_boost.empty() ? "unknown" : b.cpu_boost,
             o.cpu_boost.empty() ? "unknown" : o.cpu_boost,
             "boost (turbo) changes clock speed with load and temperature; disable it for both");
    w.differ("vm_hint", b.vm_hint.empty() ? "none" : b.vm_hint,
             o.vm_hint.empty() ? "none" : o.vm_hint,
             "a VM adds steal time and hides the PMU; compare bare metal with bare metal");
}

// The workloads: what each thread did, where the lock sat, pinning and scheduling.
void workload_warnings(const workload::RunResult& base, const workload::RunResult& other,
                       Warnings& w) {
    const auto& bs = base.spec;
    const auto& os = other.spec;
    const auto workload_differs = [&](const char* field, const std::string& bv,
                                      const std::string& ov) {
        w.differ(field, bv, ov, "the workloads differ, so the locks did different work");
    };
    workload_differs("workload.stop", stop_rule(bs), stop_rule(os));
    workload_differs("workload.critical_ns", std::to_string(bs.work.critical_ns),
                     std::to_string(os.work.critical_ns));
    workload_differs("workload.parallel_ns", std::to_string(bs.work.parallel_ns),
                     std::to_string(os.work.parallel_ns));
    const auto instructions = [](const std::optional<std::uint64_t>& count) {
        return count ? std::to_string(*count) : std::string("none (ns)");
    };
    workload_differs("workload.critical_instructions", instructions(bs.work.critical_instructions),
                     instructions(os.work.critical_instructions));
    workload_differs("workload.parallel_instructions", instructions(bs.work.parallel_instructions),
                     instructions(os.work.parallel_instructions));
    workload_differs("workload.shared_lines", std::to_string(bs.work.shared_lines),
                     std::to_string(os.work.shared_lines));
    workload_differs("workload.data", workload::data_placement_name(bs.work.data),
                     workload::data_placement_name(os.work.data));
    // --lock-page: the heap against a huge page, or two huge pages at different physical
    // addresses (where both runs recorded them): the lock's line is not the same line.
    const auto bp = workload::lock_placement(base), op = workload::lock_placement(other);
    w.differ("workload.lock_page", workload::lock_page_name(bp.page),
             workload::lock_page_name(op.page),
             "the lock sat in different memory (a hugetlb page keeps it on one physical page "
             "from run to run, the heap wherever the allocator puts it), so its cache line, and "
             "the interconnect's home node for it, differ");
    if (bp.page == workload::LockPage::huge && op.page == workload::LockPage::huge &&
        !bp.physical_addresses.empty() && !op.physical_addresses.empty()) {
        const auto addresses = [](const workload::LockPlacement& p) {
            std::vector<std::string> hex;
            for (const auto a : p.physical_addresses) hex.push_back(fmt::format("{:#x}", a));
            return fmt::format("{}", fmt::join(hex, ","));
        };
        w.differ("workload.lock_page.physical_address", addresses(bp), addresses(op),
                 "the locks sat on different physical cache lines, whose home nodes on a mesh "
                 "interconnect (and so the handoff distances) may differ");
    }
    workload_differs("workload.read_fraction", fmt::format("{:g}", bs.work.read_fraction),
                     fmt::format("{:g}", os.work.read_fraction));
    workload_differs("workload.pin", workload::pin_mode_name(bs.pin.mode),
                     workload::pin_mode_name(os.pin.mode));
    const auto cpu_order = [](const workload::PinSpec& pin) {
        return pin.cpu_order_file.empty() ? std::string("none")
                                          : fmt::format("{}", fmt::join(pin.cpus, ","));
    };
    workload_differs("workload.cpu_order", cpu_order(bs.pin), cpu_order(os.pin));
    w.differ("workload.sched", workload::sched_policy_name(bs.sched),
             workload::sched_policy_name(os.sched),
             "under SCHED_FIFO nothing of normal priority preempts a lock holder or a waiter");
    workload_differs("workload.delay",
                     bs.delay ? std::string(arch::delay_name(*bs.delay)) : "default",
                     os.delay ? std::string(arch::delay_name(*os.delay)) : "default");
    w.differ("workload.latency", yes_no(bs.latency), yes_no(os.latency),
             "recording every acquire's latency adds work to the measured loop");
}

}  // namespace

std::vector<ProvenanceWarning> provenance_warnings(const workload::RunResult& base,
                                                   const workload::RunResult& other) {
    Warnings w;
    build_and_machine_warnings(base.provenance, other.provenance, w);
    workload_warnings(base, other, w);
    w.differ("sampling", yes_no(base.sampling.has_value()), yes_no(other.sampling.has_value()),
             "a sampler interrupts the threads it measures");
    if (base.interrupted || other.interrupted)
        w.out.push_back({"interrupted", yes_no(base.interrupted), yes_no(other.interrupted),
                         fmt::format("the {} run was interrupted: only its finished trials are "
                                     "compared",
                                     base.interrupted && other.interrupted ? "base and the new"
                                     : base.interrupted                    ? "base"
                                                                           : "new")});
    return w.out;
}

std::string like_for_like_caveat(const workload::RunResult& base,
                                 const workload::RunResult& other) {
    const auto& b = base.provenance;
    const auto& o = other.provenance;
    std::vector<std::string> build, machine;
    if (b.assertions != o.assertions)
        build.push_back(fmt::format("assertions on in {} only", b.assertions ? "base" : "new"));
    else if (b.assertions)
        build.emplace_back("assertions on in both");
    if (b.build_type != o.build_type)
        build.push_back(fmt::format("build type {} vs {}", b.build_type, o.build_type));
    if (b.lockprof_version != o.lockprof_version)
        build.push_back(fmt::format("lockprof {} vs {}", b.lockprof_version, o.lockprof_version));
    std::vector<std::string> parts;
    if (const auto hosts = host_differences(b, o); !hosts.empty())
        parts.push_back(fmt::format("across hosts ({} differ{})", fmt::join(hosts, ", "),
                                    hosts.size() == 1 ? "s" : ""));
    if (!build.empty())
        parts.push_back(fmt::format("the builds differ ({})", fmt::join(build, ", ")));
    if (b.kernel != o.kernel) machine.emplace_back("kernel");
    if (base.spec.pin.mode != other.spec.pin.mode) machine.emplace_back("pinning");
    if (base.spec.work.lock_page != other.spec.work.lock_page)
        machine.emplace_back("lock placement");
    if (b.cpufreq_governor != o.cpufreq_governor) machine.emplace_back("CPU frequency governor");
    if (b.cpu_boost != o.cpu_boost) machine.emplace_back("CPU boost");
    if (b.vm_hint.empty() != o.vm_hint.empty() || (!b.vm_hint.empty() && b.vm_hint != o.vm_hint))
        machine.emplace_back("VM status");
    if (!machine.empty())
        parts.push_back(fmt::format("the {} differ{}", fmt::join(machine, ", "),
                                    machine.size() == 1 ? "s" : ""));
    if (parts.empty()) return "";
    return fmt::format("{}: not a like-for-like comparison", fmt::join(parts, "; "));
}

std::string verdict_line(const Effect& effect, const std::string& caveat) {
    std::string line = verdict_text(effect);
    if (!caveat.empty()) line += ", but " + caveat;
    return line;
}

RunComparison compare_runs(const workload::RunResult& base, const workload::RunResult& other,
                           const VerdictOptions& options) {
    RunComparison result;
    result.host_differences = host_differences(base.provenance, other.provenance);
    result.warnings = provenance_warnings(base, other);
    result.caveat = like_for_like_caveat(base, other);
    result.options = options;
    const auto base_summaries = summarize(base);
    const auto other_summaries = summarize(other);
    std::vector<Keyed> others;
    for (const auto& s : other_summaries)
        if (s.trials > 0) others.push_back({&s});
    // The matched cells' results, in result.cells' order: {base, other}.
    std::vector<std::pair<const workload::CellResult*, const workload::CellResult*>> matched;

    for (const auto& b : base_summaries) {
        if (b.trials == 0) continue;  // no finished trial: nothing to compare
        auto match = std::find_if(others.begin(), others.end(), [&](const Keyed& k) {
            return !k.matched && k.summary->cell->lock == b.cell->lock &&
                   k.summary->cell->threads == b.cell->threads;
        });
        if (match == others.end()) {
            result.only_in_base.push_back({b.cell->lock, b.cell->threads});
            continue;
        }
        match->matched = true;
        const auto& o = *match->summary;
        CellComparison c;
        c.lock = b.cell->lock;
        c.threads = b.cell->threads;
        c.base = b.acquires_per_second;
        c.other = o.acquires_per_second;
        c.base_reads = b.read_acquires_per_second;
        c.base_writes = b.write_acquires_per_second;
        c.other_reads = o.read_acquires_per_second;
        c.other_writes = o.write_acquires_per_second;
        result.cells.push_back(std::move(c));
        matched.emplace_back(b.cell, o.cell);
    }
    // Every matched cell is one of the family the Bonferroni correction covers.
    result.family = result.cells.size();
    const unsigned base_processes = std::max(base.spec.processes, 1u);
    const unsigned other_processes = std::max(other.spec.processes, 1u);
    result.over_processes = base_processes >= kMinTrials && other_processes >= kMinTrials;
    result.resampling = result.over_processes
                            ? fmt::format(
                                  "resampled over processes ({} in base, {} in new; each process's "
                                  "trials pooled into its geometric mean)",
                                  base_processes, other_processes)
                        : base_processes > 1 || other_processes > 1
                            ? fmt::format(
                                  "resampled over trials ({} and {} processes: resampling over "
                                  "processes needs --processes {} or more in both runs)",
                                  base_processes, other_processes, kMinTrials)
                            : "resampled over trials within one process per run";
    for (std::size_t i = 0; i < result.cells.size(); ++i) {
        auto& c = result.cells[i];
        c.effect = result.over_processes
                       ? compare_trials(process_throughputs(*matched[i].first, base_processes),
                                        process_throughputs(*matched[i].second, other_processes),
                                        options, result.family)
                       : compare_trials(c.base.values, c.other.values, options, result.family);
    }
    for (const auto& k : others)
        if (!k.matched)
            result.only_in_other.push_back({k.summary->cell->lock, k.summary->cell->threads});
    return result;
}

}  // namespace lockprof::analysis
