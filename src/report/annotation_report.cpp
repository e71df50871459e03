#include "lockprof/report/annotation_report.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <span>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace lockprof::report {

// Functions printed whole up to this many instructions; longer ones show only the hot parts.
constexpr std::size_t kWholeFunctionLimit = 48;
constexpr std::size_t kContextLines = 3;

// One listing row: percent (blank when unsampled), the loop marker (`|` acquire loop, `:` rest
// of the inlined lock()), file address, instruction and the source line where it changes.
namespace listing_detail {

std::string listing_row(const attribution::AnnotatedInstruction& ai) {
    const char marker = ai.in_acquire_loop ? '|' : ai.in_lock ? ':' : ' ';
    std::string line =
        fmt::format("    {:>8}  {} {:>8x}  {}",
                    ai.weight > 0 ? fmt::format("{:.2f}", ai.share * 100) : std::string(), marker,
                    ai.instruction.address, ai.instruction.listing_text());
    if (!ai.source.empty()) {
        if (line.size() < 64) line.resize(64, ' ');
        line += "  " + ai.source;
    }
    return line + "\n";
}

}  // namespace listing_detail

using listing_detail::listing_row;

std::string render_annotation(const attribution::CellAnnotation& cell,
                              const measure::SamplingInfo& info, unsigned top_functions,
                              ListingDetail detail) {
    std::string out = fmt::format(
        "Annotation: {}, {} thread{} - {} samples ({} sampler, {}{}), {} lost\n", cell.lock,
        cell.threads, cell.threads == 1 ? "" : "s", cell.samples, info.sampler, info.event,
        info.frequency ? fmt::format(" at {} Hz", info.frequency)
                       : fmt::format(" every {}", info.period),
        cell.lost);
    if (cell.samples == 0) return out + "  no samples in this cell\n";
    out += fmt::format("  note: {}\n", info.precise_note);
    const bool listed =
        std::any_of(cell.functions.begin(), cell.functions.end(),
                    [](const attribution::HotFunction& f) { return !f.instructions.empty(); });
    if (!listed && !cell.missing_objdump.empty())
        out += fmt::format("  acquire loop: not marked without a disassembly ({} missing)\n",
                           fmt::join(cell.missing_objdump, ", "));
    else
        out += fmt::format(
            "  acquire loop: {:.1f}% of samples; whole acquire path (loop and inlined "
            "lock()): {:.1f}%\n",
            cell.acquire_loop_share * 100, cell.acquire_path_share * 100);
    if (const auto phases = attribution::describe_phases(cell); !phases.empty())
        out += fmt::format("  measured loop by phase (of all samples): {}\n", phases);
    for (std::size_t i = 0; i < cell.functions.size() && i < std::max(top_functions, 5u); ++i)
        out += fmt::format("  {:6.2f}%  {}  [{}]\n", cell.functions[i].share * 100,
                           cell.functions[i].short_name,
                           std::filesystem::path(cell.functions[i].module).filename().string());
    if (cell.unresolved_share > 0)
        out += fmt::format(
            "  {:6.2f}%  [no symbol]{}\n", cell.unresolved_share * 100,
            cell.unnamed_acquire_share > 0
                ? fmt::format(" ({:.2f}% in unnamed code that only the acquire path calls)",
                              cell.unnamed_acquire_share * 100)
                : "");
    const std::size_t shown = std::min<std::size_t>(cell.functions.size(), top_functions);
    if (detail == ListingDetail::full) {
        for (std::size_t rank = 0; rank < shown; ++rank)
            out += render_function_listing(cell.functions[rank], "acquire loop");
        return out;
    }
    return out + render_hottest_rows(
                     {cell.functions.begin(), cell.functions.begin() + static_cast<long>(shown)});
}

std::string render_hottest_rows(std::span<const attribution::HotFunction> functions) {
    std::string out;
    std::vector<
        std::pair<const attribution::HotFunction*, const attribution::AnnotatedInstruction*>>
        hottest;
    for (const auto& f : functions) {
        if (!f.error.empty())
            out += fmt::format("  {}: not disassembled: {}\n", f.short_name, f.error);
        for (const auto& i : f.instructions)
            if (i.weight > 0) hottest.emplace_back(&f, &i);
    }
    if (hottest.empty()) return out;
    std::stable_sort(hottest.begin(), hottest.end(), [](const auto& a, const auto& b) {
        return a.second->weight > b.second->weight;
    });
    if (hottest.size() > kHottestRows) hottest.resize(kHottestRows);
    out += fmt::format(
        "  hottest instructions and the acquire loop (`|`; `:` rest of the inlined lock()); "
        "more: --annotate-top N, --report, or lockprof annotate on --samples-out\n");
    for (const auto& f : functions) {
        const auto loop = std::count_if(f.instructions.begin(), f.instructions.end(),
                                        [](const auto& i) { return i.in_acquire_loop; });
        std::string rows;
        for (const auto& ai : f.instructions) {
            const bool hot = std::any_of(hottest.begin(), hottest.end(),
                                         [&](const auto& h) { return h.second == &ai; });
            if (!hot && !(ai.in_acquire_loop && loop <= kHottestLoop)) continue;
            rows += listing_row(ai);
        }
        if (!rows.empty())
            out += fmt::format("    {}:\n", f.short_name) +
                   attribution::no_line_information_note(f) + rows;
    }
    return out;
}

std::string render_function_listing(const attribution::HotFunction& f, std::string_view loop_name) {
    if (f.instructions.empty() && f.error.empty()) return "";
    std::string out = fmt::format("\n  {} ({:.1f}% of samples)\n", f.short_name, f.share * 100);
    if (!f.error.empty()) return out + fmt::format("    not disassembled: {}\n", f.error);
    const bool inlined_lock = std::any_of(f.instructions.begin(), f.instructions.end(),
                                          [](const auto& i) { return i.in_lock; });
    out += fmt::format("    `|` {} ({}){}\n", loop_name, f.loop_rule,
                       inlined_lock ? ", `:` rest of the inlined lock()" : "");
    out += attribution::no_line_information_note(f);
    out += "     Percent    Address  Instruction\n";
    const auto& insns = f.instructions;
    std::vector<bool> show(insns.size(), insns.size() <= kWholeFunctionLimit);
    for (std::size_t i = 0; i < insns.size(); ++i) {
        if (insns[i].in_acquire_loop) show[i] = true;
        if (insns[i].share >= kListingShare)
            for (std::size_t k = i >= kContextLines ? i - kContextLines : 0;
                 k < insns.size() && k <= i + kContextLines; ++k)
                show[k] = true;
    }
    bool gap = false;
    for (std::size_t i = 0; i < insns.size(); ++i) {
        if (!show[i]) {
            gap = true;
            continue;
        }
        if (gap) out += "                  ...\n";
        gap = false;
        const auto& ai = insns[i];
        out += listing_row(ai);
    }
    if (gap) out += "                  ...\n";
    return out;
}

std::string render_annotations(const workload::RunResult& run,
                               const attribution::RunAttribution& attribution,
                               unsigned top_functions, ListingDetail detail) {
    if (!run.sampling || top_functions == 0) return "";
    std::string out;
    for (const auto& w : attribution.warnings) out += fmt::format("warning: {}\n", w);
    for (const auto& n : attribution.notes) out += fmt::format("note: {}\n", n);
    // The short form shows one cell per lock: its largest thread count, the most contended.
    std::map<std::string, unsigned> largest;
    for (const auto& cell : attribution.cells)
        if (cell.samples > 0) largest[cell.lock] = std::max(largest[cell.lock], cell.threads);
    std::size_t left_out = 0;
    for (const auto& cell : attribution.cells) {
        if (detail == ListingDetail::hottest && largest.count(cell.lock) &&
            largest[cell.lock] != cell.threads) {
            ++left_out;
            continue;
        }
        // Two appends, not "\n" + ...: GCC 12 -O3 warns (-Wrestrict) falsely on that.
        out += '\n';
        out += render_annotation(cell, *run.sampling, top_functions, detail);
    }
    if (left_out)
        out += fmt::format(
            "\n{} more cell{} annotated (each lock is shown at its largest thread count): "
            "--annotate-top N prints every cell, and --report or `lockprof annotate` on "
            "--samples-out keeps them all\n",
            left_out, left_out == 1 ? "" : "s");
    return out;
}

}  // namespace lockprof::report
