// The annotation listings as text: a sampled run's, as the run prints them and `lockprof annotate`
// reprints them from a saved result, and one function's listing, which `record` prints too.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "lockprof/attribution/run_attribution.hpp"
#include "lockprof/workload/results.hpp"

namespace lockprof::report {

// How much of each cell's listing to print: its `top_functions` hottest functions instruction
// by instruction (lockprof annotate, --annotate-top N), or only the hottest kHottestRows
// instructions of those functions and their acquire loops (render_hottest_rows: a run's
// terminal, where a 12-cell run stays readable; the HTML report and `lockprof annotate` have
// the full listings).
enum class ListingDetail { hottest, full };
inline constexpr std::size_t kHottestRows = 5;

// A listing row is shown for an instruction with at least this share of the samples (with
// context lines around it in the text listing) and for every instruction of the loop; the text
// listing and the HTML report's table decide by it.
inline constexpr double kListingShare = 0.005;

// The listing for one cell. `info` supplies the sampler and the skid note.
std::string render_annotation(const attribution::CellAnnotation& cell,
                              const measure::SamplingInfo& info, unsigned top_functions,
                              ListingDetail detail = ListingDetail::full);

// The kHottestRows hottest instructions of `functions` and their acquire loops (when at most
// kHottestLoop instructions long), per function in address order with the listing's markers
// and source lines; a line for each function that could not be disassembled.
inline constexpr long kHottestLoop = 16;
std::string render_hottest_rows(std::span<const attribution::HotFunction> functions);

// One function's listing: percent, address and instruction, the loop marked `|` (named
// `loop_name` in the legend: "acquire loop", "hottest loop"), hot parts of long functions only.
std::string render_function_listing(const attribution::HotFunction& function,
                                    std::string_view loop_name);

// Annotation listings of every sampled cell, after the attribution's warnings (top_functions
// 0: none), with each cell's `top_functions` hottest functions in `detail`. The short form
// (ListingDetail::hottest) shows each lock at its largest sampled thread count only, and says
// how many cells it left out.
std::string render_annotations(const workload::RunResult& run,
                               const attribution::RunAttribution& attribution,
                               unsigned top_functions, ListingDetail detail = ListingDetail::full);

}  // namespace lockprof::report
