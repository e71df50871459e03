#include "lockprof/analysis/summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace lockprof::analysis {

namespace {

struct TrialFigures {
    double acquires = 0, per_second = 0, wall_per = 0, cpu_per = 0, ticks_per = 0, rmw_per = 0,
           spins_per = 0, sleeps_per = 0, jain = 1, min_max = 1, cv = 0, critical_work = 0,
           parallel_work = 0, full_concurrency = 1, cpus = 0, reads = 0, read_per_second = 0,
           write_per_second = 0;
};

// Latest start to earliest end over first start to last end, from the threads' own clocks.
double full_concurrency_of(const workload::TrialResult& t) {
    if (t.threads.empty()) return 1;
    std::uint64_t first_start = UINT64_MAX, last_start = 0, first_end = UINT64_MAX, last_end = 0;
    for (const auto& th : t.threads) {
        first_start = std::min(first_start, th.start_ns);
        last_start = std::max(last_start, th.start_ns);
        first_end = std::min(first_end, th.end_ns);
        last_end = std::max(last_end, th.end_ns);
    }
    if (last_end <= first_start) return 1;  // no window to speak of
    if (first_end <= last_start) return 0;
    return static_cast<double>(first_end - last_start) /
           static_cast<double>(last_end - first_start);
}

// Percentiles of a merged histogram in ns; none without samples or a tick rate.
std::optional<LatencySummary> latency_summary(const workload::LatencyHistogram& h,
                                              double ticks_per_ns) {
    if (h.empty() || ticks_per_ns <= 0) return std::nullopt;
    LatencySummary l;
    l.p50_ns = static_cast<double>(h.quantile(0.5)) / ticks_per_ns;
    l.p99_ns = static_cast<double>(h.quantile(0.99)) / ticks_per_ns;
    l.p999_ns = static_cast<double>(h.quantile(0.999)) / ticks_per_ns;
    l.max_ns = static_cast<double>(h.max()) / ticks_per_ns;
    l.samples = h.total();
    return l;
}

// The acquires of `all` that are not in `part` (a subset of them, bucket by bucket): the
// exclusive acquires of a --read-fraction run from all of them and the shared ones. Its max is
// all's, an upper bound.
workload::LatencyHistogram without(const workload::LatencyHistogram& all,
                                   const workload::LatencyHistogram& part) {
    std::vector<std::uint64_t> counts(workload::LatencyHistogram::kBuckets, 0);
    for (auto [index, count] : all.nonzero()) counts[index] = count;
    for (auto [index, count] : part.nonzero()) counts[index] -= std::min(counts[index], count);
    workload::LatencyHistogram out;
    for (unsigned i = 0; i < counts.size(); ++i)
        if (counts[i] != 0) out.set_bucket(i, counts[i]);
    out.set_max(all.max());
    return out;
}

TrialFigures figures_of(const workload::TrialResult& t) {
    TrialFigures f;
    double cpu = 0, rmw = 0, spins = 0, sleeps = 0;
    std::vector<double> per_thread, critical_work, parallel_work;
    for (const auto& th : t.threads) {
        critical_work.push_back(th.critical_work_ns);
        parallel_work.push_back(th.parallel_work_ns);
        f.acquires += static_cast<double>(th.acquires);
        f.reads += static_cast<double>(th.read_acquires);
        cpu += static_cast<double>(th.cpu_ns);
        rmw += static_cast<double>(th.rmw_attempts);
        spins += static_cast<double>(th.spin_iterations);
        sleeps += static_cast<double>(th.sleeps);
        per_thread.push_back(static_cast<double>(th.acquires));
    }
    const double acquires = std::max(f.acquires, 1.0);
    f.per_second = t.wall_ns ? f.acquires / (static_cast<double>(t.wall_ns) * 1e-9) : 0;
    f.read_per_second = t.wall_ns ? f.reads / (static_cast<double>(t.wall_ns) * 1e-9) : 0;
    f.write_per_second = f.per_second - f.read_per_second;
    f.wall_per = static_cast<double>(t.wall_ns) / acquires;
    f.cpu_per = cpu / acquires;
    f.cpus = t.wall_ns ? cpu / static_cast<double>(t.wall_ns) : 0;
    f.ticks_per = static_cast<double>(t.ticks) / acquires;
    f.rmw_per = rmw / acquires;
    f.spins_per = spins / acquires;
    f.sleeps_per = sleeps / acquires;
    f.jain = jain_index(per_thread);
    f.min_max = min_max_ratio(per_thread);
    f.cv = coefficient_of_variation(per_thread);
    f.full_concurrency = full_concurrency_of(t);
    f.critical_work = median(critical_work);
    f.parallel_work = median(parallel_work);
    return f;
}

std::vector<EventSummary> events_of(const workload::CellResult& cell) {
    // Event names in first-seen order.
    std::vector<std::string> names;
    for (const auto& t : cell.trials)
        for (const auto& th : t.threads)
            for (const auto& c : th.counters)
                if (std::find(names.begin(), names.end(), c.event) == names.end())
                    names.push_back(c.event);
    std::vector<EventSummary> out;
    for (const auto& name : names) {
        EventSummary e;
        e.event = name;
        std::vector<double> per_acquire, fractions;
        for (const auto& t : cell.trials) {
            double total = 0, acquires = 0, worst_fraction = 1;
            bool any = false;
            for (const auto& th : t.threads) {
                acquires += static_cast<double>(th.acquires);
                for (const auto& c : th.counters) {
                    if (c.event != name) continue;
                    const double fraction = c.enabled_ns ? static_cast<double>(c.running_ns) /
                                                               static_cast<double>(c.enabled_ns)
                                                         : 0;
                    worst_fraction = std::min(worst_fraction, fraction);
                    if (auto v = scaled_value(c)) total += *v, any = true;
                }
            }
            if (any) per_acquire.push_back(total / std::max(acquires, 1.0));
            fractions.push_back(worst_fraction);
        }
        e.counted = !per_acquire.empty();
        e.per_acquire = summarize(per_acquire);
        e.running_fraction = median(fractions);
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace

std::size_t comparison_count(const std::vector<CellSummary>& summaries) {
    std::size_t n = 0;
    for (const auto& s : summaries) n += s.comparison.has_value();
    return n;
}

VerdictOptions verdict_options(const std::vector<CellSummary>& summaries) {
    for (const auto& s : summaries)
        if (s.comparison)
            return {s.comparison->effect.confidence, s.comparison->effect.equivalence};
    return {};
}

namespace {

std::vector<std::string> verdict_comparison_notes(const std::vector<CellSummary>& summaries) {
    const std::size_t family = comparison_count(summaries);
    if (family == 0) return {};
    unsigned processes = 1;
    for (const auto& s : summaries)
        if (s.comparison) processes = s.comparison->processes;
    std::vector<std::string> out{"vs first: " + method_text(verdict_options(summaries), family) +
                                 "; " + resampling_text(processes)};
    std::map<unsigned, std::string> baselines;
    for (const auto& s : summaries)
        if (s.comparison) baselines[s.cell->threads] = s.comparison->baseline;
    for (const auto& s : summaries) {
        if (!s.comparison) continue;
        const Effect& e = s.comparison->effect;
        const std::string cell = fmt::format("{} vs {} at {}", s.cell->lock, s.comparison->baseline,
                                             threads_text(s.cell->threads));
        if (e.verdict == Verdict::inconclusive)
            out.push_back(fmt::format("{}: inconclusive, interval {}; {}", cell, interval_text(e),
                                      settle_text(e)));
        else if (!e.limit.empty())
            out.push_back(fmt::format("{}: {}", cell, e.limit));
        if (auto outliers = outlier_text(e, s.comparison->baseline, s.cell->lock);
            !outliers.empty())
            out.push_back(fmt::format("{}: {}", cell, outliers));
    }
    return out;
}

}  // namespace

std::vector<double> trial_throughputs(const std::vector<workload::TrialResult>& trials) {
    std::vector<double> out;
    for (const auto& t : trials) out.push_back(figures_of(t).per_second);
    return out;
}

std::vector<double> trial_throughputs(const workload::CellResult& cell) {
    return trial_throughputs(cell.trials);
}

std::vector<double> process_throughputs(const workload::CellResult& cell, unsigned processes) {
    return process_throughputs(cell.trials, processes);
}

std::vector<double> process_throughputs(const std::vector<workload::TrialResult>& trials,
                                        unsigned processes) {
    std::vector<double> log_sum(processes, 0.0);
    std::vector<unsigned> count(processes, 0);
    const auto values = trial_throughputs(trials);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const unsigned p = trials[i].process;
        if (p >= processes) continue;
        log_sum[p] += values[i] > 0 ? std::log(values[i]) : -INFINITY;
        ++count[p];
    }
    std::vector<double> out;
    for (unsigned p = 0; p < processes; ++p)
        if (count[p] > 0) out.push_back(std::exp(log_sum[p] / count[p]));
    return out;
}

std::string resampling_text(unsigned processes) {
    if (processes <= 1) return "resampled over trials within one process";
    if (processes < kMinTrials)
        return fmt::format(
            "over the trials of {} processes together (resampling over processes needs at "
            "least {}: --processes {})",
            processes, kMinTrials, kMinTrials);
    return fmt::format(
        "resampled over {} processes (each process's trials pooled into its geometric mean: "
        "one value per process), not over trials",
        processes);
}

Precision cell_precision(const workload::CellResult& cell, const VerdictOptions& options,
                         std::size_t cells) {
    return throughput_precision(trial_throughputs(cell), options, cells);
}

std::string adaptive_note(const CellSummary& s) {
    if (!s.precision || !s.cell || s.cell->stop != workload::TrialStop::budget) return "";
    const Precision& p = *s.precision;
    std::string line = fmt::format(
        "{} at {} thread{} stayed inconclusive: the --max-time budget ran out after {} trials "
        "with its interval {}, wider than {}",
        s.cell->lock, s.cell->threads, s.cell->threads == 1 ? "" : "s", s.trials, precision_text(p),
        band_text(p.equivalence));
    if (p.trials_to_narrow)
        line +=
            *p.trials_to_narrow > kSettleLimit
                ? fmt::format("; more than {} trials would be needed at this spread", kSettleLimit)
                : fmt::format("; about {} trials would likely narrow it at this spread",
                              *p.trials_to_narrow);
    return line;
}

std::vector<std::string> adaptive_notes(const std::vector<CellSummary>& summaries) {
    std::vector<std::string> out;
    std::size_t settled = 0, auto_cells = 0;
    unsigned fewest = 0, most = 0;
    const Precision* any = nullptr;
    for (const auto& s : summaries) {
        if (!s.precision) continue;
        any = &*s.precision;
        ++auto_cells;
        if (s.cell->stop != workload::TrialStop::settled) continue;
        fewest = settled == 0 ? s.trials : std::min(fewest, s.trials);
        most = std::max(most, s.trials);
        ++settled;
    }
    if (!any) return out;
    const std::string band = band_text(any->equivalence);
    std::string head = fmt::format(
        "trials auto: {} of {} cells settled (the {:.4g}% interval of their own acquires/s, "
        "Bonferroni over {} cells, within {})",
        settled, auto_cells, any->level * 100, summaries.size(), band);
    if (settled > 0)
        head += fewest == most ? fmt::format(" after {} trials", most)
                               : fmt::format(" after {}-{} trials", fewest, most);
    out.push_back(head);
    for (const auto& s : summaries)
        if (auto line = adaptive_note(s); !line.empty()) out.push_back("trials auto: " + line);
    return out;
}

std::string auto_trials_advice(const std::vector<CellSummary>& summaries, unsigned trials_needed) {
    std::vector<double> walls;
    for (const auto& s : summaries)
        if (s.cell)
            for (const auto& t : s.cell->trials) walls.push_back(static_cast<double>(t.wall_ns));
    if (walls.empty()) return "--trials auto --max-time 60s";
    // Every cell to that many trials, with a quarter more for the sweep's own time, rounded up
    // to 10 s.
    const double seconds = median(walls) * 1e-9 * static_cast<double>(summaries.size()) *
                           static_cast<double>(trials_needed) * 1.25;
    const auto rounded = static_cast<unsigned long>(std::ceil(std::max(seconds, 1.0) / 10) * 10);
    return rounded >= 3600 && rounded % 60 == 0
               ? fmt::format("--trials auto --max-time {}m", rounded / 60)
               : fmt::format("--trials auto --max-time {}s", rounded);
}

namespace {

std::string short_interval(const Effect& e) {
    if (!e.interval) return "-";
    return fmt::format("{:.2f}-{:.2f}", e.interval->low, e.interval->high);
}

// Beyond this many trials per side, the brief verdict lines advise a quieter machine instead
// of `--trials auto`.
constexpr unsigned kAutoTrialsAdvised = 100;

// The brief form: the method in a line, the inconclusive pairs in one with their intervals
// and one remedy, the other limits merged by their text, outliers as they are.
std::vector<std::string> brief_comparison_notes(const std::vector<CellSummary>& summaries) {
    const std::size_t family = comparison_count(summaries);
    if (family == 0) return {};
    const VerdictOptions options = verdict_options(summaries);
    unsigned processes = 1;
    for (const auto& s : summaries)
        if (s.comparison) processes = s.comparison->processes;
    std::vector<std::string> out{fmt::format(
        "acquires/s: geometric mean of trials; vs first: their ratio at {:g}%{}, {} band{}",
        corrected_level(options.confidence, family) * 100,
        family == 1 ? std::string() : fmt::format(" (Bonferroni over {})", family),
        band_text(options.equivalence),
        processes <= 1           ? std::string()
        : processes < kMinTrials ? fmt::format("; trials of {} processes pooled", processes)
                                 : fmt::format("; resampled over {} processes", processes))};
    // Inconclusive pairs by thread count: "ttas 0.22-2.82, cas 0.14-3.13 vs tas at 1 thread".
    std::vector<unsigned> order;
    std::map<unsigned, std::vector<std::string>> open;
    std::map<unsigned, std::string> baseline;
    std::vector<unsigned> settle, trials;
    std::size_t unsettleable = 0;
    std::vector<std::string> limit_texts;  // first-seen order
    std::map<std::string, std::vector<PairRef>> limits;
    std::vector<std::string> outliers;
    for (const auto& s : summaries) {
        if (!s.comparison) continue;
        const Effect& e = s.comparison->effect;
        if (e.verdict == Verdict::inconclusive) {
            if (!open.count(s.cell->threads)) order.push_back(s.cell->threads);
            open[s.cell->threads].push_back(fmt::format("{} {}", s.cell->lock, short_interval(e)));
            baseline[s.cell->threads] = s.comparison->baseline;
            trials.push_back(static_cast<unsigned>(std::min(e.base_trials, e.other_trials)));
            if (e.trials_to_settle && *e.trials_to_settle <= kSettleLimit)
                settle.push_back(*e.trials_to_settle);
            else
                ++unsettleable;
        } else if (!e.limit.empty()) {
            if (!limits.count(e.limit)) limit_texts.push_back(e.limit);
            limits[e.limit].push_back({s.cell->lock, s.comparison->baseline, s.cell->threads});
        }
        if (auto text = outlier_text(e, s.comparison->baseline, s.cell->lock); !text.empty())
            outliers.push_back(fmt::format("{} vs {} at {}: {}", s.cell->lock,
                                           s.comparison->baseline, threads_text(s.cell->threads),
                                           text));
    }
    if (!order.empty()) {
        std::vector<std::string> groups;
        for (unsigned t : order)
            // "ttas 0.34-2.15, cas 0.36-1.86 vs tas at 1 thread; ttas 0.32-2.00, ... at 2":
            // the baseline and the noun once, where the later groups share them.
            groups.push_back(
                groups.empty() ? fmt::format("{} vs {} at {}", fmt::join(open[t], ", "),
                                             baseline[t], threads_text(t))
                : baseline[t] == baseline[order.front()]
                    ? fmt::format("{} at {}", fmt::join(open[t], ", "), t)
                    : fmt::format("{} vs {} at {}", fmt::join(open[t], ", "), baseline[t], t));
        const auto [few, many] = std::minmax_element(trials.begin(), trials.end());
        std::string remedy;
        if (!settle.empty()) {
            const auto [low, high] = std::minmax_element(settle.begin(), settle.end());
            // Past kAutoTrialsAdvised trials a --max-time budget is no advice: the spread is the
            // host's, not the trial count's.
            const std::string advice = auto_trials_advice(summaries, *high);
            // "settle them", or "settle 3 of them" where the rest would hardly settle.
            const std::string which = unsettleable
                                          ? fmt::format("{} of them", settle.size())
                                          : std::string(settle.size() == 1 ? "it" : "them");
            remedy = fmt::format("{} trials each would likely settle {}, or {}",
                                 range_text(std::to_string(*low), std::to_string(*high)), which,
                                 *high <= kAutoTrialsAdvised ? advice : "a quieter machine");
        } else {
            remedy =
                "more trials would hardly settle them at this spread (ratios on a band "
                "edge, or far more trials than 10000): a quieter machine would";
        }
        out.push_back(fmt::format("inconclusive at {} trials, intervals {}; {}",
                                  range_text(std::to_string(*few), std::to_string(*many)),
                                  fmt::join(groups, "; "), remedy));
    }
    for (const auto& text : limit_texts)
        out.push_back(fmt::format("{}: {}", pairs_text(limits[text]), text));
    for (auto& line : outliers) out.push_back(std::move(line));
    return out;
}

// `--trials auto`, brief: the head line, then the budget-stopped cells in one line.
std::vector<std::string> brief_adaptive_notes(const std::vector<CellSummary>& summaries) {
    auto lines = adaptive_notes(summaries);
    if (lines.size() <= 2) return lines;
    std::vector<CellRef> cells;
    std::vector<double> trials, widths;
    std::vector<unsigned> needed;
    double equivalence = 0;
    for (const auto& s : summaries) {
        if (adaptive_note(s).empty()) continue;
        cells.push_back({s.cell->lock, s.cell->threads});
        trials.push_back(s.trials);
        widths.push_back(s.precision->half_width);
        equivalence = s.precision->equivalence;
        if (s.precision->trials_to_narrow && *s.precision->trials_to_narrow <= kSettleLimit)
            needed.push_back(*s.precision->trials_to_narrow);
    }
    std::string line = fmt::format(
        "trials auto: {} stayed inconclusive: the --max-time budget ran out after {} trials with "
        "intervals ±{}, wider than {}",
        cells_text(cells, {}),
        figure_range(trials, [](double v) { return fmt::format("{:.0f}", v); }),
        figure_range(widths, [](double v) { return fmt::format("{:.1f}%", v * 100); }),
        band_text(equivalence));
    if (!needed.empty()) {
        const auto [low, high] = std::minmax_element(needed.begin(), needed.end());
        line += fmt::format("; about {} trials would likely narrow them",
                            range_text(std::to_string(*low), std::to_string(*high)));
    }
    return {lines.front(), line};
}

}  // namespace

std::vector<std::string> verdict_notes(const std::vector<CellSummary>& summaries, Detail detail) {
    auto out = detail == Detail::brief ? brief_comparison_notes(summaries)
                                       : verdict_comparison_notes(summaries);
    for (auto& line :
         detail == Detail::brief ? brief_adaptive_notes(summaries) : adaptive_notes(summaries))
        out.push_back(std::move(line));
    return out;
}

bool has_plain_trials(const workload::RunResult& run, const workload::CellResult& cell) {
    return run.spec.perturbation_check && !cell.plain_trials.empty();
}

std::string instruments_text(const workload::RunResult& run) {
    bool counted = false;
    for (const auto& cell : run.cells)
        for (const auto& t : cell.trials)
            for (const auto& th : t.threads) counted |= !th.counters.empty();
    if (run.sampling) return counted ? "sampling and counters" : "sampling";
    return counted ? "counters" : "instruments";
}

const char* perturbation_verdict_name(Verdict verdict) {
    switch (verdict) {
        case Verdict::faster:
            return "raised";
        case Verdict::slower:
            return "lowered";
        default:
            return verdict_name(verdict);
    }
}

bool any_perturbation(const std::vector<CellSummary>& summaries) {
    return std::any_of(summaries.begin(), summaries.end(),
                       [](const CellSummary& s) { return s.perturbation.has_value(); });
}

std::string perturbation_text(const Effect& effect) {
    switch (effect.verdict) {
        case Verdict::no_ratio:
            return "no ratio";
        case Verdict::too_few_trials:
            return fmt::format("{:.2f}x, {}", effect.ratio, verdict_text(effect));
        default:
            return fmt::format("{:.2f}x {}", effect.ratio,
                               perturbation_verdict_name(effect.verdict));
    }
}

std::string perturbation_claim(const CellSummary& s) {
    if (!s.perturbation || !s.cell) return "";
    const Effect& e = *s.perturbation;
    if (e.verdict != Verdict::faster && e.verdict != Verdict::slower) return "";
    const bool raised = e.verdict == Verdict::faster;
    const auto percent = [](double ratio) {
        return fmt::format("{:.0f}%", 100 * std::abs(ratio - 1));
    };
    const std::string interval =
        e.interval ? fmt::format(" [{}, {}]", percent(raised ? e.interval->low : e.interval->high),
                                 percent(raised ? e.interval->high : e.interval->low))
                   : "";
    return fmt::format(
        "{} {} {}'s throughput by {}{} at {}: the {} trials' figures (samples, counts per "
        "acquire) describe a {} run than the plain one{}",
        s.instruments, raised ? "raised" : "lowered", s.cell->lock, percent(e.ratio), interval,
        threads_text(s.cell->threads),
        s.instruments.starts_with("sampling") ? "sampled"
        : s.instruments == "counters"         ? "counted"
                                              : "instrumented",
        raised ? "faster, less contended" : "slower",
        raised ? " (interrupts can break a convoy of waiters)"
               : " (the instruments took time from the loop)");
}

std::vector<std::string> perturbation_notes(const std::vector<CellSummary>& summaries,
                                            Detail detail) {
    std::vector<const CellSummary*> checked;
    for (const auto& s : summaries)
        if (s.perturbation) checked.push_back(&s);
    if (checked.empty()) return {};
    const Effect& first = *checked.front()->perturbation;
    std::map<std::string, std::vector<std::string>> by_verdict;
    for (const auto* s : checked)
        by_verdict[perturbation_verdict_name(s->perturbation->verdict)].push_back(
            fmt::format("{} at {}", s->cell->lock, threads_text(s->cell->threads)));
    std::string counts;
    for (const auto& [verdict, cells] : by_verdict)
        counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", cells.size(), verdict);
    std::vector<std::string> out;
    out.push_back(fmt::format(
        "instr/plain: acquires/s with {} over the same trials run without instruments "
        "(interleaved, {} pairs per cell); {} cell{}: {}; acquires/s and vs first are the plain "
        "trials'{}",
        checked.front()->instruments, std::min(first.base_trials, first.other_trials),
        checked.size(), checked.size() == 1 ? "" : "s", counts,
        detail == Detail::full
            ? "; " + method_text({first.confidence, first.equivalence}, first.family)
            : ""));
    for (const auto* s : checked) {
        if (auto claim = perturbation_claim(*s); !claim.empty())
            out.push_back(claim);
        else if (detail == Detail::full && s->perturbation->verdict == Verdict::inconclusive)
            out.push_back(fmt::format("{} at {}: observer effect inconclusive, interval {}; {}",
                                      s->cell->lock, threads_text(s->cell->threads),
                                      interval_text(*s->perturbation),
                                      settle_text(*s->perturbation)));
    }
    return out;
}

std::vector<CellSummary> summarize(const workload::RunResult& run, const VerdictOptions& options) {
    // The observer effect: each cell's instrumented acquires/s against its plain twins', one
    // family over the cells that have both (Bonferroni), judged against the same band.
    const auto perturbed = static_cast<std::size_t>(
        std::count_if(run.cells.begin(), run.cells.end(), [&](const workload::CellResult& c) {
            return has_plain_trials(run, c) && !c.trials.empty();
        }));
    const std::string instruments = perturbed > 0 ? instruments_text(run) : "";
    std::vector<CellSummary> out;
    for (const auto& cell : run.cells) {
        CellSummary s;
        s.cell = &cell;
        s.trials = static_cast<unsigned>(cell.trials.size());
        std::vector<TrialFigures> figures;
        for (const auto& t : cell.trials) figures.push_back(figures_of(t));
        auto collect = [&](double TrialFigures::*member) {
            std::vector<double> v;
            for (const auto& f : figures) v.push_back(f.*member);
            return analysis::summarize(v);
        };
        s.acquires = collect(&TrialFigures::acquires);
        s.acquires_per_second = collect(&TrialFigures::per_second);
        s.wall_ns_per_acquire = collect(&TrialFigures::wall_per);
        s.cpu_ns_per_acquire = collect(&TrialFigures::cpu_per);
        s.cpus_used = collect(&TrialFigures::cpus);
        s.ticks_per_acquire = collect(&TrialFigures::ticks_per);
        s.rmw_per_acquire = collect(&TrialFigures::rmw_per);
        s.spins_per_acquire = collect(&TrialFigures::spins_per);
        s.sleeps_per_acquire = collect(&TrialFigures::sleeps_per);
        s.critical_work_ns = collect(&TrialFigures::critical_work);
        s.parallel_work_ns = collect(&TrialFigures::parallel_work);
        s.full_concurrency = collect(&TrialFigures::full_concurrency);
        s.jain = collect(&TrialFigures::jain);
        s.min_max = collect(&TrialFigures::min_max);
        s.cv = collect(&TrialFigures::cv);

        if (run.spec.work.read_fraction > 0) {
            s.read_acquires = collect(&TrialFigures::reads);
            s.read_acquires_per_second = collect(&TrialFigures::read_per_second);
            s.write_acquires_per_second = collect(&TrialFigures::write_per_second);
        }
        workload::LatencyHistogram merged, reads;
        for (const auto& t : cell.trials)
            for (const auto& th : t.threads) {
                merged.merge(th.latency);
                reads.merge(th.read_latency);
            }
        const double per_ns = run.calibration.ticks_per_ns;
        s.latency = latency_summary(merged, per_ns);
        if (!reads.empty()) {
            s.read_latency = latency_summary(reads, per_ns);
            s.write_latency = latency_summary(without(merged, reads), per_ns);
        }
        s.events = events_of(cell);
        s.derived = derived_metrics(cell);
        if (cell.stop == workload::TrialStop::settled || cell.stop == workload::TrialStop::budget)
            s.precision =
                throughput_precision(s.acquires_per_second.values, options, run.cells.size());
        // The observer-effect check: the throughput a user reads (acquires/s, its spread, vs
        // first) is the plain trials'; the per-acquire figures stay the instrumented trials',
        // which carry the counts and samples they are read beside.
        if (has_plain_trials(run, cell)) {
            const std::vector<double> instrumented = std::move(s.acquires_per_second.values);
            s.acquires_per_second = analysis::summarize(trial_throughputs(cell.plain_trials));
            if (s.trials > 0) {
                s.perturbation =
                    compare_trials(s.acquires_per_second.values, instrumented, options, perturbed);
                s.instruments = instruments;
            }
        }
        out.push_back(std::move(s));
    }
    // Compare each cell with the first lock at the same thread count; all comparisons of the
    // run form one family for the multiplicity correction.
    std::map<unsigned, const CellSummary*> baseline;
    for (auto& s : out) {
        auto [it, first] = baseline.emplace(s.cell->threads, &s);
        if (first || s.trials == 0 || it->second->trials == 0) continue;
        s.comparison = Comparison{it->second->cell->lock, {}};
    }
    const std::size_t family = comparison_count(out);
    const unsigned processes = std::max(run.spec.processes, 1u);
    const bool over_processes = processes >= kMinTrials;
    // With the observer-effect check the plain trials give the verdicts and the figure the
    // tables print: they are the workload as its users run it, without the instruments.
    const auto values_of = [&](const CellSummary& s) {
        const auto& trials = has_plain_trials(run, *s.cell) ? s.cell->plain_trials : s.cell->trials;
        return over_processes ? process_throughputs(trials, processes)
                              : s.acquires_per_second.values;
    };
    for (auto& s : out) {
        s.verdict_values = values_of(s);
        s.throughput = geometric_mean(s.verdict_values);
    }
    for (auto& s : out) {
        if (!s.comparison) continue;
        const CellSummary& base = *baseline.at(s.cell->threads);
        s.comparison->effect =
            compare_trials(base.verdict_values, s.verdict_values, options, family);
        s.comparison->processes = processes;
        s.comparison->over_processes = over_processes;
    }
    return out;
}

}  // namespace lockprof::analysis
