#include "lockprof/attribution/annotate.hpp"

#include "lockprof/attribution/acquire_loop.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <span>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"

namespace lockprof::attribution {

// File-internal, but in a named namespace: Annotator::Impl holds a CodeCache, and GCC warns
// (-Wsubobject-linkage) when such a type is anonymous and this file is compiled inside a unity
// batch (CMakeLists.txt, LOCKPROF_UNITY_BUILD).
namespace annotate_detail {

struct FunctionKey {
    std::string module;
    std::uint64_t start;
    bool operator<(const FunctionKey& o) const {
        return std::tie(module, start) < std::tie(o.module, o.start);
    }
};

// Disassembly and loop marking depend only on the code, so cells sharing a function (tas at
// 1, 2 and 4 threads) share it.
struct CodeCache {
    struct Code {
        std::vector<symbols::Instruction> instructions;
        std::vector<bool> in_lock;
        std::vector<LoopPhase> phase;  // none outside measured loops
        std::vector<std::string> source;
        std::string error;
        std::string missing_objdump;  // the objdump it needs cannot be run here
    };
    std::map<FunctionKey, Code> functions;
};

// Where annotated code calls one function from (annotate(): a callee of the acquire path only).
struct CallSites {
    bool all_acquire_path = true;    // every call site is in the acquire loop or lock()
    bool all_acquire_loop = true;    // every call site is in the acquire loop
    std::optional<LoopPhase> phase;  // the call sites' phase, when they all share one
};

// One direct call in an annotated function, and where it sits.
struct CallRecord {
    std::size_t caller = 0;               // index into CellAnnotation::functions
    std::string callee;                   // callee_name(); "" for a call into a symbol's middle
    std::optional<std::uint64_t> target;  // runtime address it reaches
    bool in_path = false, in_loop = false;
    LoopPhase phase = LoopPhase::none;
};

}  // namespace annotate_detail

using annotate_detail::CallRecord;
using annotate_detail::CallSites;
using annotate_detail::CodeCache;
using annotate_detail::FunctionKey;

namespace {

// Code without a symbol that a call reaches (libc's outline-atomics helpers, local symbols
// stripped) is taken to span at most this many bytes from the call's target.
constexpr std::uint64_t kUnnamedCalleeSpan = 256;

// A loop the heuristic marked that holds the critical section or the loop's harness is the
// measured loop itself, not an acquire loop: the lock spins in a function it calls
// (pthread-spin's pthread_spin_lock in libc), which is marked in its own listing. Unmarks it.
void unmark_measured_loop(HotFunction& f) {
    const bool spans_other_phases =
        std::any_of(f.instructions.begin(), f.instructions.end(), [](const auto& i) {
            return i.in_acquire_loop && i.phase != LoopPhase::none && i.phase != LoopPhase::acquire;
        });
    if (!spans_other_phases) return;
    for (auto& i : f.instructions) i.in_acquire_loop = false;
    f.loop_rule =
        "no acquire loop here: the only loop is the measured loop itself (the lock "
        "spins in a function it calls)";
}

// A symbol's name without its version or PLT suffix: "pthread_spin_lock@@GLIBC_2.34" and
// "pthread_spin_lock@plt" are both "pthread_spin_lock".
std::string symbol_base(std::string name) {
    if (const auto at = name.find('@'); at != std::string::npos && at > 0) name.resize(at);
    return name;
}

// The function a direct call reaches, as the symbol table names it (demangled): objdump's
// "<__aarch64_cas4_acq>" or "<pthread_mutex_trylock@plt>". "" for "<symbol+0x240>": objdump
// names the nearest symbol before the target, and a call into its middle reaches code no
// symbol names (glibc's outline-atomics helpers in a stripped libc.so.6), not that symbol.
std::string callee_name(const symbols::Instruction& call) {
    std::string name = call.reference;
    if (name.size() >= 2 && name.front() == '<' && name.back() == '>')
        name = name.substr(1, name.size() - 2);
    if (name.find('+') != std::string::npos) return "";
    return symbol_base(symbols::demangle(name));
}

void note_call_site(CallSites& sites, bool first, bool in_path, bool in_loop, LoopPhase phase) {
    sites.all_acquire_path = (first || sites.all_acquire_path) && in_path;
    sites.all_acquire_loop = (first || sites.all_acquire_loop) && in_loop;
    if (first)
        sites.phase = phase == LoopPhase::none ? std::nullopt : std::optional(phase);
    else if (sites.phase != phase)
        sites.phase.reset();
}

const CodeCache::Code& code_for(CodeCache& cache, const symbols::Disassembler& disassembler,
                                const symbols::SymbolResolver& resolver,
                                const symbols::Location& loc) {
    FunctionKey key{loc.module, loc.symbol_start};
    if (auto it = cache.functions.find(key); it != cache.functions.end()) return it->second;
    CodeCache::Code code;
    if (const std::string objdump = disassembler.objdump_for(loc.module);
        !program_exists(objdump)) {
        code.missing_objdump = objdump;
        return cache.functions.emplace(key, std::move(code)).first->second;
    }
    try {
        const std::uint64_t start = loc.file_address(loc.symbol_start);
        code.instructions = disassembler.disassemble(loc.module, start, start + loc.symbol_size);
        const bool whole_is_lock = is_lock_function(loc.symbol);
        const bool measured_loop = is_measured_loop(loc.symbol);
        std::string last_source;
        for (const auto& insn : code.instructions) {
            const std::uint64_t runtime = insn.address + loc.bias;
            bool in_lock = whole_is_lock;
            const auto chain = resolver.inlined_at(runtime);
            for (const auto& name : chain) in_lock |= is_lock_function(name);
            code.in_lock.push_back(in_lock);
            const auto [file, line] = resolver.source_line(runtime);
            // No line information, no inline chains either (a build without -g): no phase.
            code.phase.push_back(measured_loop && !file.empty() ? loop_phase(chain)
                                                                : LoopPhase::none);
            std::string source;
            if (!file.empty())
                source =
                    fmt::format("{}:{}", std::filesystem::path(file).filename().string(), line);
            code.source.push_back(source != last_source ? source : "");
            last_source = source;
        }
        if (code.instructions.empty()) code.error = "objdump printed no instructions for it";
    } catch (const Error& e) {
        code.error = e.what();
    }
    return cache.functions.emplace(key, std::move(code)).first->second;
}

}  // namespace

struct Annotator::Impl {
    const symbols::SymbolResolver& resolver;
    AnnotateOptions options;
    symbols::Disassembler disassembler;
    CodeCache cache;
};

Annotator::Annotator(const symbols::SymbolResolver& resolver, AnnotateOptions options)
    : impl_(std::make_unique<Impl>(
          Impl{resolver, options, symbols::Disassembler(options.objdump), {}})) {}

Annotator::~Annotator() = default;

namespace annotate_detail {

// A cell's samples by function: each function's weight and sampled addresses, and the weight
// no symbol covers.
struct SampledFunctions {
    std::map<FunctionKey, HotFunction> functions;
    std::map<FunctionKey, symbols::Location> location_of;
    std::map<FunctionKey, std::vector<std::pair<std::uint64_t, double>>> ips_of;
    std::vector<FunctionKey> order;  // heaviest first
    double unresolved = 0;
    std::vector<std::pair<std::uint64_t, double>> unresolved_ips;
};

// The weight of the acquire loop, the acquire path and each loop phase, summed as the
// annotation goes.
struct PathWeights {
    double loop = 0, path = 0;
    std::map<LoopPhase, double> phase;
};

// The calls found, for the acquire path's callees: each call and each function's start.
struct CallGraph {
    std::vector<CallRecord> calls;
    std::vector<std::uint64_t> start_of;  // per annotated function, in CellAnnotation order
};

// Functions called only from the acquire path, and the call sites by target address.
struct AcquireCallees {
    std::vector<std::optional<CallSites>> of_function;  // per function, in CellAnnotation order
    std::map<std::uint64_t, CallSites> by_target;
    // Per function that is not acquiring, the one phase of the measured loop every call to it is
    // made from (pthread_spin_unlock, called from the release), if there is one.
    std::vector<std::optional<LoopPhase>> phase_of_other;
};

}  // namespace annotate_detail

using annotate_detail::AcquireCallees;
using annotate_detail::CallGraph;
using annotate_detail::PathWeights;
using annotate_detail::SampledFunctions;

namespace {

// Each sampled address's weight, and the cell's totals.
std::map<std::uint64_t, double> weigh_samples(const std::vector<const measure::RawSample*>& samples,
                                              CellAnnotation& a) {
    std::map<std::uint64_t, double> weight_at;
    for (const auto* s : samples) {
        weight_at[s->ip] += static_cast<double>(s->weight);
        a.total_weight += static_cast<double>(s->weight);
        ++a.samples;
    }
    return weight_at;
}

SampledFunctions group_by_function(const symbols::SymbolResolver& resolver,
                                   const std::map<std::uint64_t, double>& weight_at) {
    SampledFunctions out;
    for (const auto& [ip, weight] : weight_at) {
        const auto loc = resolver.resolve(ip);
        if (!loc.has_symbol()) {
            out.unresolved += weight;
            out.unresolved_ips.emplace_back(ip, weight);
            continue;
        }
        FunctionKey key{loc.module, loc.symbol_start};
        auto& f = out.functions[key];
        if (f.name.empty()) {
            f.name = loc.symbol;
            f.short_name = symbols::short_name(loc.symbol);
            f.module = loc.module;
            out.location_of.emplace(key, loc);
        }
        f.weight += weight;
        out.ips_of[key].emplace_back(ip, weight);
    }
    for (const auto& [key, f] : out.functions) out.order.push_back(key);
    std::sort(out.order.begin(), out.order.end(), [&](const auto& x, const auto& y) {
        return out.functions[x].weight > out.functions[y].weight;
    });
    return out;
}

// Gives `f` its disassembly with each instruction's samples, the acquire loop and the loop
// phases of its instructions.
void annotate_code(HotFunction& f, const CodeCache::Code& code, const symbols::Location& loc,
                   const std::vector<std::pair<std::uint64_t, double>>& ips, CellAnnotation& a) {
    f.error = code.error;
    if (!code.missing_objdump.empty() &&
        std::find(a.missing_objdump.begin(), a.missing_objdump.end(), code.missing_objdump) ==
            a.missing_objdump.end())
        a.missing_objdump.push_back(code.missing_objdump);
    for (std::size_t i = 0; i < code.instructions.size(); ++i) {
        AnnotatedInstruction ai;
        ai.instruction = code.instructions[i];
        ai.runtime_address = ai.instruction.address + loc.bias;
        ai.in_lock = code.in_lock[i];
        ai.phase = code.phase[i];
        ai.source = code.source[i];
        f.instructions.push_back(std::move(ai));
    }
    for (const auto& [ip, weight] : ips) {
        // The instruction containing ip: the last one starting at or before it.
        auto it = std::upper_bound(
            f.instructions.begin(), f.instructions.end(), ip,
            [](std::uint64_t v, const AnnotatedInstruction& i) { return v < i.runtime_address; });
        if (it != f.instructions.begin()) std::prev(it)->weight += weight;
    }
    for (auto& i : f.instructions) i.share = i.weight / a.total_weight;
    if (!f.instructions.empty()) f.loop_rule = mark_acquire_loop(f);
    unmark_measured_loop(f);
    const bool loop_marked = std::any_of(f.instructions.begin(), f.instructions.end(),
                                         [](const auto& i) { return i.in_acquire_loop; });
    for (auto& i : f.instructions)
        if (loop_marked && i.phase == LoopPhase::acquire)
            i.phase = i.in_acquire_loop ? LoopPhase::acquire_loop : LoopPhase::acquire_rest;
    // Built without -g: no inline chains, so only the acquire loop the fallback rule marked is
    // told apart from the rest of the loop.
    if (measured_loop_without_lines(f)) {
        a.phases_without_lines = true;
        for (auto& i : f.instructions)
            i.phase = i.in_acquire_loop ? LoopPhase::acquire_loop : LoopPhase::rest_of_loop;
    }
}

// Adds an annotated function's weights, and records its calls (the function is the
// `caller`-th of the annotation, starting at `start`).
void tally_function(const HotFunction& f, std::size_t caller, std::uint64_t start,
                    std::uint64_t bias, PathWeights& weights, CallGraph& graph) {
    const std::string self = symbol_base(f.name);
    for (const auto& i : f.instructions) {
        if (i.phase != LoopPhase::none) weights.phase[i.phase] += i.weight;
        if (i.in_acquire_loop) weights.loop += i.weight;
        if (i.in_acquire_loop || i.in_lock) weights.path += i.weight;
        if (!i.instruction.is_call()) continue;
        CallRecord call{caller,
                        callee_name(i.instruction),
                        i.instruction.branch_target
                            ? std::optional(*i.instruction.branch_target + bias)
                            : std::nullopt,
                        i.in_acquire_loop || i.in_lock,
                        i.in_acquire_loop,
                        i.phase};
        // A function calling itself is no call site of its own.
        if (call.callee != self && call.target != start) graph.calls.push_back(std::move(call));
    }
}

// Which functions are called only from the acquire path, by name (a call to
// "pthread_spin_lock@plt" reaches both the stub and libc's function) or by address (code no
// symbol names), and transitively: every call a callee makes is part of acquiring too
// (measured loop -> pthread_spin_lock -> libc's unnamed outline-atomics helper).
AcquireCallees acquire_callees(const std::vector<HotFunction>& functions, const CallGraph& graph) {
    AcquireCallees out;
    out.of_function.resize(functions.size());
    std::map<std::string, CallSites> by_name;
    // The calls that reach function k, by its name or else its address; nullptr if none do.
    const auto sites_of = [&](std::size_t k) -> const CallSites* {
        if (auto n = by_name.find(symbol_base(functions[k].name)); n != by_name.end())
            return &n->second;
        if (auto t = out.by_target.find(graph.start_of[k]); t != out.by_target.end())
            return &t->second;
        return nullptr;
    };
    for (int depth = 0; depth < 4; ++depth) {
        by_name.clear();
        out.by_target.clear();
        for (const auto& c : graph.calls) {
            const auto& caller = out.of_function[c.caller];
            const bool in_path = caller ? true : c.in_path;
            const bool in_loop = caller ? caller->all_acquire_loop : c.in_loop;
            const LoopPhase phase = caller ? caller->phase.value_or(LoopPhase::none) : c.phase;
            if (!c.callee.empty()) {
                const auto [it, first] = by_name.try_emplace(c.callee);
                note_call_site(it->second, first, in_path, in_loop, phase);
            }
            if (c.target) {
                const auto [it, first] = out.by_target.try_emplace(*c.target);
                note_call_site(it->second, first, in_path, in_loop, phase);
            }
        }
        bool changed = false;
        for (std::size_t k = 0; k < functions.size(); ++k) {
            std::optional<CallSites> sites;
            if (const CallSites* found = sites_of(k); found && found->all_acquire_path)
                sites = *found;
            changed |= sites.has_value() != out.of_function[k].has_value();
            out.of_function[k] = sites;
        }
        if (!changed) break;
    }
    out.phase_of_other.resize(functions.size());
    for (std::size_t k = 0; k < functions.size(); ++k) {
        if (out.of_function[k]) continue;
        if (const CallSites* sites = sites_of(k)) out.phase_of_other[k] = sites->phase;
    }
    return out;
}

// A function the annotated code calls only from its acquire path (an outline-atomics helper,
// __aarch64_cas4_acq; a lock's out-of-line slow path) is part of acquiring: its samples join
// the acquire path, the loop when every call is in it, and the call's phase. A function called
// only from one other phase (pthread_spin_unlock, from the release) joins that phase. What of
// the callee is counted already (a lock function's own loop) is not added twice.
void add_callee_weights(const std::vector<HotFunction>& functions, const AcquireCallees& callees,
                        PathWeights& weights) {
    for (std::size_t k = 0; k < functions.size(); ++k) {
        const auto& f = functions[k];
        double counted_path = 0, counted_loop = 0, counted_phase = 0;
        for (const auto& i : f.instructions) {
            if (i.in_acquire_loop || i.in_lock) counted_path += i.weight;
            if (i.in_acquire_loop) counted_loop += i.weight;
            if (i.phase != LoopPhase::none) counted_phase += i.weight;
        }
        if (const auto& phase = callees.phase_of_other[k])
            weights.phase[*phase] += f.weight - counted_phase;
        const auto& site = callees.of_function[k];
        if (!site) continue;
        weights.path += f.weight - counted_path;
        if (site->all_acquire_loop) weights.loop += f.weight - counted_loop;
        if (site->phase) weights.phase[*site->phase] += f.weight - counted_phase;
    }
}

// Samples no symbol covers, just past the target of a call from the acquire path, in code no
// symbol names either: that callee's.
void add_unnamed_callee_weights(const symbols::SymbolResolver& resolver,
                                const SampledFunctions& sampled, const AcquireCallees& callees,
                                PathWeights& weights, CellAnnotation& a) {
    for (const auto& [ip, weight] : sampled.unresolved_ips) {
        auto t = callees.by_target.upper_bound(ip);
        if (t == callees.by_target.begin()) continue;
        --t;
        if (ip - t->first >= kUnnamedCalleeSpan || !t->second.all_acquire_path) continue;
        const auto at = resolver.resolve(t->first);
        if (at.has_symbol() || at.module.empty() || at.module != resolver.resolve(ip).module)
            continue;
        a.unnamed_acquire_share += weight / a.total_weight;
        weights.path += weight;
        if (t->second.all_acquire_loop) weights.loop += weight;
        if (t->second.phase) weights.phase[*t->second.phase] += weight;
    }
}

}  // namespace

CellAnnotation Annotator::annotate(const std::vector<const measure::RawSample*>& samples,
                                   std::uint64_t lost) {
    const auto& resolver = impl_->resolver;
    const auto& options = impl_->options;
    CellAnnotation a;
    a.lost = lost;
    const auto weight_at = weigh_samples(samples, a);
    if (a.total_weight <= 0) return a;
    SampledFunctions sampled = group_by_function(resolver, weight_at);
    a.unresolved_share = sampled.unresolved / a.total_weight;
    PathWeights weights;
    CallGraph graph;
    for (std::size_t rank = 0; rank < sampled.order.size(); ++rank) {
        const FunctionKey& key = sampled.order[rank];
        HotFunction f = std::move(sampled.functions[key]);
        f.share = f.weight / a.total_weight;
        const bool hot = rank < options.top_functions && f.share >= options.min_function_share;
        const bool wanted = options.always_annotate && options.always_annotate(f.name);
        if (hot || wanted) {
            const auto& loc = sampled.location_of.at(key);
            annotate_code(f, code_for(impl_->cache, impl_->disassembler, resolver, loc), loc,
                          sampled.ips_of[key], a);
            tally_function(f, a.functions.size(), key.start, loc.bias, weights, graph);
        }
        graph.start_of.push_back(key.start);
        a.functions.push_back(std::move(f));
    }
    const AcquireCallees callees = acquire_callees(a.functions, graph);
    add_callee_weights(a.functions, callees, weights);
    add_unnamed_callee_weights(resolver, sampled, callees, weights, a);
    a.acquire_loop_share = weights.loop / a.total_weight;
    a.acquire_path_share = weights.path / a.total_weight;
    if (!weights.phase.empty())
        for (const LoopPhase phase : kLoopPhases)
            a.phase_shares.emplace_back(phase, weights.phase[phase] / a.total_weight);
    return a;
}

std::string describe_phases(const CellAnnotation& cell) {
    std::vector<std::string> parts;
    for (const auto& [phase, share] : cell.phase_shares)
        if (share > 0) parts.push_back(fmt::format("{} {:.1f}%", phase_name(phase), share * 100));
    return fmt::format("{}", fmt::join(parts, ", "));
}

std::string no_line_information_note(const HotFunction& f) {
    if (f.instructions.empty() || std::any_of(f.instructions.begin(), f.instructions.end(),
                                              [](const auto& i) { return !i.source.empty(); }))
        return "";
    // lockprof's own loop still has its acquire loop as a phase (measured_loop_without_lines).
    return fmt::format(
        "    {}: no line or inline information (built without -g, or stripped): no source "
        "lines, no loop phases{}, and the acquire loop only by the fallback rule; rebuild with "
        "-g, which costs nothing at run time\n",
        f.short_name, is_measured_loop(f.name) ? " but the acquire loop" : "");
}

std::string missing_objdump_warning(const std::string& objdump, bool record) {
    if (record)
        return fmt::format(
            "objdump is missing: '{}' cannot be run here, so there is no per-instruction listing "
            "and no spin-lock instruction view (symbol shares are still shown); install binutils "
            "or pass --objdump PATH",
            objdump);
    return fmt::format(
        "objdump is missing: '{}' cannot be run here, so there is no per-instruction listing or "
        "acquire-loop share (function shares are still shown); keep the samples (--samples-out "
        "FILE) and run `lockprof annotate FILE --binary COPY` on a machine with binutils, COPY "
        "being the binary that ran (aarch64 binaries on x86: aarch64-linux-gnu-objdump)",
        objdump);
}

std::string phases_without_lines_note() {
    return "loop phases: acquire loop only, the rest is `rest of loop` (the measured loop has no "
           "inline information: built without -g); build with -g (RelWithDebInfo, the default) "
           "for the critical section, release and parallel work";
}

}  // namespace lockprof::attribution
