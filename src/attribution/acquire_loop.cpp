#include "lockprof/attribution/acquire_loop.hpp"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace lockprof::attribution {

// Named, not anonymous: unity batches (LOCKPROF_UNITY_BUILD) share one anonymous namespace.
namespace acquire_loop_detail {

using Instructions = std::vector<AnnotatedInstruction>;
using Span = std::pair<std::size_t, std::size_t>;  // [target index, branch index]

std::optional<std::size_t> index_of(const Instructions& insns, std::uint64_t address) {
    for (std::size_t i = 0; i < insns.size(); ++i)
        if (insns[i].instruction.address == address) return i;
    return std::nullopt;
}

// An instruction of the measured loop's other phases (critical section, release, parallel
// work, harness) between the span's target and its branch: the span holds the whole measured
// loop, so it is no acquire loop.
bool spans_other_phases(const Instructions& insns, Span span) {
    return std::any_of(insns.begin() + static_cast<std::ptrdiff_t>(span.first),
                       insns.begin() + static_cast<std::ptrdiff_t>(span.second) + 1,
                       [](const AnnotatedInstruction& i) {
                           return i.phase != LoopPhase::none && i.phase != LoopPhase::acquire;
                       });
}

// Rule 1: every backward branch whose branch and target are both on the inlined lock() path,
// and that does not hold the measured loop's other phases. A compiler may move a cold block of
// lock() (a sanitizer's check, an unlikely branch) past the end of the loop, and that block's
// branch back into lock() spans the critical section: it is left out, not the whole rule.
std::vector<Span> lock_path_spans(const Instructions& insns) {
    std::vector<Span> spans;
    for (std::size_t j = 0; j < insns.size(); ++j) {
        const auto& insn = insns[j].instruction;
        if (!insns[j].in_lock || !insn.is_backward_branch()) continue;
        if (auto i = index_of(insns, *insn.branch_target);
            i && insns[*i].in_lock && !spans_other_phases(insns, Span(*i, j)))
            spans.emplace_back(*i, j);
    }
    return spans;
}

// Every backward branch whose target is one of the function's instructions.
std::vector<Span> backward_spans(const Instructions& insns) {
    std::vector<Span> spans;
    for (std::size_t j = 0; j < insns.size(); ++j) {
        const auto& insn = insns[j].instruction;
        if (!insn.is_backward_branch()) continue;
        if (auto i = index_of(insns, *insn.branch_target)) spans.emplace_back(*i, j);
    }
    return spans;
}

// arch::burn()'s loop, the busy work of the measured loop's critical section and parallel
// work: a decrement by one and a branch back to it (x86 `sub $0x1,%reg; jne`, aarch64
// `sub xN, xN, #0x1; cbnz`), touching no memory.
bool is_work_loop(const Instructions& insns, Span span) {
    const auto& decrement = insns[span.first].instruction;
    return span.second == span.first + 1 && decrement.mnemonic == "sub" &&
           (decrement.operands.starts_with("$0x1,%") || decrement.operands.ends_with(", #0x1"));
}

// Rule 2, without DWARF inline info: the tightest loop around the hottest instruction.
std::optional<Span> tightest_span_around_hottest(const Instructions& insns) {
    std::size_t hot = 0;
    for (std::size_t i = 0; i < insns.size(); ++i)
        if (insns[i].weight > insns[hot].weight) hot = i;
    std::optional<Span> best;
    for (const auto& [i, j] : backward_spans(insns)) {
        if (i > hot || j < hot || j - i > kMaxFallbackLoop) continue;
        if (!best || j - i < best->second - best->first) best = Span(i, j);
    }
    return best;
}

// Rule 2 in lockprof's measured loop without line information: the loop with the most samples
// (the tighter of equals) that is neither the busy work nor holds it, as the measured loop's
// own back edge does. Not the loop around the hottest instruction: an uncontended first
// attempt before the retry loop (cas's `lock cmpxchg`) is often hotter than the loop itself.
std::optional<Span> hottest_span_outside_busy_work(const Instructions& insns) {
    const std::vector<Span> spans = backward_spans(insns);
    std::vector<Span> work;
    for (const auto& span : spans)
        if (is_work_loop(insns, span)) work.push_back(span);
    auto holds_work = [&](Span span) {
        return std::any_of(work.begin(), work.end(), [&](Span w) {
            return span.first <= w.first && w.second <= span.second;
        });
    };
    std::optional<Span> best;
    double best_weight = 0;
    for (const auto& [i, j] : spans) {
        if (j - i > kMaxFallbackLoop || holds_work(Span(i, j))) continue;
        double weight = 0;
        for (std::size_t k = i; k <= j; ++k) weight += insns[k].weight;
        if (weight > best_weight ||
            (best && weight == best_weight && j - i < best->second - best->first)) {
            best = Span(i, j);
            best_weight = weight;
        }
    }
    return best;
}

}  // namespace acquire_loop_detail

bool measured_loop_without_lines(const HotFunction& function) {
    const auto& insns = function.instructions;
    return is_measured_loop(function.name) && !insns.empty() &&
           std::none_of(insns.begin(), insns.end(),
                        [](const auto& i) { return !i.source.empty(); });
}

std::string mark_acquire_loop(HotFunction& function) {
    using namespace acquire_loop_detail;
    auto& insns = function.instructions;
    std::vector<Span> spans = lock_path_spans(insns);
    std::string rule = "inlined lock(), backward branch";
    const bool loop_without_lines = measured_loop_without_lines(function);
    if (spans.empty() && loop_without_lines) {
        if (auto span = hottest_span_outside_busy_work(insns)) spans.push_back(*span);
        rule = "no inline info: the measured loop's hottest backward branch outside its busy work";
        if (spans.empty())
            return "no inline info, and no samples in a loop but the measured loop itself and "
                   "its busy work: acquire loop not marked";
    } else if (spans.empty()) {
        if (auto span = tightest_span_around_hottest(insns)) spans.push_back(*span);
        rule = "no inline info: tightest backward branch around the hottest instruction";
    }
    if (spans.empty()) return "no backward branch found: acquire loop not marked";
    std::vector<std::string> ranges;
    for (auto [i, j] : spans) {
        for (std::size_t k = i; k <= j; ++k) insns[k].in_acquire_loop = true;
        ranges.push_back(
            fmt::format("{:x}..{:x}", insns[i].instruction.address, insns[j].instruction.address));
    }
    return fmt::format("{} {}", rule, fmt::join(ranges, ", "));
}

}  // namespace lockprof::attribution
