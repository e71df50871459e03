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

#include "lockprof/profiling/data.hpp"

namespace lockprof::record {

// How the call site is read from a probed function's entry.
enum class SpinArguments {
    lock_only,  // f(lock, ...): argument 0 is the lock; the site is the return address
    pg_s_lock,  // s_lock(lock, const char* file, int line, const char* func)
};

struct KnownSlowPath {
    const char* function;  // the symbol
    const char* owner;     // "PostgreSQL", "glibc"
    const char* meaning;   // what one entry is
    SpinArguments arguments;
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

// The files to search for a process from its mappings: the executable first, then every
// other mapped ELF file, once each (no [vdso]).
std::vector<std::string> spin_binaries(const std::string& exe,
                                       const std::vector<profiling::MappedModule>& modules);

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
};

struct SpinRecording {
    std::vector<SpinProbe> probes;
    std::vector<std::string> searched;
    std::vector<SpinHit> hits;
    std::vector<std::uint64_t> kernel_entries;  // per probe: the kernel's exact count
    std::uint64_t lost = 0;                     // records lost to full buffers
};

// The NUL-terminated string at `address` in process `pid` (process_vm_readv), at most 255
// bytes; nullopt when it cannot be read (the process is gone).
std::optional<std::string> read_process_string(pid_t pid, std::uint64_t address);
// The same string read from the file mapped there, through `modules` (the process's mappings):
// for processes that ended before their strings were read. nullopt when no file holds it.
std::optional<std::string> read_mapped_string(const std::vector<profiling::MappedModule>& modules,
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
    std::vector<std::uint64_t> locks;  // distinct lock addresses, by entries, up to 8
    std::size_t distinct_locks = 0;
    std::size_t processes = 0;
};

struct SpinFunction {
    std::string function, path;
    std::string refused;               // why it was not probed ("" when it was)
    std::uint64_t entries = 0;         // recorded
    std::uint64_t kernel_entries = 0;  // the kernel's count (exact)
    double total_ns = 0;
};

struct SpinProfile {
    std::vector<SpinFunction> functions;
    std::vector<SpinSite> sites;  // by total time, then entries
    std::uint64_t entries = 0, timed = 0;
    double total_ns = 0;
    std::vector<std::string> searched;
    std::vector<std::string> notes;
};

// Pairs each thread's entries with their returns (in time order, innermost first) and groups
// them by call site. `modules_of(pid)` gives a process's mappings (for return addresses and
// strings not read while it lived); nullptr when unknown.
SpinProfile analyse_spin(
    const SpinRecording& recording,
    const std::function<const std::vector<profiling::MappedModule>*(std::uint32_t)>& modules_of);

}  // namespace lockprof::record
