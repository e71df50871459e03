// What a recording says: counter totals per process and overall, the hottest symbols across
// every recorded process, the hottest functions annotated instruction by instruction (objdump
// on whichever DSO holds them), and the spin-lock view: the samples in functions whose name
// matches a lock pattern, or whose DWARF inline chain holds such a function (a `static inline`
// lock, as perf --inline finds it), with their hottest instructions.
//
// Processes with identical file mappings (postgres backends forked from one postmaster) are
// resolved and annotated together.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "lockprof/export/folded.hpp"
#include "lockprof/record/recorder.hpp"
#include "lockprof/attribution/annotate.hpp"
#include "lockprof/symbols/resolver.hpp"

namespace lockprof::record {

inline constexpr const char* kDefaultLockPattern = "s_lock|spin|SpinLock|pthread_spin|lock_acquire";

struct AnalysisOptions {
    attribution::AnnotateOptions annotate;  // top_functions: functions annotated
    std::size_t top_symbols = 15;
    std::string lock_pattern = kDefaultLockPattern;  // ECMAScript regex, searched in names
};

struct CounterTotal {
    std::string event;
    std::optional<double> value;  // scaled for multiplexing; nullopt: never counted
    double per_second = 0;
};

// A function's samples; or, with an empty `symbol`, the samples in code of `module` that no
// symbol covers (short_name "[no symbol]"; "[unknown]" with no module either: JIT code,
// anonymous memory), so a stripped binary's share shows where it is.
struct SymbolShare {
    std::string symbol;      // demangled; "" for the unresolved code of `module`
    std::string short_name;  // for tables
    std::string module;      // path of the DSO
    std::uint64_t samples = 0;
    double weight = 0;
    double share = 0;  // of all samples' weight
    std::size_t processes = 0;
    // The spin view's locks inlined into another function (`symbol` the lock, `short_name`
    // "my_spin_lock (inlined into worker)"): the function it is inlined into, else "".
    std::string inlined_into;
};

struct SpinInstruction {
    std::string symbol;  // short name
    std::string module;
    std::uint64_t address = 0;  // file address in module
    std::string text;           // "pause", "lock cmpxchg %ecx,(%rdx)"
    double share_of_spin = 0;   // of the spin-lock functions' weight
    double share = 0;           // of all samples
};

struct SpinView {
    std::string pattern;
    // The functions `--spin` probed (named, or found from the known slow paths): in the view
    // whatever their names.
    std::vector<std::string> probed;
    double share = 0;  // of all samples
    std::vector<SymbolShare> symbols;
    std::vector<SpinInstruction> hot_instructions;  // hottest first, up to 5
    // When no samples match: the listed functions with neither line nor inline information
    // (built without -g), into which an inlined lock could hide unseen; short names.
    std::vector<std::string> without_debug_info;
};

// What the recording's instruments took of the targets' CPU time: the calibration's cost per
// probed call and per sample (recorder.hpp's InstrumentCalibration) times the calls the
// kernel counted and the samples taken, over the CPU time task_clock counted (or, without it,
// what cpu-clock samples weigh).
struct InstrumentShare {
    std::uint64_t probe_calls = 0;                 // --spin: entries the kernel counted
    std::uint64_t samples = 0;                     // --sample: kept and lost
    std::optional<double> probes_ns, sampling_ns;  // calls x cost, samples x cost
    std::optional<double> target_cpu_ns;
    std::string target_cpu_source;  // "task_clock", "cpu-clock samples"
    std::optional<double> share;    // (probes_ns + sampling_ns) / target_cpu_ns
};

// Above this share a note says how to lower what the instruments cost.
inline constexpr double kInstrumentShareNote = 0.05;

struct RecordAnalysis {
    std::vector<CounterTotal> totals;                              // event order
    std::map<std::size_t, std::vector<CounterTotal>> per_process;  // by process index
    std::uint64_t samples = 0;
    double total_weight = 0;
    double unresolved_share = 0;  // of all samples: the "[no symbol]"/"[unknown]" entries
    std::map<std::size_t, std::uint64_t> samples_per_process;  // by process index
    std::vector<SymbolShare> hot_symbols;                      // hottest first
    // With instructions, hottest first: the top annotate.top_functions, then any others that
    // match the lock pattern; lock_function[i] says whether annotated[i] matches it.
    std::vector<attribution::HotFunction> annotated;
    std::vector<bool> lock_function;
    SpinView spin;
    // The samples' time over the CPU time task_clock counted, when a clock (cpu-clock,
    // task-clock, the timer) was sampled and task_clock counted; nullopt otherwise. User-space
    // sampling does not see time in the kernel (system calls, faults): a warning says how much
    // went unseen when this is well below 1.
    std::optional<double> sampled_cpu_share;
    std::optional<SpinProfile> spin_calls;       // --spin: the probed slow paths per call site
    std::optional<InstrumentShare> instruments;  // with a calibration
    std::vector<std::string> warnings;
};

// The recorded processes grouped by identical executable mappings (forked backends share
// them), each group with its samples and one symbol resolver. Built once, because a resolver
// reads every module's ELF file; analyse() and folded_stacks() both use it. Refers to
// `result`, which must outlive it.
class Images {
  public:
    struct Image {
        std::vector<const measure::RawSample*> samples;
        bool has_modules = false;  // false: samples of processes never seen alive
        symbols::SymbolResolver resolver;
        // The mappings the resolver was built from (one process's; empty without modules).
        const std::vector<measure::MappedModule>* modules = nullptr;
    };
    explicit Images(const RecordResult& result);
    const std::vector<Image>& all() const { return images_; }

    // The resolver for the mappings process `pid` had when last read: an image's when it has
    // samples, otherwise built on first use, and shared by every process with those mappings
    // (record --spin names return addresses and stacks through it). nullptr for a process
    // never seen alive or without mappings.
    const symbols::SymbolResolver* resolver_of(pid_t pid) const;

  private:
    std::vector<Image> images_;
    // Each set of mappings a process had when last read (by signature): the mappings, and
    // the resolver of its image when it has samples, else one built on first use.
    struct Mappings {
        const std::vector<measure::MappedModule>* modules = nullptr;
        const symbols::SymbolResolver* resolver = nullptr;
        mutable std::unique_ptr<symbols::SymbolResolver> built;
    };
    std::map<std::string, Mappings> mappings_;
    std::map<pid_t, const Mappings*> mappings_of_;
};

// Throws UsageError for an invalid lock pattern.
std::regex lock_regex(const std::string& pattern);

RecordAnalysis analyse(const RecordResult& result, const Images& images,
                       const AnalysisOptions& options);
inline RecordAnalysis analyse(const RecordResult& result, const AnalysisOptions& options) {
    return analyse(result, Images(result), options);
}

// Folded stacks: root frame the process name ("postgres"), callers root first, leaf the
// sampled function (or, with instruction_leaf, "func+0x1c pause" for annotated functions).
exporting::FoldedStacks folded_stacks(const RecordResult& result, const Images& images,
                                      const RecordAnalysis& profile, bool instruction_leaf);

}  // namespace lockprof::record
