#include "lockprof/analysis/explain.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

#include <fmt/format.h>

namespace lockprof::analysis {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

std::string percent(double share) {
    return fmt::format("{:.0f}%", share * 100);
}

std::string rate(double acquires_per_second) {
    return fmt::format("{:.3g}", acquires_per_second / 1e6);
}

// How each algorithm's read-modify-write reads in a sentence; the rest say it generically.
std::string rmw_noun(std::string_view algorithm) {
    static const std::map<std::string_view, std::string_view> kNouns = {
        {"tas", "atomic exchanges"},       {"ttas", "atomic exchanges"},
        {"pg_slock", "atomic exchanges"},  {"cas", "compare-and-swaps"},
        {"ttas_cas", "compare-and-swaps"}, {"ticket", "fetch-and-adds"},
        {"mcs", "atomic swaps"},           {"clh", "atomic swaps"}};
    const auto it = kNouns.find(algorithm);
    return std::string(it == kNouns.end() ? "atomic read-modify-writes" : it->second);
}

bool is_exclusive_event(std::string_view name) {
    std::string lower(name);
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower.find("stxr") != std::string::npos || lower.find("strex") != std::string::npos;
}

const Spread* exclusive_failures(const CellEvidence& cell) {
    for (const auto& [name, spread] : cell.events_per_acquire)
        if (is_exclusive_event(name) && !spread.values.empty()) return &spread;
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
        if (classify_instruction(m) == c) return true;
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
        if (classify_instruction(i.mnemonic) == InstructionClass::lse_atomic &&
            (!best || i.share > best->share))
            best = &i;
    if (best) return best->mnemonic;
    for (const auto& m : cell.acquire_loop_mnemonics)
        if (classify_instruction(m) == InstructionClass::lse_atomic) return m;
    return "";
}

bool executes_lse(const CellEvidence& cell, const ExplainThresholds& t) {
    if (cell.flavour == "lse") return true;
    if (cell.samples < t.min_samples) return false;
    bool lse = false, exclusive = false;
    for (const auto& i : cell.instructions) {
        const auto c = classify_instruction(i.mnemonic);
        lse |= c == InstructionClass::lse_atomic;
        exclusive |=
            c == InstructionClass::store_exclusive || c == InstructionClass::load_exclusive;
    }
    return lse && !exclusive;
}

struct PairContext {
    const CellEvidence& a;  // baseline
    const CellEvidence& b;
    const ExplainThresholds& t;
    bool throughput_unresolved = false;  // within noise or a single trial
};

using RuleFunction = std::function<std::vector<std::string>(PairContext&)>;

struct Rule {
    std::string_view id;
    std::string_view needs;  // documentation: which evidence it reads
    RuleFunction apply;
};

std::vector<std::string> throughput_rule(PairContext& p) {
    const auto& a = p.a.acquires_per_second;
    const auto& b = p.b.acquires_per_second;
    if (a.values.empty() || b.values.empty() || a.median <= 0) return {};
    if (a.values.size() < 2 || b.values.size() < 2) {
        p.throughput_unresolved = true;
        return {
            fmt::format("one trial only ({} {} vs {} {} M acquires/s): no noise estimate, "
                        "so the difference may be noise; rerun with --trials=3 or more",
                        p.b.lock, rate(b.median), p.a.lock, rate(a.median))};
    }
    if (ranges_overlap(a, b)) {
        p.throughput_unresolved = true;
        return {
            fmt::format("difference within noise: {} {}-{} vs {} {}-{} M acquires/s (trial "
                        "ranges overlap)",
                        p.b.lock, rate(b.min), rate(b.max), p.a.lock, rate(a.min), rate(a.max))};
    }
    const double ratio = b.median / a.median;
    const double factor = ratio >= 1 ? ratio : 1 / ratio;
    return {
        fmt::format("{} is {}x {} than {} at {} threads ({} vs {} M acquires/s, medians of "
                    "{} trials; the trial ranges do not overlap)",
                    p.b.lock,
                    // 1.03x needs two decimals to differ from 1; 1.9x does not.
                    factor < 1.095 ? fmt::format("{:.2f}", factor) : fmt::format("{:.1f}", factor),
                    ratio >= 1 ? "faster" : "slower", p.a.lock, p.b.threads, rate(b.median),
                    rate(a.median), std::min(a.values.size(), b.values.size()))};
}

std::vector<std::string> rmw_rule(PairContext& p) {
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

std::string hot_instruction_claim(const CellEvidence& cell, const ExplainThresholds& t) {
    const InstructionShare* top = hottest(cell);
    if (!top || top->share < t.dominant_share) return "";
    const auto c = classify_instruction(top->mnemonic);
    std::string text;
    if (c == InstructionClass::branch && loop_has(cell, InstructionClass::load_exclusive))
        text = fmt::format("{}: {} of samples on the branch after the load-exclusive ({})",
                           cell.lock, percent(top->share), top->mnemonic);
    else if (c == InstructionClass::other || c == InstructionClass::branch)
        text = fmt::format("{}: {} of samples on {}{}", cell.lock, percent(top->share),
                           top->mnemonic, top->in_acquire_loop ? " in its acquire loop" : "");
    else
        text = fmt::format("{}: {} of samples on {} ({})", cell.lock, percent(top->share),
                           class_description(c), top->mnemonic);
    const auto previous = classify_instruction(top->previous_mnemonic);
    if (!cell.precise && !is_costly(c) && is_costly(previous))
        text += fmt::format(", right after {} ({}): with skid the cost is most likely there",
                            class_description(previous), top->previous_mnemonic);
    if (const Spread* fails = exclusive_failures(cell)) {
        const double v = fails->median;
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

std::vector<std::string> hot_instruction_rule(PairContext& p) {
    std::vector<std::string> out;
    for (const CellEvidence* cell : {&p.a, &p.b}) {
        if (cell->samples == 0) continue;
        if (cell->samples < p.t.min_samples) {
            out.push_back(fmt::format(
                "{}: only {} samples (at least {} needed for instruction shares): inconclusive; "
                "run longer or raise --sample-freq",
                cell->lock, cell->samples, p.t.min_samples));
            continue;
        }
        if (auto claim = hot_instruction_claim(*cell, p.t); !claim.empty())
            out.push_back(std::move(claim));
    }
    return out;
}

std::vector<std::string> exclusive_failure_rule(PairContext& p) {
    // With samples the hot-instruction rule already quotes these.
    if (p.a.samples >= p.t.min_samples || p.b.samples >= p.t.min_samples) return {};
    const Spread* fa = exclusive_failures(p.a);
    const Spread* fb = exclusive_failures(p.b);
    if (!fa || !fb || executes_lse(p.a, p.t) || executes_lse(p.b, p.t)) return {};
    const CellEvidence* hi = &p.a;
    const CellEvidence* lo = &p.b;
    double h = fa->median, l = fb->median;
    if (l > h) std::swap(hi, lo), std::swap(h, l);
    if (h < 0.5 || (l > 0 && h / l < p.t.exclusive_fail_ratio)) return {};
    return {
        fmt::format("{} fails its store-exclusive {} times per acquire, {} {}: each failed "
                    "attempt has fought for the lock's cache line",
                    hi->lock, format_figure(h), lo->lock, format_figure(l))};
}

std::vector<std::string> lse_rule(PairContext& p) {
    const bool a = executes_lse(p.a, p.t), b = executes_lse(p.b, p.t);
    if (!a && !b) return {};
    const bool stxr_asked = exclusive_failures(p.a) || exclusive_failures(p.b);
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

const std::vector<Rule>& rules() {
    static const std::vector<Rule> all = {
        {"throughput", "acquires/s per trial", throughput_rule},
        {"rmw_per_acquire", "AttemptStats rmw_attempts and spin_iterations", rmw_rule},
        {"hot_instruction", "samples with instruction annotation, stxr events",
         hot_instruction_rule},
        {"exclusive_failures", "stxr_fail events without samples", exclusive_failure_rule},
        {"lse", "flavour, sampled LSE atomics, stxr events", lse_rule},
    };
    return all;
}

}  // namespace

InstructionClass classify_instruction(std::string_view m) {
    if (m.empty()) return InstructionClass::other;
    // aarch64 exclusives: ldxr ldaxr ldxrb ldxp... / stxr stlxr stxrb stlxp...
    if ((starts_with(m, "ldxr") || starts_with(m, "ldaxr") || starts_with(m, "ldxp") ||
         starts_with(m, "ldaxp")))
        return InstructionClass::load_exclusive;
    if ((starts_with(m, "stxr") || starts_with(m, "stlxr") || starts_with(m, "stxp") ||
         starts_with(m, "stlxp")))
        return InstructionClass::store_exclusive;
    static constexpr std::string_view kLse[] = {"swp",   "cas",    "ldadd",  "ldclr",  "ldeor",
                                                "ldset", "ldsmax", "ldsmin", "ldumax", "ldumin",
                                                "stadd", "stset",  "stclr",  "steor"};
    for (auto prefix : kLse)
        if (starts_with(m, prefix)) return InstructionClass::lse_atomic;
    if (starts_with(m, "lock ") || starts_with(m, "xchg")) return InstructionClass::locked_rmw;
    if (m == "pause" || m == "yield" || m == "isb" || m == "wfe" || starts_with(m, "isb"))
        return InstructionClass::delay;
    // x86 jumps; aarch64 b, b.cond, cbz/cbnz, tbz/tbnz.
    if ((m[0] == 'j') || m == "b" || starts_with(m, "b.") || starts_with(m, "cbz") ||
        starts_with(m, "cbnz") || starts_with(m, "tbz") || starts_with(m, "tbnz"))
        return InstructionClass::branch;
    return InstructionClass::other;
}

std::string_view class_description(InstructionClass c) {
    switch (c) {
        case InstructionClass::store_exclusive:
            return "the store-exclusive";
        case InstructionClass::load_exclusive:
            return "the load-exclusive";
        case InstructionClass::lse_atomic:
            return "the LSE atomic";
        case InstructionClass::locked_rmw:
            return "the locked read-modify-write";
        case InstructionClass::delay:
            return "the spin-delay instruction";
        case InstructionClass::branch:
            return "the branch";
        case InstructionClass::other:
            return "an ordinary instruction";
    }
    return "";
}

std::string format_figure(double v) {
    if (v == 0) return "0";
    if (v >= 9.95) return fmt::format("{:.0f}", v);
    if (v >= 0.095) return fmt::format("{:.1f}", v);
    return fmt::format("{:.2g}", v);
}

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
        e.rmw_per_acquire = s.rmw_per_acquire;
        e.spins_per_acquire = s.spins_per_acquire;
        for (const auto& event : s.events)
            if (event.counted) e.events_per_acquire.emplace_back(event.event, event.per_acquire);
        out.push_back(std::move(e));
    }
    return out;
}

std::vector<PairDiagnosis> explain(const std::vector<CellEvidence>& cells,
                                   const ExplainThresholds& thresholds) {
    // The first cell at each thread count is the baseline, as in the table's `vs first`.
    std::map<unsigned, const CellEvidence*> baseline;
    for (const auto& cell : cells) baseline.try_emplace(cell.threads, &cell);
    std::vector<PairDiagnosis> out;
    for (const auto& cell : cells) {
        const CellEvidence* base = baseline[cell.threads];
        if (base == &cell) continue;
        PairContext context{*base, cell, thresholds};
        PairDiagnosis d;
        d.baseline = base->lock;
        d.other = cell.lock;
        d.threads = cell.threads;
        for (const auto& rule : rules())
            for (auto& text : rule.apply(context))
                d.findings.push_back({std::string(rule.id), std::move(text)});
        const bool explained = std::any_of(d.findings.begin(), d.findings.end(), [](const auto& f) {
            return f.rule != "throughput" && f.text.find("inconclusive") == std::string::npos;
        });
        if (context.throughput_unresolved && !explained) {
            d.inconclusive = true;
            d.findings.push_back(
                {"inconclusive",
                 "inconclusive: no measured difference between them that the evidence explains "
                 "(more --trials, --sample or PMU --event counts would tell more)"});
        } else if (!explained) {
            d.findings.push_back(
                {"unexplained",
                 "no measured evidence says why: add --sample for instruction shares or PMU "
                 "events (--event) for cache and exclusive-store counts"});
        }
        out.push_back(std::move(d));
    }
    return out;
}

std::string render_explanation(const std::vector<PairDiagnosis>& diagnoses) {
    if (diagnoses.empty()) return "";
    std::string out = "Explanation (from measured evidence only):\n";
    for (const auto& d : diagnoses) {
        out += fmt::format("  {} vs {}, {} thread{}:\n", d.other, d.baseline, d.threads,
                           d.threads == 1 ? "" : "s");
        for (std::size_t i = 0; i < d.findings.size(); ++i)
            out += fmt::format("    {}. {}\n", i + 1, d.findings[i].text);
    }
    return out;
}

}  // namespace lockprof::analysis
