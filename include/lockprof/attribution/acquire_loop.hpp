// Which instructions of an annotated function are the lock's acquire loop (docs/sampling.md):
//  1. With DWARF, an instruction belongs to the lock's acquire path when its inline chain
//     contains a lock algorithm's lock() or try_lock() (lockprof::locks::...::lock; the
//     annotator sets AnnotatedInstruction::in_lock). The acquire loop is then the span
//     [target, branch] of every backward branch that sits on that path, branch and target
//     both: the retry/poll loop, without the fast path before it.
//  2. Without DWARF (another program, a stripped binary) the acquire loop is the smallest
//     backward-branch span (at most kMaxFallbackLoop instructions) that contains the
//     function's hottest instruction: where a spinning thread goes round. In lockprof's own
//     measured loop built without -g (no line information), it is the backward-branch span
//     (at most kMaxFallbackLoop instructions) with the most samples that is not one of the
//     busy work's loops (arch::burn(): a decrement by one and a branch back) and holds none,
//     as the measured loop's own back edge does; there an uncontended first attempt before the
//     retry loop is often the hottest instruction.
// A branch whose target is not one of the function's instructions spans nothing.
#pragma once

#include <cstddef>
#include <string>

#include "lockprof/attribution/annotate.hpp"

namespace lockprof::attribution {

// A fallback "loop" longer than this many instructions (branch index minus target index) is
// the whole outer loop, not a spin.
inline constexpr std::size_t kMaxFallbackLoop = 64;

// Sets in_acquire_loop on the instructions of `function` (its instructions' in_lock and weight
// filled in) and returns which rule applied with the spans it marked ("inlined lock(), backward
// branch 10..20"), or why none was marked.
std::string mark_acquire_loop(HotFunction& function);

// lockprof's measured loop (is_measured_loop) none of whose instructions has a source line: a
// build without -g, so no inline chains either. Its phases are only the acquire loop and the
// rest of the loop (LoopPhase::rest_of_loop).
bool measured_loop_without_lines(const HotFunction& function);

}  // namespace lockprof::attribution
