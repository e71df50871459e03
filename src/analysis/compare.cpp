#include "lockprof/analysis/compare.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "lockprof/analysis/summary.hpp"

namespace lockprof::analysis {

namespace {

std::string yes_no(bool value) {
    return value ? "yes" : "no";
}

std::string stop_rule(const workload::RunSpec& spec) {
    if (spec.duration_ns) return fmt::format("{} ns per trial", *spec.duration_ns);
    return fmt::format("{} acquires per thread", spec.acquires_per_thread.value_or(0));
}

// Median of values[indices]; `scratch` avoids an allocation per resample.
double median_of_draw(const std::vector<double>& values, std::mt19937_64& rng,
                      std::vector<double>& scratch) {
    scratch.resize(values.size());
    // rng() % n has a negligible bias for trial counts and, unlike uniform_int_distribution,
    // gives the same draws with every standard library, so intervals are reproducible anywhere.
    for (auto& v : scratch) v = values[rng() % values.size()];
    const std::size_t mid = scratch.size() / 2;
    std::nth_element(scratch.begin(), scratch.begin() + mid, scratch.end());
    if (scratch.size() % 2) return scratch[mid];
    const double upper = scratch[mid];
    const double lower = *std::max_element(scratch.begin(), scratch.begin() + mid);
    return (lower + upper) / 2;
}

double quantile_of_sorted(const std::vector<double>& sorted, double q) {
    const double position = q * static_cast<double>(sorted.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const auto above = std::min(below + 1, sorted.size() - 1);
    const double fraction = position - static_cast<double>(below);
    return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

struct Keyed {
    const CellSummary* summary;
    bool matched = false;
};

}  // namespace

const char* verdict_name(Verdict verdict) {
    switch (verdict) {
        case Verdict::faster:
            return "faster";
        case Verdict::slower:
            return "slower";
        case Verdict::within_noise:
            return "within noise";
        case Verdict::no_noise_estimate:
            return "no noise estimate";
    }
    return "?";
}

std::vector<ProvenanceWarning> provenance_warnings(const workload::RunResult& base,
                                                   const workload::RunResult& other) {
    std::vector<ProvenanceWarning> out;
    const auto& b = base.provenance;
    const auto& o = other.provenance;
    const auto differ = [&](const char* field, const std::string& bv, const std::string& ov,
                            const char* why) {
        if (bv != ov)
            out.push_back(
                {field, bv, ov,
                 fmt::format("{} differs (base: '{}', new: '{}'): {}", field, bv, ov, why)});
    };

    // The 2020 thread's mistake comes first: it is the one that fooled people.
    if (b.assertions != o.assertions) {
        const char* which = o.assertions ? "new" : "base";
        out.push_back({"assertions", b.assertions ? "on" : "off", o.assertions ? "on" : "off",
                       fmt::format("assertions are ON in the {} build only: assert-enabled "
                                   "numbers are not representative (the 2020 thread's "
                                   "mistake); rebuild it with NDEBUG (CMAKE_BUILD_TYPE=Release "
                                   "or RelWithDebInfo) and run again",
                                   which)});
    } else if (b.assertions) {
        out.push_back({"assertions", "on", "on",
                       "assertions are ON in both builds: absolute numbers are not "
                       "representative and the ratio may be too; rebuild with NDEBUG"});
    }
    differ("arch", b.arch, o.arch, "different architectures cannot be compared as head vs patch");
    differ("cpu_model", b.cpu_model, o.cpu_model,
           "different CPUs; a ratio measures the machines, not the change");
    differ("midr", b.midr, o.midr, "different CPU cores (MIDR)");
    if (b.arch == "aarch64" || o.arch == "aarch64")
        differ("lse", yes_no(b.lse), yes_no(o.lse),
               "LSE atomics change how every lock's read-modify-write executes");
    if (b.logical_cpus != o.logical_cpus)
        differ("logical_cpus", std::to_string(b.logical_cpus), std::to_string(o.logical_cpus),
               "a different CPU count changes contention and oversubscription");
    differ("compiler", b.compiler, o.compiler, "a different compiler generates different code");
    differ("compiler_flags", b.compiler_flags, o.compiler_flags,
           "different flags (-O level, -march) change the generated code");
    differ("build_type", b.build_type, o.build_type, "optimisation level differs");
    differ("kernel", b.kernel, o.kernel, "scheduler and perf_event behaviour may differ");
    differ("vm_hint", b.vm_hint.empty() ? "none" : b.vm_hint,
           o.vm_hint.empty() ? "none" : o.vm_hint,
           "a VM adds steal time and hides the PMU; compare bare metal with bare metal");

    const auto& bs = base.spec;
    const auto& os = other.spec;
    const auto workload_differs = [&](const char* field, const std::string& bv,
                                      const std::string& ov) {
        differ(field, bv, ov, "the workloads differ, so the locks did different work");
    };
    workload_differs("workload.stop", stop_rule(bs), stop_rule(os));
    workload_differs("workload.critical_ns", std::to_string(bs.work.critical_ns),
                     std::to_string(os.work.critical_ns));
    workload_differs("workload.parallel_ns", std::to_string(bs.work.parallel_ns),
                     std::to_string(os.work.parallel_ns));
    workload_differs("workload.shared_lines", std::to_string(bs.work.shared_lines),
                     std::to_string(os.work.shared_lines));
    workload_differs("workload.data", workload::data_placement_name(bs.work.data),
                     workload::data_placement_name(os.work.data));
    workload_differs("workload.pin", workload::pin_mode_name(bs.pin.mode),
                     workload::pin_mode_name(os.pin.mode));
    workload_differs("workload.delay",
                     bs.delay ? std::string(arch::delay_name(*bs.delay)) : "default",
                     os.delay ? std::string(arch::delay_name(*os.delay)) : "default");
    differ("workload.latency", yes_no(bs.latency), yes_no(os.latency),
           "recording every acquire's latency adds work to the measured loop");
    differ("sampling", yes_no(base.sampling.has_value()), yes_no(other.sampling.has_value()),
           "a sampler interrupts the threads it measures");
    if (base.interrupted || other.interrupted)
        out.push_back({"interrupted", yes_no(base.interrupted), yes_no(other.interrupted),
                       fmt::format("the {} run was interrupted: only its finished trials are "
                                   "compared",
                                   base.interrupted && other.interrupted ? "base and the new"
                                   : base.interrupted                    ? "base"
                                                                         : "new")});
    return out;
}

std::optional<ConfidenceInterval> bootstrap_ratio_interval(const std::vector<double>& base,
                                                           const std::vector<double>& other,
                                                           const CompareOptions& options) {
    if (base.size() < 2 || other.size() < 2 || options.resamples == 0) return std::nullopt;
    std::mt19937_64 rng(options.seed);
    std::vector<double> ratios, scratch;
    ratios.reserve(options.resamples);
    for (unsigned i = 0; i < options.resamples; ++i) {
        const double b = median_of_draw(base, rng, scratch);
        const double o = median_of_draw(other, rng, scratch);
        // A zero median in a resample (a trial with no acquires) has no finite ratio.
        if (b > 0) ratios.push_back(o / b);
    }
    if (ratios.empty()) return std::nullopt;
    std::sort(ratios.begin(), ratios.end());
    const double tail = (1 - options.confidence) / 2;
    return ConfidenceInterval{quantile_of_sorted(ratios, tail),
                              quantile_of_sorted(ratios, 1 - tail)};
}

RunComparison compare_runs(const workload::RunResult& base, const workload::RunResult& other,
                           const CompareOptions& options) {
    RunComparison result;
    result.warnings = provenance_warnings(base, other);
    const auto base_summaries = summarize(base);
    const auto other_summaries = summarize(other);
    std::vector<Keyed> others;
    for (const auto& s : other_summaries)
        if (s.trials > 0) others.push_back({&s});

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
        c.ratio = c.base.median > 0 ? c.other.median / c.base.median : 0;
        // Each cell starts from the same seed, so its interval does not depend on which other
        // cells the runs hold.
        c.interval = bootstrap_ratio_interval(c.base.values, c.other.values, options);
        if (!c.interval)
            c.verdict = Verdict::no_noise_estimate;
        else if (c.interval->low > 1)
            c.verdict = Verdict::faster;
        else if (c.interval->high < 1)
            c.verdict = Verdict::slower;
        else
            c.verdict = Verdict::within_noise;
        result.cells.push_back(std::move(c));
    }
    for (const auto& k : others)
        if (!k.matched)
            result.only_in_other.push_back({k.summary->cell->lock, k.summary->cell->threads});
    return result;
}

}  // namespace lockprof::analysis
