// Functions found by name in ELF files, without a process: what `record --spin` puts uprobes
// on. A uprobe is placed at a file offset, so each function's link-time address is turned into
// the offset of its first instruction through the PT_LOAD segment that holds it
// (offset = address - p_vaddr + p_offset). Also the shared libraries an executable needs
// (DT_NEEDED, searched as the dynamic loader does), for a command that has not started yet.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockprof/symbols/resolver.hpp"

namespace lockprof::symbols {

struct FunctionSymbol {
    std::string name;           // as the file names it ("pthread_spin_lock@@GLIBC_2.34")
    std::uint64_t address = 0;  // link-time address (st_value)
    std::uint64_t size = 0;
    std::uint64_t file_offset = 0;  // of its first instruction in the file
    bool exported = false;          // found in .dynsym (else only in .symtab)
};

struct FunctionSearch {
    std::optional<FunctionSymbol> found;
    bool readable = false;    // an ELF file with program headers
    bool has_symtab = false;  // a full symbol table (not stripped), here or in separate debug info
};

// A defined function (STT_FUNC or STT_GNU_IFUNC) named `name`, or `name@VERSION`, in the
// symbol tables of `path` (.symtab, then .dynsym), else in its separate debug file found by
// build id under `debug_root`/.build-id/. The file offset comes from `path`'s own segments.
FunctionSearch find_function(const std::string& path, const std::string& name,
                             const std::string& debug_root = "/usr/lib/debug");

// The file offset of link-time `address` in `image`'s loadable segments; nullopt when no
// segment's file contents hold it.
std::optional<std::uint64_t> file_offset_of(const ElfImage& image, std::uint64_t address);

// The shared libraries `path` needs, directly and through each other, as paths: DT_NEEDED
// names searched in DT_RPATH/DT_RUNPATH ($ORIGIN expanded), LD_LIBRARY_PATH, /etc/ld.so.conf's
// folders and the default ones, keeping files of the same machine type (e_machine) as `path`.
// Names not found are left out.
std::vector<std::string> needed_libraries(const std::string& path);

}  // namespace lockprof::symbols
