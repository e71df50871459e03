// Samples taken inside a function that carries a uretprobe (`record --spin FUNC --sample`):
// while the call runs, the return address on its stack is the kernel's uretprobe trampoline,
// in the page the kernel maps into a probed process ("[uprobes]" in /proc/PID/maps), so a
// stack walk or a DWARF unwind finds the trampoline where the caller should be, and the folded
// stacks read `main;[unknown];s_lock`. The probe saw the call and its real return address, so
// the trampoline frames are given back their callers: the innermost one is the innermost call
// the probes saw running in that thread at the sample's time, and so on outwards. (Kernels
// from 6.11 fix frame-pointer call chains themselves; DWARF unwinding is lockprof's own.)
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "lockprof/measure/data.hpp"
#include "lockprof/record/spin.hpp"

namespace lockprof::record {

struct CodeRange {
    std::uint64_t start = 0, end = 0;  // [start, end)
};

// The "[uprobes]" page of a /proc/PID/maps text, when the kernel mapped one.
std::optional<CodeRange> uprobes_page(std::string_view maps);

// Replaces each frame of `samples`' call chains that lies in its process's trampoline page
// (`pages`, by pid) with the return address of the matching call among `hits` (the spin
// probes' entries and returns; sample and hit times on one clock). Returns how many frames it
// gave back.
std::size_t restore_uretprobe_callers(std::vector<measure::RawSample>& samples,
                                      const std::vector<SpinHit>& hits,
                                      const std::map<pid_t, CodeRange>& pages);

}  // namespace lockprof::record
