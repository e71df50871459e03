// `record --spin`: spin-lock slow paths counted per call site with uprobes. Each probed
// function's every entry and return is recorded (sampling/uprobe_sampler.hpp); an entry is a
// contended acquisition where the function is a slow path (PostgreSQL's s_lock() is entered
// only when the inlined first test-and-set failed), and entry to return is the time it spent
// waiting. The call site comes from the function's arguments where it names itself
// (s_lock(lock, __FILE__, __LINE__, __func__)), else from the return address at entry,
// resolved to a symbol and line.
//
// The known slow paths, with how to read each one's arguments, are one table
// (known_slow_paths()); `--spin` without functions probes those found in the target.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockprof/export/folded.hpp"
#include "lockprof/measure/data.hpp"
#include "lockprof/symbols/resolver.hpp"

namespace lockprof::record {

// How the call site is read from a probed function's entry.
enum class SpinArguments {
    lock_only,  // f(lock, ...): argument 0 is the lock; the site is the return address
    pg_s_lock,  // s_lock(lock, const char* file, int line, const char* func)
};

// What a probed function's integer return value says.
enum class SpinReturns {
    nothing,    // not read
    pg_delays,  // s_lock(): how many times perform_spin_delay() slept (pg_usleep) in this call
};

struct KnownSlowPath {
    const char* function;  // the symbol
    const char* owner;     // "PostgreSQL", "glibc"
    const char* meaning;   // what one entry is
    SpinArguments arguments;
    SpinReturns returns = SpinReturns::nothing;
};

// The known slow paths, in the order --spin's default searches them.
std::span<const KnownSlowPath> known_slow_paths();
// The table's entry for `function`; nullptr when it is not known (read as lock_only).
const KnownSlowPath* find_slow_path(std::string_view function);

// One probed function in one file.
struct SpinProbe {
    std::string function;
    std::string path;           // the ELF file probed
    std::uint64_t address = 0;  // link-time address of the function
    std::uint64_t file_offset = 0;
    SpinArguments arguments = SpinArguments::lock_only;
    SpinReturns returns = SpinReturns::nothing;
    std::string refused;  // why the kernel would not probe it ("" when probed)
};

// Where each function was found. Throws UsageError when a requested function is in none of
// `binaries` (naming those searched, and which are stripped), or, with `functions` empty,
// when none of the known slow paths is.
struct SpinPlan {
    std::vector<SpinProbe> probes;
    std::vector<std::string> searched;  // the binaries, in search order
};
SpinPlan plan_spin(const std::vector<std::string>& functions,
                   const std::vector<std::string>& binaries);
// The same search in files a process mapped after the start (dlopen): what they define of
// `functions` (empty: the known slow paths); finding nothing is no error.
SpinPlan extend_spin(const std::vector<std::string>& functions,
                     const std::vector<std::string>& binaries);

// The files to search for a process from its mappings: the executable first, then every
// other mapped ELF file, once each (no [vdso]).
std::vector<std::string> spin_binaries(const std::string& exe,
                                       const std::vector<measure::MappedModule>& modules);

// One entry or return as the recording keeps it.
struct SpinHit {
    std::size_t probe = 0;  // into SpinRecording::probes
    bool is_return = false;
    std::uint32_t pid = 0, tid = 0;
    std::uint64_t time_ns = 0;
    // entry only:
    std::uint64_t lock = 0;                            // argument 0
    std::optional<std::uint64_t> return_address;       // runtime address in the process
    std::uint64_t file_pointer = 0, func_pointer = 0;  // pg_s_lock: arguments 1 and 3
    int line = 0;                                      // pg_s_lock: argument 2
    std::string file, func;  // pg_s_lock: the strings, read from the process or its files
    std::optional<std::uint64_t> return_value;  // return: the function's integer result
    // An entry's call stack (--call-graph dwarf; at most kSpinStacksPerSite kept per call
    // site): not an entry of its own (the same call has its entry hit), its site read as an
    // entry's. `callchain`: the return addresses from the caller outwards,
    // unwound from `user_regs` and `user_stack`, which are emptied then.
    bool is_stack = false;
    std::vector<std::uint64_t> callchain;
    std::vector<std::uint64_t> user_regs;
    std::vector<unsigned char> user_stack;
};

// --call-graph dwarf: the entries' stacks kept per call site, a uniform random sample of those
// recorded (reservoir sampling), so memory and unwinding stay bounded however often a site is
// entered (a PostgreSQL backend's 75,000 s_lock entries a second).
inline constexpr std::size_t kSpinStacksPerSite = 256;

struct SpinRecording {
    std::vector<SpinProbe> probes;
    std::vector<std::string> searched;
    std::vector<SpinHit> hits;
    std::vector<std::uint64_t> kernel_entries;  // per probe: the kernel's exact count
    std::uint64_t lost = 0;                     // records lost to full buffers
    std::uint64_t found_full = 0;               // drains that found an entry/return buffer full
    std::uint64_t unreadable = 0;               // entry/return records that could not be read
    std::uint32_t stack_size = 0;   // --call-graph dwarf,SIZE: bytes per stack copy; 0: none
    std::uint64_t stacks_seen = 0;  // entries' stack records received
    std::uint64_t stacks_lost = 0;  // stack records lost to full stack buffers
    std::uint64_t stacks_unwound_without_callers = 0;
};

// The NUL-terminated string at `address` in process `pid` (process_vm_readv), at most 255
// bytes; nullopt when it cannot be read (the process is gone).
std::optional<std::string> read_process_string(pid_t pid, std::uint64_t address);
// The same string read from the file mapped there, through `modules` (the process's mappings):
// for processes that ended before their strings were read. nullopt when no file holds it.
std::optional<std::string> read_mapped_string(const std::vector<measure::MappedModule>& modules,
                                              std::uint64_t address);

// Per call site: what the report and JSON show.
struct SpinSite {
    std::string function;  // the probed function
    std::string site;      // "xlog.c:1234 XLogGetLastRemovedSegno", "main+0x2a (helper.c:40)"
    std::string file;      // as the arguments or DWARF give it ("" unknown)
    int line = 0;
    std::string caller;  // the calling function
    std::string module;  // the caller's file ("" unknown)
    std::uint64_t entries = 0;
    std::uint64_t timed = 0;  // entries whose return was recorded too
    double total_ns = 0, mean_ns = 0, max_ns = 0;
    // Sleeps in the slow path (SpinReturns::pg_delays: the sum of s_lock's results over the
    // timed entries); nullopt when the function does not say.
    std::optional<std::uint64_t> sleeps;
    std::vector<std::uint64_t> locks;  // distinct lock addresses, by entries, up to 8
    std::size_t distinct_locks = 0;
    std::size_t processes = 0;
    // --call-graph dwarf: the call stacks of the site's sampled entries, most sampled first;
    // frames outermost first, ending in the caller (the site's function).
    struct Stack {
        std::vector<std::string> frames;
        std::uint64_t samples = 0;
    };
    std::vector<Stack> stacks;
};

struct SpinFunction {
    std::string function, path;
    std::string refused;               // why it was not probed ("" when it was)
    std::uint64_t entries = 0;         // recorded
    std::uint64_t kernel_entries = 0;  // the kernel's count (exact)
    double total_ns = 0;
    std::optional<std::uint64_t> sleeps;  // as SpinSite::sleeps
};

struct SpinProfile {
    std::vector<SpinFunction> functions;
    std::vector<SpinSite> sites;  // by total time, then entries
    std::uint64_t entries = 0, timed = 0;
    double total_ns = 0;
    std::optional<std::uint64_t> sleeps;  // over the functions that say
    std::vector<std::string> searched;
    std::vector<std::string> notes;
    std::uint32_t stack_size = 0;     // --call-graph dwarf,SIZE; 0: no call stacks
    std::uint64_t stacks_seen = 0;    // entries' stack records received
    std::uint64_t stack_samples = 0;  // of them, kept and matched to a site
};

// Pairs each thread's entries with their returns (in time order, innermost first) and groups
// them by call site. `resolver_of(pid)` names a process's return addresses and stack frames
// (Images::resolver_of: one resolver per set of mappings); nullptr when unknown.
SpinProfile analyse_spin(
    const SpinRecording& recording,
    const std::function<const symbols::SymbolResolver*(std::uint32_t)>& resolver_of);

// The time in the slow paths per call site as folded stacks, for a flamegraph of where
// contended acquisitions waited: "CALLER;FUNCTION at SITE" weighted by the nanoseconds from
// entry to return of the timed entries (record --spin-folded, --spin-flamegraph). With call
// stacks (--call-graph dwarf), a site's time is split over its sampled stacks by how many
// samples each has, and each reads "OUTERMOST;...;CALLER;FUNCTION at SITE".
exporting::FoldedStacks spin_folded(const SpinProfile& profile);

}  // namespace lockprof::record
