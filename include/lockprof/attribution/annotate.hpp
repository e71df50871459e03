// Instruction-level attribution of a cell's samples, perf-annotate style: the hottest
// functions, each instruction with its share of the cell's samples, the acquire loop marked.
//
// The acquire loop is marked by the heuristic in acquire_loop.hpp (docs/sampling.md): with
// DWARF, the backward branches on an inlined lock()/try_lock(); without, the tightest
// backward-branch span around the hottest instruction.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockprof/attribution/phases.hpp"
#include "lockprof/symbols/disassembler.hpp"
#include "lockprof/symbols/resolver.hpp"
#include "lockprof/measure/data.hpp"

namespace lockprof::attribution {

struct AnnotateOptions {
    std::string objdump;               // "" picks per binary
    unsigned top_functions = 3;        // functions annotated per cell
    double min_function_share = 0.01;  // functions below this share are not disassembled
    // Functions annotated whatever their rank (record's spin-lock view: every s_lock), by
    // demangled name; empty: none.
    std::function<bool(const std::string&)> always_annotate;
};

struct AnnotatedInstruction {
    symbols::Instruction instruction;  // file address
    std::uint64_t runtime_address = 0;
    double weight = 0;                  // sum of sample weights on it
    double share = 0;                   // of the cell's total weight
    bool in_lock = false;               // inside an inlined lock()/try_lock() (DWARF)
    bool in_acquire_loop = false;       // inside the acquire loop (acquire_loop.hpp)
    LoopPhase phase = LoopPhase::none;  // where in lockprof's measured loop (phases.hpp)
    std::string source;                 // "tas.hpp:29" when the line changes, else ""
};

struct HotFunction {
    std::string name;        // demangled
    std::string short_name;  // for headings
    std::string module;
    double weight = 0;
    double share = 0;
    std::vector<AnnotatedInstruction> instructions;  // empty when disassembly failed
    std::string loop_rule;  // which heuristic marked the loop, with its span
    std::string error;      // why it could not be disassembled, "" otherwise
};

struct CellAnnotation {
    std::string lock;
    std::string flavour;
    unsigned threads = 0;
    std::uint64_t samples = 0;
    std::uint64_t lost = 0;
    double total_weight = 0;
    double acquire_loop_share = 0;  // of all the cell's samples, over its annotated functions
    // Acquire loop plus the rest of the inlined lock() (its fast path): all of acquiring. Both
    // include the functions called only from them (an outline-atomics helper's samples).
    double acquire_path_share = 0;
    // Each loop phase's share of all the cell's samples (phases.hpp), in the loop's order, over
    // the annotated measured loops; empty when no annotated function is one. Without line and
    // inline information only the acquire loop and the rest of the loop.
    std::vector<std::pair<LoopPhase, double>> phase_shares;
    // An annotated measured loop had no line information (a build without -g): its phases are
    // only the acquire loop and the rest of the loop (LoopPhase::rest_of_loop).
    bool phases_without_lines = false;
    double unresolved_share = 0;  // samples no symbol covers
    // Of those, the ones in unnamed code that only the acquire path calls (a stripped libc's
    // outline-atomics helper): counted in the acquire path.
    double unnamed_acquire_share = 0;
    std::vector<HotFunction> functions;  // hottest first, all resolved functions
    // The objdump programs a listing needed that cannot be run here (no binutils): those
    // functions have neither instructions nor an error, and the acquire loop is not marked.
    std::vector<std::string> missing_objdump;
};

// "acquire loop 83.1%, critical section 5.0%, ...": the phases with samples, "" for none.
std::string describe_phases(const CellAnnotation& cell);

// The one line said once when `objdump` cannot be run here: what is lost (listings, the acquire
// loop), what is still shown, and how to annotate on another machine. `record`: for `lockprof
// record`, which keeps no samples to annotate later.
std::string missing_objdump_warning(const std::string& objdump, bool record = false);

// The one line said once when an annotated measured loop had no line information
// (CellAnnotation::phases_without_lines): which phases remain, and what -g adds.
std::string phases_without_lines_note();

// Annotates sets of samples resolved against one resolver; disassembly is shared between
// calls (cells, or processes of one program, that share functions disassemble them once).
class Annotator {
  public:
    Annotator(const symbols::SymbolResolver& resolver, AnnotateOptions options);
    ~Annotator();
    Annotator(const Annotator&) = delete;
    Annotator& operator=(const Annotator&) = delete;

    // The samples' functions, hottest first, the top ones (and always_annotate's) with their
    // instructions. lock, flavour and threads are left for the caller to name.
    CellAnnotation annotate(const std::vector<const measure::RawSample*>& samples,
                            std::uint64_t lost = 0);

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// A line for a listed function none of whose instructions has a source line (a build without
// -g): what that costs and the remedy; "" otherwise.
std::string no_line_information_note(const HotFunction& f);

}  // namespace lockprof::attribution
