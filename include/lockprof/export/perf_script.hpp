// Folding `perf script` text output into folded stacks (`lockprof fold`), so users' own perf
// recordings, with or without callchains (`perf record -g`), render as lockprof flamegraphs.
// Follows stackcollapse-perf.pl's conventions: process name as root frame, symbol offsets
// stripped, "[unknown]" symbols named after their module, kernel frames suffixed "_[k]".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <set>
#include <string_view>
#include <unordered_map>
#include <string>
#include <vector>

#include "lockprof/export/folded.hpp"

namespace lockprof::exporting {

struct PerfScriptOptions {
    enum class Root {
        comm,      // "postgres;main;..." (stackcollapse-perf's default)
        comm_pid,  // "postgres-1234;main;...": the id exactly as perf printed it (tid or pid/tid)
        none,      // "main;...": no process frame
    };
    Root root = Root::comm;
    // Weight each sample by its period (e.g. event counts when sampling every N events)
    // instead of 1. Samples without a period field weigh 1.
    bool weight_by_period = false;
    // Which event's samples to fold: "" = the first event seen (stackcollapse-perf's default,
    // mixing events would add incomparable units), "all" = every event, or an event name as
    // perf prints it without the trailing ':' and modifiers ("cpu-clock", "cycles").
    std::string event;
    // Add "_[k]" to kernel frames (module [kernel.*] / [vmlinux] or a kernel-half address).
    bool annotate_kernel = true;
    // Throw UsageError at the first unrecognised line instead of skipping it.
    bool strict = false;
};

struct PerfScriptReport {
    std::size_t lines = 0;
    std::size_t samples = 0;                // sample headers seen
    std::size_t folded = 0;                 // samples that went into the result
    std::size_t other_event = 0;            // samples left out because of their event
    std::size_t skipped = 0;                // unrecognised lines left out
    std::string event;                      // the event folded ("" if none, "all" for all)
    std::vector<std::string> other_events;  // names of the events left out, sorted
    std::vector<std::string> problems;      // "file:line: why", capped at kMaxReportedProblems
};

// perf's kernel/user split of a frame by the module perf prints for it: 1 kernel
// ("[kernel.kallsyms]", "[vmlinux]", "[guest.kernel...]"), 0 user (a path, "[vsyscall]"), -1
// when the address decides (kernel modules print as "[name]", and "[unknown]").
int kernel_by_module(std::string_view module);
// The kernel half of the 64-bit address space (x86_64 and arm64 alike).
inline bool is_kernel_address(std::uint64_t address) {
    return address >= 0xffff000000000000ull;
}

// Folds perf samples one at a time, each a header (process name, id, event, period) and its
// frames leaf first as perf script prints them ("SYMBOL (MODULE)"), under `lockprof fold`'s
// options: the root frame, the event chosen, the weight, offsets gone, "[unknown]" symbols
// named after their module, kernel frames marked _[k]. fold_perf_script() feeds it perf
// script's text, the perf.data reader (perfdata/) the records it decodes, so both fold alike.
class PerfSampleFolder {
  public:
    PerfSampleFolder(const std::string& filename, const PerfScriptOptions& options,
                     PerfScriptReport& report);
    ~PerfSampleFolder();
    PerfSampleFolder(const PerfSampleFolder&) = delete;
    PerfSampleFolder& operator=(const PerfSampleFolder&) = delete;

    bool in_sample() const { return in_sample_; }
    // A new sample (the previous one ends): kept when its event is the one chosen (the first
    // seen, unless the options name one, or "all"). `id` is what --root comm-pid appends.
    void start_sample(std::string_view comm, std::string_view id, std::string_view event,
                      std::uint64_t period);
    // The next frame, leaf first; `symbol` without its offset ("" or "[unknown]" when none).
    void add_frame(std::string_view symbol, std::string_view module, bool kernel);
    // Ends the current sample, counting its stack root first.
    void finish_sample();
    // Input that is not what it should be ("FILE:WHERE: why"): UsageError with
    // `strict_hint` appended under --strict, else counted in report.skipped and noted.
    void problem(std::size_t where, const std::string& why, std::string_view strict_hint);
    FoldedStacks result();

  private:
    struct StringHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const {
            return std::hash<std::string_view>{}(s);
        }
    };
    const std::string& filename_;
    const PerfScriptOptions& options_;
    PerfScriptReport& report_;
    std::unordered_map<std::string, std::uint64_t, StringHash, std::equal_to<>> counts_;
    std::set<std::string, std::less<>> others_;
    std::string chosen_;
    bool in_sample_ = false, use_sample_ = false;
    std::uint64_t weight_ = 1;
    std::uint64_t total_ = 0;  // of the samples folded so far
    std::string root_;
    std::string frame_text_;               // leaf-first frame names, back to back
    std::vector<std::size_t> frame_ends_;  // end offset of each name in frame_text_
    std::string stack_;
};

// Folds `perf script` text. Unrecognised lines are skipped and reported (options.strict: the
// first throws UsageError); input with unrecognised lines and not one sample throws UsageError.
FoldedStacks fold_perf_script(std::istream& in, const std::string& filename,
                              const PerfScriptOptions& options, PerfScriptReport& report);

}  // namespace lockprof::exporting
