// Where in lockprof's measured loop (workload/loop.hpp) an instruction belongs: acquiring the
// lock (its retry loop or the rest of lock()), the critical section, the release, the
// parallel work, or the loop's own bookkeeping. Read from the DWARF inline chain: the loop
// inlines the lock's lock()/try_lock()/unlock() (lockprof::locks::...) and its own
// critical_section() and parallel_work() (lockprof::workload::...), so every instruction of
// measured_loop<...> carries the call it came from. Flamegraphs of sampled runs put the phase
// under the loop's frame (docs/flamegraph.md), the annotation gives each phase's share. A build
// without -g has no inline chains: there the annotation's acquire loop (acquire_loop.hpp) is
// the only phase told apart, the rest is rest_of_loop.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lockprof::attribution {

enum class LoopPhase {
    none,          // not an instruction of the measured loop, or no line/inline information
    acquire_loop,  // the lock's retry/poll loop (acquire_loop.hpp marks it)
    acquire_rest,  // the rest of the inlined lock(): its fast path, the exit after the loop
    acquire,       // the inlined lock() where its loop is not marked (no listing)
    critical,      // between acquire and release: shared-line updates, busy work, the check
    release,       // the inlined unlock()
    parallel,      // busy work outside the lock
    harness,       // the loop's own counting, stop check, latency bookkeeping
    // Without line and inline information (a build without -g), every instruction of the loop
    // outside its acquire loop: only the acquire loop can be told apart there
    // (acquire_loop.hpp, measured_loop_without_lines).
    rest_of_loop,
};

// Every phase but none, in the loop's order (rest_of_loop, which only a build without -g has,
// last).
inline constexpr LoopPhase kLoopPhases[] = {
    LoopPhase::acquire_loop, LoopPhase::acquire_rest, LoopPhase::acquire, LoopPhase::critical,
    LoopPhase::release,      LoopPhase::parallel,     LoopPhase::harness, LoopPhase::rest_of_loop};

// The frame name a flamegraph shows, "acquire loop"; "" for none.
std::string_view phase_name(LoopPhase phase);

// A function symbol (demangled) that is one of lockprof's measured loops.
bool is_measured_loop(std::string_view function);

// A lock algorithm's lock() or try_lock() (lockprof::locks::...), demangled.
bool is_lock_function(std::string_view function);

// The phase of an instruction of a measured loop, from its inline chain (innermost first, as
// SymbolResolver::inlined_at gives it): the outermost call the loop itself made decides, so a
// lock() that calls a helper named unlock is still the acquire. lock() gives `acquire`; the
// annotation, which marks the acquire loop, splits it into acquire_loop and acquire_rest. An
// instruction with no recognised call is the harness's.
LoopPhase loop_phase(const std::vector<std::string>& inline_chain);

// (module path, file address of the instruction) -> its phase and length, for the annotated
// instructions of measured loops (annotate.hpp's phases_of).
struct PhasedInstruction {
    LoopPhase phase = LoopPhase::none;
    std::uint64_t size = 0;
};
using PhaseMap = std::map<std::pair<std::string, std::uint64_t>, PhasedInstruction>;

// The phase of the instruction of `module` that contains `file_address`; none when the map
// has no such instruction.
LoopPhase phase_at(const PhaseMap& phases, const std::string& module, std::uint64_t file_address);

}  // namespace lockprof::attribution
