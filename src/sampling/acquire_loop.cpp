#include "lockprof/sampling/acquire_loop.hpp"

#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace lockprof::sampling {

// Named, not anonymous: unity batches (LOCKPROF_UNITY_BUILD) share one anonymous namespace.
namespace acquire_loop_detail {

using Instructions = std::vector<AnnotatedInstruction>;
using Span = std::pair<std::size_t, std::size_t>;  // [target index, branch index]

std::optional<std::size_t> index_of(const Instructions& insns, std::uint64_t address) {
    for (std::size_t i = 0; i < insns.size(); ++i)
        if (insns[i].instruction.address == address) return i;
    return std::nullopt;
}

// Rule 1: every backward branch whose branch and target are both on the inlined lock() path.
std::vector<Span> lock_path_spans(const Instructions& insns) {
    std::vector<Span> spans;
    for (std::size_t j = 0; j < insns.size(); ++j) {
        const auto& insn = insns[j].instruction;
        if (!insns[j].in_lock || !insn.is_backward_branch()) continue;
        if (auto i = index_of(insns, *insn.branch_target); i && insns[*i].in_lock)
            spans.emplace_back(*i, j);
    }
    return spans;
}

// Rule 2, without DWARF inline info: the tightest loop around the hottest instruction.
std::optional<Span> tightest_span_around_hottest(const Instructions& insns) {
    std::size_t hot = 0;
    for (std::size_t i = 0; i < insns.size(); ++i)
        if (insns[i].weight > insns[hot].weight) hot = i;
    std::optional<Span> best;
    for (std::size_t j = 0; j < insns.size(); ++j) {
        const auto& insn = insns[j].instruction;
        if (!insn.is_backward_branch()) continue;
        auto i = index_of(insns, *insn.branch_target);
        if (!i || *i > hot || j < hot || j - *i > kMaxFallbackLoop) continue;
        if (!best || j - *i < best->second - best->first) best = Span(*i, j);
    }
    return best;
}

}  // namespace acquire_loop_detail

std::string mark_acquire_loop(HotFunction& function) {
    using namespace acquire_loop_detail;
    auto& insns = function.instructions;
    std::vector<Span> spans = lock_path_spans(insns);
    std::string rule = "inlined lock(), backward branch";
    if (spans.empty()) {
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

}  // namespace lockprof::sampling
