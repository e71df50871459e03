#include "lockprof/analysis/explain.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "lockprof/common/parse.hpp"
#include "lockprof/locks/catalog.hpp"

namespace lockprof::analysis {
namespace {

using symbols::class_description;
using symbols::classify_mnemonic;
using symbols::InstructionClass;

std::string percent(double share) {
    return fmt::format("{:.0f}%", share * 100);
}

std::string rate(double acquires_per_second) {
    return fmt::format("{:.3g}", acquires_per_second / 1e6);
}

// How an algorithm's read-modify-write reads in a sentence: the lock header's kRmwNoun, through
// the lock catalog, so a renamed or added lock brings its noun along. Names this build does not
// know (result files of other versions) say it generically.
std::string rmw_noun(std::string_view algorithm) {
    const std::string_view noun = locks::rmw_noun(algorithm);
    return std::string(noun.empty() ? "atomic read-modify-writes" : noun);
}

std::string lowercase(std::string_view name) {
    std::string lower(name);
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower;
}

bool is_exclusive_event(std::string_view name) {
    const std::string lower = lowercase(name);
    return lower.find("stxr") != std::string::npos || lower.find("strex") != std::string::npos;
}

bool is_failure_event(std::string_view name) {
    return is_exclusive_event(name) && lowercase(name).find("fail") != std::string::npos;
}

// Events every run of the loop produces: a count of 0 means the PMU did not count them.
bool always_executed(std::string_view name) {
    const std::string lower = lowercase(name);
    for (std::string_view mark : {"cycles", "instructions", "inst_retired", "task_clock",
                                  "task-clock", "cpu-clock", "cpu_clock"})
        if (lower.find(mark) != std::string::npos) return true;
    return false;
}

// The cell's store-exclusive failure count (stxr_fail, STREX_FAIL_SPEC), with its name.
const std::pair<std::string, Spread>* exclusive_failures(const CellEvidence& cell) {
    for (const auto& event : cell.events_per_acquire)
        if (is_failure_event(event.first) && !event.second.values.empty()) return &event;
    return nullptr;
}

bool any_exclusive_event(const CellEvidence& cell) {
    return std::any_of(cell.events_per_acquire.begin(), cell.events_per_acquire.end(),
                       [](const auto& event) { return is_exclusive_event(event.first); });
}

bool all_zero(const Spread& s) {
    return !s.values.empty() && s.min == 0 && s.max == 0;
}

const Spread* event_of(const CellEvidence& cell, const std::string& name) {
    for (const auto& [event, spread] : cell.events_per_acquire)
        if (event == name && !spread.values.empty()) return &spread;
    return nullptr;
}

const InstructionShare* hottest(const CellEvidence& cell) {
    const InstructionShare* best = nullptr;
    for (const auto& i : cell.instructions)
        if (!best || i.share > best->share) best = &i;
    return best;
}

bool loop_has(const CellEvidence& cell, InstructionClass c) {
    for (const auto& m : cell.acquire_loop_mnemonics)
        if (classify_mnemonic(m) == c) return true;
    return false;
}

bool is_costly(InstructionClass c) {
    return c == InstructionClass::store_exclusive || c == InstructionClass::load_exclusive ||
           c == InstructionClass::lse_atomic || c == InstructionClass::locked_rmw ||
           c == InstructionClass::delay;
}

// The LSE atomic a cell spends most samples on (or, unsampled, the first in its loop).
std::string lse_mnemonic(const CellEvidence& cell) {
    const InstructionShare* best = nullptr;
    for (const auto& i : cell.instructions)
        if (classify_mnemonic(i.mnemonic) == InstructionClass::lse_atomic &&
            (!best || i.share > best->share))
            best = &i;
    if (best) return best->mnemonic;
    for (const auto& m : cell.acquire_loop_mnemonics)
        if (classify_mnemonic(m) == InstructionClass::lse_atomic) return m;
    return "";
}

bool executes_lse(const CellEvidence& cell, const ExplainThresholds& t) {
    if (cell.flavour == "lse") return true;
    if (cell.samples < t.min_samples) return false;
    bool lse = false, exclusive = false;
    for (const auto& i : cell.instructions) {
        const auto c = classify_mnemonic(i.mnemonic);
        lse |= c == InstructionClass::lse_atomic;
        exclusive |=
            c == InstructionClass::store_exclusive || c == InstructionClass::load_exclusive;
    }
    return lse && !exclusive;
}

// Whether the cell runs LL/SC code: store-exclusives execute on every acquire.
bool executes_exclusives(const CellEvidence& cell) {
    if (cell.flavour == "llsc") return true;
    if (loop_has(cell, InstructionClass::store_exclusive)) return true;
    return std::any_of(cell.instructions.begin(), cell.instructions.end(), [](const auto& i) {
        return classify_mnemonic(i.mnemonic) == InstructionClass::store_exclusive;
    });
}

struct PairContext {
    const CellEvidence& a;  // baseline
    const CellEvidence& b;
    const ExplainThresholds& t;
    std::size_t family = 1;                // throughput comparisons made together (Bonferroni)
    bool throughput_unresolved = false;    // inconclusive, or too few trials for an interval
    bool throughput_inconclusive = false;  // the interval reaches across a band edge
    bool throughput_equivalent = false;    // the interval lies inside the equivalence band
    std::optional<Effect> effect{};        // the throughput verdict, once the rule judged it
    std::set<std::string> cited_events{};  // quoted by an earlier rule of this pair
};

// One claim of a rule; `explains` false for numbers that do not tell the pair apart.
struct Claim {
    Claim(std::string claim_text, bool claim_explains = true)
        : text(std::move(claim_text)), explains(claim_explains) {}
    std::string text;
    bool explains;
};

using RuleFunction = std::function<std::vector<Claim>(PairContext&)>;

struct Rule {
    std::string_view id;
    std::string_view needs;  // documentation: which evidence it reads
    RuleFunction apply;
};

// 1.03x needs two decimals to differ from 1; 1.9x does not.
std::string factor_text(double factor) {
    return factor < 1.095 ? fmt::format("{:.2f}", factor) : fmt::format("{:.1f}", factor);
}

std::string interval_clause(const Effect& e) {
    return fmt::format("{:g}% interval of the ratio {}{}", e.level * 100, interval_text(e),
                       e.family > 1 ? fmt::format(" (Bonferroni over {} pairs)", e.family) : "");
}

// The throughput claims state the difference (the one engine, verdict.hpp); other rules
// explain it.
std::vector<Claim> throughput_rule(PairContext& p) {
    const auto& a = p.a.acquires_per_second;
    const auto& b = p.b.acquires_per_second;
    if (a.values.empty() || b.values.empty() || a.median <= 0) return {};
    const auto& a_values = p.a.verdict_values.empty() ? a.values : p.a.verdict_values;
    const auto& b_values = p.b.verdict_values.empty() ? b.values : p.b.verdict_values;
    const Effect e = compare_trials(a_values, b_values, p.t.verdict, p.family);
    p.effect = e;
    const std::string band = band_text(p.t.verdict.equivalence);
    std::vector<Claim> out;
    switch (e.verdict) {
        case Verdict::no_ratio:
        case Verdict::too_few_trials:
            p.throughput_unresolved = true;
            out.emplace_back(fmt::format("{} ({} {} vs {} {} M acquires/s)", e.limit, p.b.lock,
                                         rate(b.median), p.a.lock, rate(a.median)),
                             false);
            break;
        case Verdict::inconclusive:
            p.throughput_unresolved = true;
            p.throughput_inconclusive = true;
            out.emplace_back(
                fmt::format("throughput inconclusive: {} {}-{} vs {} {}-{} M acquires/s, ratio "
                            "{:.3f}, {} reaches across an edge of the {} equivalence band; {}",
                            p.b.lock, rate(b.min), rate(b.max), p.a.lock, rate(a.min), rate(a.max),
                            e.ratio, interval_clause(e), band, settle_text(e)),
                false);
            break;
        case Verdict::equivalent:
            p.throughput_equivalent = true;
            out.emplace_back(fmt::format("{} and {} are equivalent at {}: ratio {:.3f}, "
                                         "{} lies inside the {} equivalence band",
                                         p.b.lock, p.a.lock, threads_text(p.b.threads), e.ratio,
                                         interval_clause(e), band),
                             false);
            break;
        case Verdict::faster:
        case Verdict::slower: {
            const double factor = e.ratio >= 1 ? e.ratio : 1 / e.ratio;
            out.emplace_back(
                fmt::format("{} is {}x {} than {} at {} ({} vs {} M acquires/s, "
                            "geometric means of {} and {} trials; {} lies outside the {} "
                            "equivalence band)",
                            p.b.lock, factor_text(factor), verdict_name(e.verdict), p.a.lock,
                            threads_text(p.b.threads), rate(geometric_mean(b_values)),
                            rate(geometric_mean(a_values)), b.values.size(), a.values.size(),
                            interval_clause(e), band),
                false);
            break;
        }
    }
    if (auto outliers = outlier_text(e, p.a.lock, p.b.lock); !outliers.empty())
        out.emplace_back(outliers, false);
    return out;
}

// An inconclusive verdict whose trials the host disturbed: the spread that keeps it open may be
// the hypervisor's, which more trials on the same busy host do not remove.
std::vector<Claim> steal_rule(PairContext& p) {
    if (!p.throughput_inconclusive || p.a.steal.high + p.b.steal.high == 0) return {};
    StealTally both = p.a.steal;
    both.add(p.b.steal);
    return {Claim(fmt::format("hypervisor steal in the trials of {} and {}: {}; the spread that "
                              "leaves the verdict open may be the host's, not the locks'; run on "
                              "an idle or dedicated host",
                              p.b.lock, p.a.lock, high_steal_text(both)),
                  false)};
}

// Where the instruments changed a cell's throughput, its samples and counts describe another
// run than the verdict's plain trials: said before the evidence that quotes them.
std::vector<Claim> observer_effect_rule(PairContext& p) {
    std::vector<Claim> out;
    for (const CellEvidence* c : {&p.b, &p.a})
        if (!c->perturbation.empty()) out.emplace_back(c->perturbation, false);
    return out;
}

std::vector<Claim> rmw_rule(PairContext& p) {
    const CellEvidence* hi = &p.a;
    const CellEvidence* lo = &p.b;
    if (lo->rmw_per_acquire.median > hi->rmw_per_acquire.median) std::swap(hi, lo);
    const double h = hi->rmw_per_acquire.median, l = lo->rmw_per_acquire.median;
    if (l <= 0 || h < p.t.min_rmw || h / l < p.t.rmw_ratio) return {};
    if (hi->rmw_per_acquire.values.size() > 1 && lo->rmw_per_acquire.values.size() > 1 &&
        ranges_overlap(hi->rmw_per_acquire, lo->rmw_per_acquire))
        return {};
    std::string text = fmt::format("{} issues {} {} per acquire, {} {}", hi->lock, format_figure(h),
                                   rmw_noun(hi->algorithm), lo->lock, format_figure(l));
    // Polls beyond the RMW retries are plain loads of the lock word (test-and-test-and-set).
    const double polls = lo->spins_per_acquire.median;
    if (polls > (l - 1) + 0.5)
        text += fmt::format(": the rest are plain loads ({} polls of the held lock per acquire)",
                            format_figure(polls));
    else
        text += fmt::format(
            ": every retry of {} is another read-modify-write of the lock's "
            "cache line",
            hi->lock);
    return {text};
}

// One lock's threads spent much of the window off-CPU where the other's ran: it waits by
// sleeping (or was descheduled), so its spinning figures tell only part of its story.
std::vector<Claim> cpu_use_rule(PairContext& p) {
    const CellEvidence* lo = &p.a;
    const CellEvidence* hi = &p.b;
    if (lo->cpus_used.median > hi->cpus_used.median) std::swap(hi, lo);
    const double l = lo->cpus_used.median, h = hi->cpus_used.median;
    if (l <= 0 || l > p.t.cpu_use_ratio * h) return {};  // 0: no CPU time recorded
    if (lo->cpus_used.values.size() > 1 && hi->cpus_used.values.size() > 1 &&
        ranges_overlap(lo->cpus_used, hi->cpus_used))
        return {};
    std::string text = fmt::format("{}'s threads ran on {} CPUs on average, {}'s on {}", lo->lock,
                                   format_figure(l), hi->lock, format_figure(h));
    if (lo->sleeps_per_acquire.median > 0)
        text +=
            fmt::format(": {} waits off-CPU, sleeping {} times a second per thread", lo->lock,
                        format_figure(lo->sleeps_per_acquire.median *
                                      lo->acquires_per_second.median / std::max(lo->threads, 1u)));
    else
        text += fmt::format(
            ": {} spent more of the window descheduled (it does not sleep in the lock; other "
            "load, or more threads than CPUs)",
            lo->lock);
    return {text};
}

// `other`: the pair's other cell. A failure count that is 0 for both is left to the
// counted-events rule: it may mean the PMU does not count it, not that nothing failed.
std::string hot_instruction_claim(const CellEvidence& cell, const CellEvidence& other,
                                  const ExplainThresholds& t, std::set<std::string>& cited) {
    const InstructionShare* top = hottest(cell);
    if (!top || top->share < t.dominant_share) return "";
    const auto c = classify_mnemonic(top->mnemonic);
    std::string text;
    if (c == InstructionClass::branch && loop_has(cell, InstructionClass::load_exclusive))
        text = fmt::format("{}: {} of samples on the branch after the load-exclusive ({})",
                           cell.lock, percent(top->share), top->mnemonic);
    else if (c == InstructionClass::other || c == InstructionClass::branch ||
             c == InstructionClass::barrier)
        text = fmt::format("{}: {} of samples on {}{}", cell.lock, percent(top->share),
                           top->mnemonic, top->in_acquire_loop ? " in its acquire loop" : "");
    else
        text = fmt::format("{}: {} of samples on {} ({})", cell.lock, percent(top->share),
                           class_description(c), top->mnemonic);
    const auto previous = classify_mnemonic(top->previous_mnemonic);
    if (!cell.precise && !is_costly(c) && is_costly(previous))
        text += fmt::format(", right after {} ({}): with skid the cost is most likely there",
                            class_description(previous), top->previous_mnemonic);
    const auto* failures = exclusive_failures(cell);
    if (failures && all_zero(failures->second))
        if (const Spread* theirs = event_of(other, failures->first); theirs && all_zero(*theirs))
            failures = nullptr;
    if (failures) {
        cited.insert(failures->first);
        const double v = failures->second.median;
        if (c == InstructionClass::store_exclusive && v >= 0.5)
            text += fmt::format(
                " and {} stxr failures per acquire - every failed attempt "
                "writes the lock's cache line",
                format_figure(v));
        else if ((c == InstructionClass::branch || c == InstructionClass::load_exclusive) &&
                 v < 0.5)
            text += fmt::format(", {} stxr failures per acquire - it waits with loads",
                                format_figure(v));
        else
            text += fmt::format(", {} stxr failures per acquire", format_figure(v));
    }
    return text;
}

std::vector<Claim> hot_instruction_rule(PairContext& p) {
    std::vector<Claim> out;
    for (const CellEvidence* cell : {&p.a, &p.b}) {
        if (cell->samples == 0) continue;
        if (cell->samples < p.t.min_samples) {
            out.emplace_back(fmt::format("{}: only {} samples (at least {} needed for instruction "
                                         "shares): inconclusive; run longer or raise "
                                         "--sample-freq",
                                         cell->lock, cell->samples, p.t.min_samples),
                             false);
            continue;
        }
        const CellEvidence& other = cell == &p.a ? p.b : p.a;
        if (auto claim = hot_instruction_claim(*cell, other, p.t, p.cited_events); !claim.empty())
            out.emplace_back(std::move(claim));
    }
    return out;
}

std::vector<Claim> exclusive_failure_rule(PairContext& p) {
    // With samples the hot-instruction rule already quotes these.
    if (p.a.samples >= p.t.min_samples || p.b.samples >= p.t.min_samples) return {};
    const auto* fa = exclusive_failures(p.a);
    const auto* fb = exclusive_failures(p.b);
    if (!fa || !fb || executes_lse(p.a, p.t) || executes_lse(p.b, p.t)) return {};
    const CellEvidence* hi = &p.a;
    const CellEvidence* lo = &p.b;
    double h = fa->second.median, l = fb->second.median;
    if (l > h) std::swap(hi, lo), std::swap(h, l);
    if (h < 0.5 || (l > 0 && h / l < p.t.exclusive_fail_ratio)) return {};
    p.cited_events.insert(fa->first);
    p.cited_events.insert(fb->first);
    return {
        fmt::format("{} fails its store-exclusive {} times per acquire, {} {}: each failed "
                    "attempt has fought for the lock's cache line",
                    hi->lock, format_figure(h), lo->lock, format_figure(l))};
}

std::vector<Claim> lse_rule(PairContext& p) {
    const bool a = executes_lse(p.a, p.t), b = executes_lse(p.b, p.t);
    if (!a && !b) return {};
    const bool stxr_asked = any_exclusive_event(p.a) || any_exclusive_event(p.b);
    if (!stxr_asked && p.a.samples < p.t.min_samples && p.b.samples < p.t.min_samples) return {};
    const std::string ma = lse_mnemonic(p.a), mb = lse_mnemonic(p.b);
    std::string text =
        "LSE build: no store-exclusive instructions executed, stxr events do not apply - " +
        (ma.empty() || mb.empty() ? std::string("compare the LSE atomics instead")
                                  : fmt::format("compare {} vs {} instead", ma, mb));
    std::vector<std::string> shares;
    for (const CellEvidence* cell : {&p.a, &p.b}) {
        const std::string m = lse_mnemonic(*cell);
        double share = 0;
        for (const auto& i : cell->instructions)
            if (i.mnemonic == m) share += i.share;
        if (!m.empty() && cell->samples >= p.t.min_samples)
            shares.push_back(fmt::format("{}: {} of samples on {}", cell->lock, percent(share), m));
    }
    if (!shares.empty()) text += fmt::format(" ({})", fmt::join(shares, ", "));
    return {text};
}

// A figure both cells have: a counted event per acquire, or a derived metric (IPC).
struct ComparedFigure {
    std::string name;  // the event as counted ("cycles", "arm_n1::STREX_PASS_SPEC"), or "IPC"
    const Spread* a = nullptr;
    const Spread* b = nullptr;
    bool derived = false;
    bool percent = false;
};

// Whether an event difference can explain anything: the counts resolve it (the two cells'
// per-acquire rates, pooled over trials, differ by at least 3 Poisson standard errors: a
// handful of context switches does not) and it is large enough to matter (at least
// min_event_difference per acquire). Evidence without acquire counts (synthetic) is taken as
// resolved.
bool resolved_and_material(const ComparedFigure& f, const PairContext& p) {
    if (f.derived) return true;
    const auto pooled = [](const Spread& per_acquire, const CellEvidence& cell)
        -> std::optional<std::pair<double, double>> {  // (events, acquires)
        const auto& acquires = cell.acquires.values;
        if (acquires.size() != per_acquire.values.size() || acquires.empty()) return std::nullopt;
        double events = 0, total = 0;
        for (std::size_t i = 0; i < acquires.size(); ++i)
            events += per_acquire.values[i] * acquires[i], total += acquires[i];
        if (total <= 0) return std::nullopt;
        return std::pair{events, total};
    };
    const auto a = pooled(*f.a, p.a), b = pooled(*f.b, p.b);
    if (!a || !b) return std::fabs(f.a->median - f.b->median) >= p.t.min_event_difference;
    const double rate_a = a->first / a->second, rate_b = b->first / b->second;
    const double error =
        std::sqrt(a->first / (a->second * a->second) + b->first / (b->second * b->second));
    return std::fabs(rate_a - rate_b) >= 3 * error &&
           std::fabs(rate_a - rate_b) >= p.t.min_event_difference;
}

std::string figure_value(const ComparedFigure& f, double v) {
    if (f.percent) return percent(v);
    if (f.derived) return fmt::format("{:.2f}", v);
    return format_figure(v);
}

std::string compared_range(const ComparedFigure& f, const Spread& s) {
    if (s.values.size() < 2 || s.min == s.max) return figure_value(f, s.median);
    return fmt::format("{}-{}", figure_value(f, s.min), figure_value(f, s.max));
}

// "cas counts 401 cycles per acquire, tas 812: 2.0x fewer", "cas IPC 0.40, tas 0.25".
std::string figure_difference(const ComparedFigure& f, const PairContext& p) {
    const double vb = f.b->median, va = f.a->median;
    std::string text;
    if (f.derived) {
        // "stxr fail%" reads "stxr fail 12%".
        std::string label = f.name;
        if (f.percent && !label.empty() && label.back() == '%') label.pop_back();
        text = fmt::format("{} {} {}, {} {}", p.b.lock, label, figure_value(f, vb), p.a.lock,
                           figure_value(f, va));
    } else {
        text = fmt::format("{} counts {} {} per acquire, {} {}", p.b.lock, figure_value(f, vb),
                           f.name, p.a.lock, figure_value(f, va));
    }
    if (va > 0 && vb > 0 && va != vb)
        text +=
            fmt::format(": {}x {}", factor_text(vb > va ? vb / va : va / vb),
                        f.derived ? (vb > va ? "higher" : "lower") : (vb > va ? "more" : "fewer"));
    return text;
}

// The figures of counted_events_rule that explain nothing, quoted together by kind.
struct QuotedFigures {
    std::vector<std::string> zero_exclusive, zero_always, zero_plain, equivalent, open, negligible;
};

// Every counted event both cells have that no earlier rule quoted, then the derived metrics.
std::vector<ComparedFigure> compared_figures(const PairContext& p) {
    std::vector<ComparedFigure> figures;
    for (const auto& [name, spread] : p.a.events_per_acquire) {
        if (spread.values.empty() || p.cited_events.count(name)) continue;
        if (const Spread* theirs = event_of(p.b, name))
            figures.push_back({name, &spread, theirs, false, false});
    }
    for (const auto& mine : p.a.derived)
        for (const auto& theirs : p.b.derived)
            if (mine.name == theirs.name && !mine.value.values.empty() &&
                !theirs.value.values.empty())
                figures.push_back({mine.label, &mine.value, &theirs.value, true, mine.percent});
    return figures;
}

// One figure that was counted, judged by the verdict engine: a claim in `out` or a quote in
// `lists`.
void judge_figure(const ComparedFigure& f, const PairContext& p, std::size_t family,
                  const std::string& band, std::vector<Claim>& out, QuotedFigures& lists) {
    const Effect e = compare_trials(f.a->values, f.b->values, p.t.verdict, family);
    const std::string quoted =
        fmt::format("{}{} {} {}, {} {}", f.name, f.derived ? "" : " per acquire", p.b.lock,
                    compared_range(f, *f.b), p.a.lock, compared_range(f, *f.a));
    switch (e.verdict) {
        case Verdict::faster:
        case Verdict::slower:
            if (!resolved_and_material(f, p)) {
                lists.negligible.push_back(quoted);
                break;
            }
            out.emplace_back(figure_difference(f, p) +
                             fmt::format(" (interval of the ratio {}, outside the {} band)",
                                         interval_text(e), band));
            break;
        case Verdict::equivalent:
            lists.equivalent.push_back(quoted);
            break;
        case Verdict::inconclusive:
            lists.open.push_back(quoted);
            break;
        case Verdict::too_few_trials: {
            const std::size_t fewest = std::min(e.base_trials, e.other_trials);
            out.emplace_back(
                figure_difference(f, p) + fmt::format(" ({} trial{}: too few for an interval)",
                                                      fewest, fewest == 1 ? "" : "s"),
                false);
            break;
        }
        case Verdict::no_ratio:
            // A trial counted 0: no ratio interval; disjoint trial ranges still separate.
            if (!ranges_overlap(*f.a, *f.b))
                out.emplace_back(figure_difference(f, p) +
                                 " (a trial counted 0, so no interval; the trial ranges do "
                                 "not overlap)");
            else
                lists.open.push_back(quoted);
            break;
    }
}

// The quoted figures as claims that explain nothing, each kind in one sentence.
void quote_figures(const QuotedFigures& lists, const PairContext& p, const std::string& band,
                   std::vector<Claim>& out) {
    if (!lists.equivalent.empty())
        out.emplace_back(fmt::format("equivalent (interval inside the {} band): {}", band,
                                     fmt::join(lists.equivalent, "; ")),
                         false);
    if (!lists.open.empty())
        out.emplace_back(fmt::format("not told apart (inconclusive at these trials): {}",
                                     fmt::join(lists.open, "; ")),
                         false);
    if (!lists.negligible.empty())
        out.emplace_back(
            fmt::format("too few or too rare to explain a throughput difference (under {} per "
                        "acquire apart, or within the counts' own noise): {}",
                        format_figure(p.t.min_event_difference), fmt::join(lists.negligible, "; ")),
            false);
    auto them = [](const std::vector<std::string>& names) {
        return names.size() == 1 ? "it" : "them";
    };
    if (!lists.zero_always.empty())
        out.emplace_back(fmt::format("counted 0 for both: {} - yet every acquire executes "
                                     "instructions, so this PMU does not count {} here: no "
                                     "evidence either way",
                                     fmt::join(lists.zero_always, ", "), them(lists.zero_always)),
                         false);
    if (!lists.zero_exclusive.empty())
        out.emplace_back(fmt::format("counted 0 for both: {} - yet {} and {} execute "
                                     "store-exclusives (LL/SC code), so this PMU does not count "
                                     "{} here: no evidence either way",
                                     fmt::join(lists.zero_exclusive, ", "), p.b.lock, p.a.lock,
                                     them(lists.zero_exclusive)),
                         false);
    if (!lists.zero_plain.empty())
        out.emplace_back(fmt::format("counted 0 for both: {}", fmt::join(lists.zero_plain, ", ")),
                         false);
}

// Every counted event both cells have, and the metrics derived from them, with numbers, each
// judged by the one engine (verdict.hpp): what is faster/slower (higher or lower beyond the
// band) explains; what is equivalent, inconclusive, from too few trials, or 0 for both is
// quoted but does not. Events an earlier rule quoted are not repeated.
std::vector<Claim> counted_events_rule(PairContext& p) {
    const std::vector<ComparedFigure> figures = compared_figures(p);
    // A count of 0 for both is no evidence of sameness. Where both must have executed the
    // event (cycles; store-exclusives of LL/SC code) the PMU did not count it.
    const bool llsc = executes_exclusives(p.a) && executes_exclusives(p.b);
    bool exclusives_uncounted = false;
    for (const auto& f : figures)
        if (!f.derived && all_zero(*f.a) && all_zero(*f.b) && llsc && is_exclusive_event(f.name) &&
            !is_failure_event(f.name))
            exclusives_uncounted = true;
    QuotedFigures lists;
    std::vector<Claim> out;
    // The figures that get an interval are one Bonferroni family of their own.
    std::size_t family = 0;
    for (const auto& f : figures) family += !(!f.derived && all_zero(*f.a) && all_zero(*f.b));
    const std::string band = band_text(p.t.verdict.equivalence);
    for (const auto& f : figures) {
        if (!f.derived && all_zero(*f.a) && all_zero(*f.b)) {
            if (always_executed(f.name))
                lists.zero_always.push_back(f.name);
            else if (exclusives_uncounted && is_exclusive_event(f.name))
                lists.zero_exclusive.push_back(f.name);
            else
                lists.zero_plain.push_back(f.name);
            continue;
        }
        judge_figure(f, p, family, band, out, lists);
    }
    quote_figures(lists, p, band, out);
    return out;
}

// Queue locks (mcs, clh, qspinlock, osq) spin locally: a waiter polls a queue node no other
// waiter polls, so waiting costs loads of a line nobody else writes until the handoff, not
// read-modify-writes of the lock's line. Claimed for each queue lock of the pair that waited
// (queue_min_spins polls per acquire) yet issued at most queue_max_rmw RMWs per acquire; it
// explains the pair when the other lock issued rmw_ratio times more.
std::vector<Claim> queue_rule(PairContext& p) {
    std::vector<Claim> out;
    for (const auto& [queue, other] : {std::pair{&p.b, &p.a}, std::pair{&p.a, &p.b}}) {
        if (!locks::is_queue_lock(queue->algorithm) || queue->threads < 2) continue;
        const double rmw = queue->rmw_per_acquire.median, spins = queue->spins_per_acquire.median;
        if (spins < p.t.queue_min_spins || rmw <= 0 || rmw > p.t.queue_max_rmw || spins <= rmw)
            continue;
        const double other_rmw = other->rmw_per_acquire.median;
        const bool explains = !locks::is_queue_lock(other->algorithm) &&
                              other_rmw >= p.t.rmw_ratio * rmw && other_rmw >= p.t.min_rmw;
        std::string text = fmt::format(
            "{} spins locally: {} polls per acquire but only {} {} per acquire, so its waiters "
            "poll a queue node of their own{} with plain loads instead of retrying an atomic on "
            "the lock's line",
            queue->lock, format_figure(spins), format_figure(rmw), rmw_noun(queue->algorithm),
            queue->algorithm == "clh"         ? " (CLH: the predecessor's)"
            : queue->algorithm == "qspinlock" ? " (qspinlock: the first waiter polls the lock word)"
                                              : "");
        if (explains)
            text += fmt::format("; {} issued {} {} per acquire", other->lock,
                                format_figure(other_rmw), rmw_noun(other->algorithm));
        out.emplace_back(std::move(text), explains);
    }
    return out;
}

// Reader-writer locks trade writer latency for reader scalability: where --read-fraction mixed
// reads and writes and --latency measured both kinds, a lock whose writers waited
// writer_latency_ratio times longer than its readers (median or p99) is said to, with both
// kinds' throughput. Nothing is claimed when the latencies are close or were not measured.
std::vector<Claim> reader_writer_rule(PairContext& p) {
    std::vector<Claim> out;
    for (const CellEvidence* c : {&p.b, &p.a}) {
        if (!c->read_latency || !c->write_latency || !c->read_per_second || !c->write_per_second)
            continue;
        const auto& r = *c->read_latency;
        const auto& w = *c->write_latency;
        if (r.samples == 0 || w.samples == 0 || r.p50_ns <= 0 || r.p99_ns <= 0) continue;
        const double median_ratio = w.p50_ns / r.p50_ns, tail_ratio = w.p99_ns / r.p99_ns;
        if (std::max(median_ratio, tail_ratio) < p.t.writer_latency_ratio) continue;
        out.emplace_back(
            fmt::format("{} trades writer latency for reader throughput: its writers waited "
                        "{} (median) and {} (p99) per acquire, its readers {} and {} "
                        "({}x at the median, {}x at p99), while readers completed {} M "
                        "acquires/s and writers {} M",
                        c->lock, format_duration(w.p50_ns), format_duration(w.p99_ns),
                        format_duration(r.p50_ns), format_duration(r.p99_ns),
                        factor_text(median_ratio), factor_text(tail_ratio),
                        rate(*c->read_per_second), rate(*c->write_per_second)),
            false);
    }
    return out;
}

const std::vector<Rule>& rules() {
    static const std::vector<Rule> all = {
        {"throughput", "acquires/s per trial", throughput_rule},
        {"steal", "hypervisor steal per trial (/proc/stat), with an inconclusive verdict",
         steal_rule},
        {"observer_effect", "the observer-effect check: instrumented vs plain trials",
         observer_effect_rule},
        {"rmw_per_acquire", "AttemptStats rmw_attempts and spin_iterations", rmw_rule},
        {"cpu_use", "threads' CPU time over the trial window, sleeps", cpu_use_rule},
        {"hot_instruction", "samples with instruction annotation, stxr events",
         hot_instruction_rule},
        {"exclusive_failures", "stxr_fail events without samples", exclusive_failure_rule},
        {"lse", "flavour, sampled LSE atomics, stxr events", lse_rule},
        {"queue_local_spin", "queue locks' rmw_attempts and spin_iterations", queue_rule},
        {"reader_writer", "--read-fraction with --latency: reads' and writes' latency and rate",
         reader_writer_rule},
        {"counted_events", "every counted event and derived metric (IPC) per acquire",
         counted_events_rule},
    };
    return all;
}

}  // namespace

std::vector<CellEvidence> evidence_from(const std::vector<CellSummary>& summaries) {
    std::vector<CellEvidence> out;
    for (const auto& s : summaries) {
        if (!s.cell) continue;
        CellEvidence e;
        e.lock = s.cell->lock;
        e.algorithm = s.cell->algorithm;
        e.flavour = s.cell->flavour;
        e.threads = s.cell->threads;
        e.acquires_per_second = s.acquires_per_second;
        e.acquires = s.acquires;
        e.verdict_values = s.verdict_values;
        e.rmw_per_acquire = s.rmw_per_acquire;
        e.spins_per_acquire = s.spins_per_acquire;
        e.sleeps_per_acquire = s.sleeps_per_acquire;
        e.cpus_used = s.cpus_used;
        if (s.read_acquires_per_second) e.read_per_second = s.read_acquires_per_second->median;
        if (s.write_acquires_per_second) e.write_per_second = s.write_acquires_per_second->median;
        e.read_latency = s.read_latency;
        e.write_latency = s.write_latency;
        for (const auto& event : s.events)
            if (event.counted) e.events_per_acquire.emplace_back(event.event, event.per_acquire);
        e.derived = s.derived;
        e.trials_note = adaptive_note(s);
        e.steal.add(*s.cell);
        e.perturbation = perturbation_claim(s);
        out.push_back(std::move(e));
    }
    return out;
}

std::vector<PairDiagnosis> explain(const std::vector<CellEvidence>& cells,
                                   const ExplainThresholds& thresholds) {
    // The first cell at each thread count is the baseline, as in the table's `vs first`.
    std::map<unsigned, const CellEvidence*> baseline;
    for (const auto& cell : cells) baseline.try_emplace(cell.threads, &cell);
    // The throughput comparisons made here form one family, counted as the run table counts
    // its `vs first` column, so both give the same verdict.
    std::size_t family = 0;
    for (const auto& cell : cells) {
        const CellEvidence* base = baseline[cell.threads];
        family += base != &cell && !base->acquires_per_second.values.empty() &&
                  !cell.acquires_per_second.values.empty();
    }
    std::vector<PairDiagnosis> out;
    for (const auto& cell : cells) {
        const CellEvidence* base = baseline[cell.threads];
        if (base == &cell) continue;
        PairContext context{
            .a = *base, .b = cell, .t = thresholds, .family = std::max<std::size_t>(family, 1)};
        PairDiagnosis d;
        d.baseline = base->lock;
        d.other = cell.lock;
        d.threads = cell.threads;
        for (const auto& rule : rules())
            for (auto& claim : rule.apply(context))
                d.findings.push_back({std::string(rule.id), std::move(claim.text), claim.explains});
        for (const CellEvidence* c : {base, &cell})
            if (!c->trials_note.empty())
                d.findings.push_back({"trials-auto", "--trials auto: " + c->trials_note, false});
        d.throughput = context.effect;
        const bool explained = std::any_of(d.findings.begin(), d.findings.end(),
                                           [](const auto& f) { return f.explains; });
        const bool counted = !base->events_per_acquire.empty() || !cell.events_per_acquire.empty();
        const bool sampled = base->samples > 0 || cell.samples > 0;
        d.sampled = sampled;
        if (context.throughput_unresolved && !explained) {
            d.inconclusive = true;
            d.findings.push_back(
                {"inconclusive",
                 "inconclusive: the throughput verdict is not settled and no counted event or "
                 "sample tells them apart (more --trials, --sample or PMU --event counts would "
                 "tell more)",
                 false});
        } else if (context.throughput_equivalent && !explained) {
            // Equivalent throughput has no difference to explain.
        } else if (!explained && !counted && !sampled) {
            d.findings.push_back(
                {"unexplained",
                 "no measured evidence says why: add --sample for instruction shares or PMU "
                 "events (--event) for cache and exclusive-store counts",
                 false});
        } else if (!explained) {
            d.findings.push_back(
                {"unexplained",
                 fmt::format("the {} do not tell them apart: add {} for more evidence",
                             counted && sampled ? "counted events and samples"
                             : counted          ? "counted events"
                                                : "samples",
                             sampled ? "other PMU events (--event)"
                                     : "--sample for instruction shares or other PMU events "
                                       "(--event)"),
                 false});
        }
        out.push_back(std::move(d));
    }
    return out;
}

namespace {

// What the brief explanation numbers: evidence, and the findings that say how a lock behaves
// (queue spinning, writers' latency, the host's steal). The throughput verdict (the head line
// and the table say it), the closing "inconclusive"/"unexplained" line (the pair's one line
// says it), `--trials auto` (the table's notes say it) and counted figures that tell nothing
// apart are left to --verbose.
bool brief_finding(const Finding& f) {
    if (f.explains) return true;
    return f.rule != "throughput" && f.rule != "inconclusive" && f.rule != "unexplained" &&
           f.rule != "trials-auto" && f.rule != "counted_events";
}

// The pair's verdict in a few words: "0.63x slower [0.55, 0.70]", "inconclusive", "equivalent".
std::string verdict_head(const PairDiagnosis& d) {
    if (!d.throughput) return "no throughput verdict";
    const Effect& e = *d.throughput;
    switch (e.verdict) {
        case Verdict::faster:
        case Verdict::slower:
        case Verdict::equivalent:
            return fmt::format("{:.2f}x {}, interval {}", e.ratio, verdict_name(e.verdict),
                               interval_text(e));
        case Verdict::inconclusive:
            return fmt::format("{:.2f}x, inconclusive", e.ratio);
        default:
            return verdict_text(e);
    }
}

std::string full_explanation(const std::vector<PairDiagnosis>& diagnoses) {
    std::string out = "Explanation (from measured evidence only):\n";
    for (const auto& d : diagnoses) {
        out += fmt::format("  {} vs {}, {}:\n", d.other, d.baseline, threads_text(d.threads));
        for (std::size_t i = 0; i < d.findings.size(); ++i)
            out += fmt::format("    {}. {}\n", i + 1, d.findings[i].text);
    }
    return out;
}

// Each pair's conclusion once: a pair with evidence gets its verdict and numbered evidence;
// pairs with nothing but their verdict share one line per conclusion and remedy.
std::string brief_explanation(const std::vector<PairDiagnosis>& diagnoses) {
    std::string out = "Explanation (from measured evidence only):\n";
    std::vector<std::string> keys;
    std::map<std::string, std::vector<PairRef>> bare;
    // Differences nothing explains, by verdict and remedy: "ttas [0.68, 0.90], cas [0.67, 0.95]
    // vs tas at 1 thread".
    std::vector<std::string> unexplained_keys;
    std::map<std::string, std::vector<std::pair<const PairDiagnosis*, std::string>>> unexplained;
    for (const auto& d : diagnoses) {
        std::vector<const Finding*> kept;
        for (const auto& f : d.findings)
            if (brief_finding(f)) kept.push_back(&f);
        if (!kept.empty()) {
            out += fmt::format("  {} vs {}, {}: {}\n", d.other, d.baseline, threads_text(d.threads),
                               verdict_head(d));
            for (std::size_t i = 0; i < kept.size(); ++i)
                out += fmt::format("    {}. {}\n", i + 1, kept[i]->text);
            continue;
        }
        // Nothing but the verdict: the pair joins the others with the same conclusion.
        std::string key;
        const auto closing = std::find_if(d.findings.begin(), d.findings.end(), [](const auto& f) {
            return f.rule == "inconclusive" || f.rule == "unexplained";
        });
        if (d.inconclusive)
            key = d.sampled ? "inconclusive, nothing counted or sampled tells them apart; "
                              "settle the verdict first (more trials)"
                            : "inconclusive, nothing counted tells them apart; try --sample";
        else if (d.throughput && d.throughput->verdict == Verdict::equivalent)
            key = "equivalent: nothing to explain";
        else if (d.throughput && (d.throughput->verdict == Verdict::faster ||
                                  d.throughput->verdict == Verdict::slower))
            key = "";  // a difference with its own numbers: a line of its own below
        else
            key = d.throughput ? verdict_text(*d.throughput) : "no throughput verdict";
        if (key.empty()) {
            const bool sampled =
                closing != d.findings.end() && closing->text.find("--sample") == std::string::npos;
            const std::string group = fmt::format(
                "{}: nothing measured says why; {}", verdict_name(d.throughput->verdict),
                sampled ? "other PMU events (--event) may" : "try --sample");
            if (!unexplained.count(group)) unexplained_keys.push_back(group);
            unexplained[group].push_back({&d, interval_text(*d.throughput)});
            continue;
        }
        if (!bare.count(key)) keys.push_back(key);
        bare[key].push_back({d.other, d.baseline, d.threads});
    }
    for (const auto& key : unexplained_keys) {
        // Per thread count: "ttas [0.68, 0.90], cas [0.67, 0.95] vs tas at 1 thread".
        std::vector<unsigned> order;
        std::map<unsigned, std::vector<std::string>> named;
        std::map<unsigned, std::string> baseline;
        for (const auto& [d, interval] : unexplained[key]) {
            if (!named.count(d->threads)) order.push_back(d->threads);
            named[d->threads].push_back(d->other + " " + interval);
            baseline[d->threads] = d->baseline;
        }
        std::vector<std::string> groups;
        for (unsigned t : order)
            groups.push_back(fmt::format("{} vs {} at {}", fmt::join(named[t], ", "), baseline[t],
                                         threads_text(t)));
        out += fmt::format("  {}: {}\n", fmt::join(groups, "; "), key);
    }
    for (const auto& key : keys) out += fmt::format("  {}: {}\n", pairs_text(bare[key]), key);
    return out;
}

}  // namespace

std::string render_explanation(const std::vector<PairDiagnosis>& diagnoses, Detail detail) {
    if (diagnoses.empty()) return "";
    return detail == Detail::brief ? brief_explanation(diagnoses) : full_explanation(diagnoses);
}

}  // namespace lockprof::analysis
