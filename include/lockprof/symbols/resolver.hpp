// Address -> module, symbol, offset and source line, with elfutils libdwfl.
//
// A resolver is built from a process's file mappings (what /proc/PID/maps lists), so the same
// code resolves lockprof's own samples during a run, samples saved in a result file after the
// process is gone (the mappings travel with the samples), and another live process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockprof/measure/data.hpp"

namespace lockprof::symbols {

struct Location {
    std::string module;              // path of the ELF file ("[vdso]" for the vDSO, "[kernel]"
                                     // for kernel addresses), "" when no mapping covers it
    std::uint64_t bias = 0;          // runtime address - file (link-time) address
    std::string symbol;              // demangled; "" when no symbol covers the address
    std::string linkage_name;        // the symbol as the ELF file names it (mangled)
    std::uint64_t symbol_start = 0;  // runtime address of the symbol
    std::uint64_t symbol_size = 0;
    std::uint64_t offset = 0;  // address - symbol_start
    std::string source_file;   // from DWARF line info, "" without debug info
    int source_line = 0;

    bool has_symbol() const { return !symbol.empty(); }
    std::uint64_t file_address(std::uint64_t runtime) const { return runtime - bias; }
};

// The vDSO, the kernel's code mapped into every process (clock_gettime, gettimeofday): listed
// with the mappings so samples in it are named "[vdso]", though not resolved to symbols.
inline constexpr std::string_view kVdso = "[vdso]";
// Kernel code: addresses in the upper half of the 64-bit space, where neither x86_64 nor
// arm64 maps user space. User-space sampling still meets them when the overflow interrupt is
// taken after the thread entered the kernel (skid across a system call or fault).
inline constexpr std::string_view kKernel = "[kernel]";

// The file-backed mappings of process `pid` (0: this process), with GNU build ids, and its
// vDSO (path kVdso, no build id). Throws when its maps cannot be read.
std::vector<measure::MappedModule> process_modules(pid_t pid = 0);

// The same from a /proc/PID/maps text already read: for another process, which may exit at
// any moment, read its maps once and use this, so that the text checked is the text used.
std::vector<measure::MappedModule> modules_of_maps(std::string_view maps);

// Every mapping of a /proc/PID/maps text, as the kernel lists them: range, permissions,
// offset and name (a path, "[vdso]", "[uprobes]", "" for anonymous memory), no build ids. A
// line that does not say its range and offset in hex is skipped. The one reader of maps text.
std::vector<measure::MappedModule> maps_entries(std::string_view maps);

// The mappings process_modules keeps from the text of a /proc/PID/maps file (files and the
// vDSO), without build ids: its parser, on the file's text (tests/fuzz feeds it).
std::vector<measure::MappedModule> parse_maps(std::string_view maps);

class SymbolResolver {
  public:
    // Resolves addresses as they were in the process that had these mappings.
    explicit SymbolResolver(const std::vector<measure::MappedModule>& modules);
    ~SymbolResolver();
    SymbolResolver(SymbolResolver&&) noexcept;
    SymbolResolver& operator=(SymbolResolver&&) noexcept;

    static SymbolResolver for_process(pid_t pid = 0) {
        return SymbolResolver(process_modules(pid));
    }

    // Of several function symbols at one address (glibc's aliases: "mmap", "__mmap", "mmap64";
    // "pthread_spin_unlock", "pthread_spin_init") it names the one perf names, so that every
    // output calls a function alike: walking them in symbol-table order, the later one replaces
    // the kept one when it is sized and the kept one is not, not weak where the kept one is,
    // global where it is not, has fewer leading underscores, or a longer name (perf's
    // choose_best_symbol).
    Location resolve(std::uint64_t address) const;

    // resolve() without the source line (and not cached): module and symbol only, for callers
    // that name many addresses and keep their own cache (folding a perf.data file); DWARF line
    // tables are not loaded.
    Location resolve_symbol(std::uint64_t address) const;

    // Only the source file and line of `address` ({"", 0} without DWARF), what resolve() gives
    // in source_file/source_line without its symbol search: libdwfl finds a symbol by scanning
    // the whole symbol table, too slow for every instruction of a listing.
    std::pair<std::string, int> source_line(std::uint64_t address) const;

    // Qualified names of the functions inlined at `address`, innermost first (for an
    // instruction of TasLock::lock inlined into measured_loop: "...TasLock<...>::try_lock(...)",
    // "...TasLock<...>::lock(...)"). Empty without DWARF.
    std::vector<std::string> inlined_at(std::uint64_t address) const;

    // The same inline chain with where each inlined copy was called from: for every function
    // inlined at `address`, innermost first, its name and the file and line of the inlined call
    // in the function around it (the next entry, or for the last the function that holds
    // `address`, resolve()'s symbol). pprof's line records are built from it. Empty without
    // DWARF.
    struct InlinedCall {
        std::string function;
        std::string call_file;  // "" when DWARF does not say
        int call_line = 0;
    };
    std::vector<InlinedCall> inlined_calls(std::uint64_t address) const;

    // Modules whose file no longer matches the build id recorded with the mapping: results
    // would be wrong, and callers should say so.
    const std::vector<std::string>& changed_modules() const { return changed_; }

  private:
    Location lookup(std::uint64_t address, bool with_line) const;

    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::vector<std::string> changed_;
};

// Demangles a C++ symbol; returns the input when it is not a mangled name.
std::string demangle(std::string_view name);

// A readable short form of a demangled name: namespaces and parameter lists dropped,
// template arguments kept but their namespaces dropped:
// "measured_loop<TasLock<(Delay)1>, false>".
std::string short_name(std::string_view demangled);

// GNU build id of an ELF file as hex, "" when it has none or cannot be read.
std::string build_id_of(const std::string& path);

// An ELF file's loadable segments (PT_LOAD), as its program headers give them, and whether it
// is position independent (ET_DYN: a shared library or PIE, linked at 0 and loaded anywhere).
struct LoadSegment {
    std::uint64_t vaddr = 0, memsz = 0, offset = 0, filesz = 0;
    std::string permissions;  // "r-xp"
};
struct ElfImage {
    std::vector<LoadSegment> segments;
    bool position_independent = false;
};
// False when `path` cannot be opened or is not an ELF file with program headers.
bool elf_image(const std::string& path, ElfImage& out);

// The stubs of an ELF file's procedure linkage table as perf names them ("clock_gettime@plt"
// once demangled and suffixed): one per .rela.plt (.rel.plt) relocation, in order, laid out in
// .plt.sec when there is one, else in .plt after its header (x86_64: 16-byte header and
// entries; aarch64: 32 and 16; others: the section's entry size). No ELF symbol covers them.
struct PltStub {
    std::uint64_t file_offset = 0, size = 0;
    std::uint64_t address = 0;  // link-time virtual address
    std::string name;           // the dynamic symbol the stub jumps to, as the file names it
};
std::vector<PltStub> plt_stubs(const std::string& path);

// The mappings a process would have with `image` (the file at `path`) loaded `base` bytes above
// its link-time addresses, as /proc/PID/maps would list them: what a SymbolResolver is built
// from when the process itself is gone and only the file is known.
std::vector<measure::MappedModule> image_mappings(const std::string& path, const ElfImage& image,
                                                  std::uint64_t base, const std::string& build_id);

// The demangled name as perf prints it by default (libiberty's demangler without DMGL_PARAMS):
// no parameter list, return type or function qualifiers at the top level, no clone suffix
// ("void ns::f<int>(int) const [clone .isra.0]" -> "ns::f<int>"). A name that is not mangled is
// returned as it is, a symbol version ("@@GLIBC_2.14") included, as perf prints it.
std::string perf_symbol_name(std::string_view mangled);

// Points recorded mappings at a copy of their file elsewhere, so saved samples resolve on
// another machine (`lockprof annotate --binary COPY`: the binary that ran, copied next to its
// samples): every mapping whose build id is `copy_build_id` gets path `copy`. When none
// matches nothing changes and `refusal` says why in one line.
struct ModuleRedirect {
    std::size_t mappings = 0;  // mappings now pointing at the copy
    std::string refusal;       // non-empty: no recorded file has the copy's build id
};
ModuleRedirect redirect_modules(std::vector<measure::MappedModule>& modules,
                                const std::string& copy, const std::string& copy_build_id);

}  // namespace lockprof::symbols
