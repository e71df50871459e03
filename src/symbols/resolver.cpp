#include "lockprof/symbols/resolver.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "symbols/dwfl_mappings.hpp"
#include "symbols/perf_rules.hpp"

namespace lockprof::symbols {

std::string demangle(std::string_view name) {
    if (name.size() < 2 || name.substr(0, 2) != "_Z") return std::string(name);
    int status = 0;
    char* out = abi::__cxa_demangle(std::string(name).c_str(), nullptr, nullptr, &status);
    if (status != 0 || !out) return std::string(name);
    std::string result(out);
    std::free(out);
    return result;
}

namespace {

// ARM's mapping symbols ($a, $t, $x: code of that kind starts here; $d: data), optionally
// followed by ".anything" (ELF for the Arm Architecture, "Mapping symbols").
bool is_mapping_symbol(std::string_view name) {
    return name.size() >= 2 && name[0] == '$' &&
           std::string_view("atxd").find(name[1]) != std::string_view::npos &&
           (name.size() == 2 || name[2] == '.');
}

bool is_identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '~' || c == '$';
}

// "name@@GLIBC_2.34", "llseek@GLIBC_2.2.5": the symbol version libdwfl reports for versioned
// ELF symbols, dropped from short names. A PLT stub's "@plt" is no version: it stays, so the
// stub is not shown as the function it jumps to.
std::string_view without_version(std::string_view name) {
    const auto at = name.find('@');
    if (at == std::string_view::npos || at == 0 || name.substr(at) == "@plt") return name;
    for (std::size_t i = at; i < name.size(); ++i)
        if (!(is_identifier_char(name[i]) || name[i] == '@' || name[i] == '.')) return name;
    return name.substr(0, at);
}

// True when `operator` starts at `i` as a whole word.
bool operator_at(std::string_view s, std::size_t i) {
    constexpr std::string_view kOperator = "operator";
    if (s.substr(i, kOperator.size()) != kOperator) return false;
    if (i > 0 && is_identifier_char(s[i - 1])) return false;
    const std::size_t after = i + kOperator.size();
    return after >= s.size() || !is_identifier_char(s[after]);
}

// Index just past the operator's own token: "()" in "operator()(int)", "<<" in "operator<<
// <T>(...)", "new[]", "delete"; a conversion operator's type ("operator bool") is left to the
// caller's scan.
std::size_t skip_operator_token(std::string_view s, std::size_t i) {
    i += std::string_view("operator").size();
    while (i < s.size() && s[i] == ' ') ++i;
    if (s.substr(i, 2) == "()" || s.substr(i, 2) == "[]") return i + 2;
    for (std::string_view word : {"new", "delete"})
        if (s.substr(i, word.size()) == word) {
            i += word.size();
            return s.substr(i, 2) == "[]" ? i + 2 : i;
        }
    while (i < s.size() && std::string_view("+-*/%^&|~!=<>,").find(s[i]) != std::string_view::npos)
        ++i;
    return i;
}

constexpr std::string_view kAnonymous = "(anonymous namespace)";

}  // namespace

std::string short_name(std::string_view name) {
    name = without_version(name);
    // One scan finds the parameter list (the first top-level '(' outside template brackets) and
    // the start of the name proper (after the last top-level space: a return type, "void
    // f<...>"). An operator's own token and the spaces around it ("operator<< <T>", "operator
    // new", "operator bool") belong to the name.
    int depth = 0;
    std::size_t start = 0, params = std::string_view::npos;
    bool in_operator = false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (depth == 0 && operator_at(name, i)) {
            in_operator = true;
            i = skip_operator_token(name, i) - 1;
            continue;
        }
        if (depth == 0 && name.substr(i).starts_with(kAnonymous)) {
            i += kAnonymous.size() - 1;  // a qualifier, not a parameter list
            continue;
        }
        if (c == '(' && depth == 0 && i > 0) {
            params = i;
            break;
        }
        if (c == '<' || c == '(') ++depth;
        if ((c == '>' || c == ')') && depth > 0) --depth;
        if (c == ' ' && depth == 0 && !in_operator) start = i + 1;
    }
    std::string_view base = name.substr(
        start, params == std::string_view::npos ? std::string_view::npos : params - start);
    // Drop namespace qualifiers "a::b::" (inside template arguments too) and "(anonymous
    // namespace)::"; a class template's scope stays ("basic_filebuf<char>::open"), since the
    // member name alone would not say which class.
    std::string out;
    std::size_t token_start = 0;
    for (std::size_t i = 0; i < base.size(); ++i) {
        const char c = base[i];
        if (base.substr(i).starts_with(kAnonymous) &&
            base.substr(i + kAnonymous.size()).starts_with("::")) {
            i += kAnonymous.size() + 1;
            token_start = out.size();
            continue;
        }
        if (c == ':' && i + 1 < base.size() && base[i + 1] == ':') {
            if (!out.empty() && out.back() == '>') {
                out += "::";
            } else {
                out.resize(token_start);
            }
            token_start = out.size();
            ++i;
            continue;
        }
        out += c;
        if (!is_identifier_char(c)) token_start = out.size();
    }
    return out;
}

std::string perf_symbol_name(std::string_view mangled) {
    // A PLT stub's name (SymbolResolver's "name@plt"): perf demangles the name it jumps to.
    if (constexpr std::string_view kPlt = "@plt"; mangled.ends_with(kPlt))
        return perf_symbol_name(mangled.substr(0, mangled.size() - kPlt.size())) +
               std::string(kPlt);
    if (!mangled.starts_with("_Z")) return std::string(mangled);
    std::string demangled = demangle(mangled);
    std::string_view d = demangled;
    if (d == mangled) return demangled;  // not demangled: perf prints it as the file has it
    // Special names keep their inner encoding's parameters ("non-virtual thunk to X::f(int)").
    for (std::string_view special :
         {"non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ", "vtable for ",
          "typeinfo for ", "typeinfo name for ", "VTT for ", "construction vtable for ",
          "guard variable for ", "reference temporary ", "TLS init function for ",
          "TLS wrapper function for ", "transaction clone for "})
        if (d.starts_with(special)) return demangled;
    // One scan at depth 0 (outside <>, (), [] and {}): the last parameter list, and the last
    // space before the name proper (after a return type). An operator's own token and what
    // follows it ("operator new", "operator unsigned long") belong to the name.
    int depth = 0;
    std::size_t name_start = 0, params = std::string_view::npos;
    bool in_operator = false;
    for (std::size_t i = 0; i < d.size(); ++i) {
        const char c = d[i];
        if (depth == 0 && operator_at(d, i)) {
            in_operator = true;
            i = skip_operator_token(d, i) - 1;
            continue;
        }
        if (depth == 0 && d.substr(i).starts_with(kAnonymous)) {
            i += kAnonymous.size() - 1;
            continue;
        }
        if (depth == 0 && d.substr(i).starts_with(" [clone ")) break;  // a clone suffix
        if (c == '(' && depth == 0) {
            params = i;
            in_operator = false;  // a local name's function ("f(int)::g"): the scan goes on
        }
        if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
        if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) --depth;
        if (c == ' ' && depth == 0 && !in_operator && params == std::string_view::npos)
            name_start = i + 1;
    }
    if (params == std::string_view::npos) return demangled;  // not a function: as demangled
    return std::string(d.substr(name_start, params - name_start));
}

std::string build_id_of(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    elf_version(EV_CURRENT);
    Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    std::string hex;
    if (elf) {
        const void* bits = nullptr;
        const ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
        for (ssize_t i = 0; i < n; ++i)
            hex += fmt::format("{:02x}", static_cast<const unsigned char*>(bits)[i]);
        elf_end(elf);
    }
    close(fd);
    return hex;
}

bool elf_image(const std::string& path, ElfImage& out) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    elf_version(EV_CURRENT);
    Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    bool ok = false;
    GElf_Ehdr ehdr;
    std::size_t count = 0;
    if (elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &ehdr) &&
        elf_getphdrnum(elf, &count) == 0) {
        ElfImage image;
        image.position_independent = ehdr.e_type == ET_DYN;
        for (std::size_t i = 0; i < count; ++i) {
            GElf_Phdr phdr;
            if (!gelf_getphdr(elf, static_cast<int>(i), &phdr) || phdr.p_type != PT_LOAD) continue;
            LoadSegment seg;
            seg.vaddr = phdr.p_vaddr;
            seg.memsz = phdr.p_memsz;
            seg.offset = phdr.p_offset;
            seg.filesz = phdr.p_filesz;
            seg.permissions =
                std::string{(phdr.p_flags & PF_R) ? 'r' : '-', (phdr.p_flags & PF_W) ? 'w' : '-',
                            (phdr.p_flags & PF_X) ? 'x' : '-', 'p'};
            image.segments.push_back(std::move(seg));
        }
        ok = !image.segments.empty();
        if (ok) out = std::move(image);
    }
    if (elf) elf_end(elf);
    close(fd);
    return ok;
}

std::vector<PltStub> plt_stubs(const std::string& path) {
    std::vector<PltStub> stubs;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return stubs;
    elf_version(EV_CURRENT);
    Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    GElf_Ehdr ehdr;
    std::size_t strndx = 0;
    if (elf && gelf_getehdr(elf, &ehdr) && elf_getshdrstrndx(elf, &strndx) == 0) {
        Elf_Scn *rel = nullptr, *plt = nullptr, *plt_sec = nullptr;
        for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
            GElf_Shdr shdr;
            if (!gelf_getshdr(scn, &shdr)) continue;
            const char* name = elf_strptr(elf, strndx, shdr.sh_name);
            if (!name) continue;
            const std::string_view n = name;
            if ((n == ".rela.plt" || n == ".rel.plt") && !rel) rel = scn;
            if (n == ".plt") plt = scn;
            if (n == ".plt.sec") plt_sec = scn;
        }
        GElf_Shdr rel_shdr, plt_shdr, sym_shdr;
        Elf_Scn* dynsym =
            rel && gelf_getshdr(rel, &rel_shdr) ? elf_getscn(elf, rel_shdr.sh_link) : nullptr;
        Elf_Data* rel_data = rel ? elf_getdata(rel, nullptr) : nullptr;
        Elf_Data* sym_data = dynsym ? elf_getdata(dynsym, nullptr) : nullptr;
        if (rel_data && sym_data && gelf_getshdr(dynsym, &sym_shdr) &&
            gelf_getshdr(plt_sec ? plt_sec
                         : plt   ? plt
                                 : rel,
                         &plt_shdr) &&
            (plt || plt_sec) && (rel_shdr.sh_type == SHT_RELA || rel_shdr.sh_type == SHT_REL)) {
            std::uint64_t entry = plt_shdr.sh_entsize, header = plt_shdr.sh_entsize;
            if (ehdr.e_machine == EM_X86_64) entry = header = 16;
            if (ehdr.e_machine == EM_AARCH64) entry = 16, header = 32;
            if (plt_sec) header = 0;
            std::uint64_t at = plt_shdr.sh_offset + header;
            std::uint64_t address = plt_shdr.sh_addr + header;
            const std::size_t count =
                rel_shdr.sh_entsize ? rel_shdr.sh_size / rel_shdr.sh_entsize : 0;
            for (std::size_t i = 0; i < count && entry > 0; ++i, at += entry, address += entry) {
                std::uint64_t info = 0;
                GElf_Rela rela;
                GElf_Rel r;
                if (rel_shdr.sh_type == SHT_RELA &&
                    gelf_getrela(rel_data, static_cast<int>(i), &rela))
                    info = rela.r_info;
                else if (rel_shdr.sh_type == SHT_REL &&
                         gelf_getrel(rel_data, static_cast<int>(i), &r))
                    info = r.r_info;
                else
                    break;
                GElf_Sym sym;
                if (!gelf_getsym(sym_data, static_cast<int>(GELF_R_SYM(info)), &sym)) continue;
                const char* name = elf_strptr(elf, sym_shdr.sh_link, sym.st_name);
                stubs.push_back({at, entry, address, name ? name : ""});
            }
        }
    }
    if (elf) elf_end(elf);
    close(fd);
    return stubs;
}

std::vector<measure::MappedModule> image_mappings(const std::string& path, const ElfImage& image,
                                                  std::uint64_t base, const std::string& build_id) {
    constexpr std::uint64_t kPage = 4096;
    std::vector<measure::MappedModule> modules;
    for (const auto& seg : image.segments) {
        if (seg.memsz == 0) continue;
        measure::MappedModule m;
        m.path = path;
        m.start = base + (seg.vaddr & ~(kPage - 1));
        m.end = (base + seg.vaddr + seg.memsz + kPage - 1) & ~(kPage - 1);
        m.offset = seg.offset & ~(kPage - 1);
        m.permissions = seg.permissions;
        m.build_id = build_id;
        modules.push_back(std::move(m));
    }
    return modules;
}

ModuleRedirect redirect_modules(std::vector<measure::MappedModule>& modules,
                                const std::string& copy, const std::string& copy_build_id) {
    ModuleRedirect r;
    if (copy_build_id.empty()) {
        r.refusal = fmt::format(
            "--binary: '{}' has no GNU build id (or is not an ELF file), so it cannot be matched "
            "with the run's mappings; give a copy of the binary that ran",
            copy);
        return r;
    }
    for (auto& m : modules)
        if (m.build_id == copy_build_id) {
            m.path = copy;
            ++r.mappings;
        }
    if (r.mappings > 0) return r;
    // Compare with the recorded file of the same name, else the executable (mapped first).
    const auto name = std::filesystem::path(copy).filename();
    auto recorded = std::find_if(modules.begin(), modules.end(), [&](const auto& m) {
        return m.path != kVdso && std::filesystem::path(m.path).filename() == name;
    });
    if (recorded == modules.end())
        recorded = std::find_if(modules.begin(), modules.end(),
                                [](const auto& m) { return m.path != kVdso; });
    if (recorded == modules.end()) {
        r.refusal = fmt::format(
            "--binary: the result records no mapped files, so '{}' has nothing to stand for", copy);
        return r;
    }
    r.refusal = fmt::format(
        "--binary: '{}' is not the binary that ran: its build id is {}, the run's '{}' had {}; "
        "copy that very file (a rebuild differs)",
        copy, copy_build_id, recorded->path,
        recorded->build_id.empty() ? "none" : recorded->build_id);
    return r;
}

namespace {

// A whole hex number that fits 64 bits.
bool parse_hex(std::string_view text, std::uint64_t& value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::vector<measure::MappedModule> maps_entries(std::string_view maps) {
    std::vector<measure::MappedModule> entries;
    std::istringstream in{std::string(maps)};
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string range, perms, offset, device, inode, file;
        fields >> range >> perms >> offset >> device >> inode;
        std::getline(fields >> std::ws, file);
        measure::MappedModule m;
        // "start-end" and the offset in hex; a line that does not say them is no mapping.
        const auto dash = range.find('-');
        if (dash == std::string::npos ||
            !parse_hex(std::string_view(range).substr(0, dash), m.start) ||
            !parse_hex(std::string_view(range).substr(dash + 1), m.end) ||
            !parse_hex(offset, m.offset) || m.end < m.start)
            continue;
        m.permissions = perms;
        m.path = file;
        entries.push_back(std::move(m));
    }
    return entries;
}

std::vector<measure::MappedModule> parse_maps(std::string_view maps) {
    std::vector<measure::MappedModule> modules = maps_entries(maps);
    // Files, and the vDSO (clock_gettime's code: named, though not resolved).
    std::erase_if(modules, [](const measure::MappedModule& m) {
        return m.path != kVdso && (m.path.empty() || m.path[0] != '/' ||
                                   m.path.find(" (deleted)") != std::string::npos);
    });
    return modules;
}

std::vector<measure::MappedModule> modules_of_maps(std::string_view maps) {
    std::vector<measure::MappedModule> modules = parse_maps(maps);
    std::map<std::string, std::string> build_ids;
    for (auto& m : modules) {
        auto [it, inserted] = build_ids.try_emplace(m.path);
        if (inserted && m.path != kVdso) it->second = build_id_of(m.path);
        m.build_id = it->second;
    }
    return modules;
}

std::vector<measure::MappedModule> process_modules(pid_t pid) {
    const std::string path =
        pid == 0 ? std::string("/proc/self/maps") : fmt::format("/proc/{}/maps", pid);
    std::ifstream in(path);
    if (!in) throw Error(fmt::format("cannot read {}: no such process or not permitted", path));
    std::ostringstream text;
    text << in.rdbuf();
    return modules_of_maps(text.str());
}

namespace {

// A source file DWARF names relative to the compilation directory (ccache's CCACHE_BASEDIR
// makes the compiler see relative paths) as an absolute path, so tools that open the source
// (pprof -list, -weblist) find it wherever they run.
std::string absolute_source(const char* comp_dir, const char* file) {
    if (!file) return {};
    if (!comp_dir || !*comp_dir || file[0] == '/' || !*file) return file;
    return (std::filesystem::path(comp_dir) / file).lexically_normal().string();
}

// DWARF line info through libdwfl: source file and line of `address`, {"", 0} without it.
std::pair<std::string, int> dwfl_line_of(Dwfl_Module* module, std::uint64_t address) {
    Dwfl_Line* line = dwfl_module_getsrc(module, address);
    if (!line) return {};
    int line_number = 0;
    const char* source = dwfl_lineinfo(line, nullptr, &line_number, nullptr, nullptr, nullptr);
    return {absolute_source(dwfl_line_comp_dir(line), source), line_number};
}

// The same from the line table of a compile unit found without libdwfl's help (unit_at).
std::pair<std::string, int> unit_line_of(Dwarf_Die* unit, Dwarf_Addr pc) {
    Dwarf_Line* line = dwarf_getsrc_die(unit, pc);
    if (!line) return {};
    int line_number = 0;
    if (dwarf_lineno(line, &line_number) != 0) return {};
    Dwarf_Attribute comp_dir;
    return {absolute_source(dwarf_formstring(dwarf_attr(unit, DW_AT_comp_dir, &comp_dir)),
                            dwarf_linesrc(line, nullptr, nullptr)),
            line_number};
}

}  // namespace

// Named, not anonymous: SymbolResolver::Impl holds Aliases, and a member of an anonymous
// namespace's type in a class with linkage is what GCC warns of (-Wsubobject-linkage) in the
// unity batches.
namespace resolver_detail {

// A function symbol as perf keeps it, for choosing among aliases (several names at one address).
struct Alias {
    std::string name;
    int binding = STB_LOCAL;
    std::uint64_t size = 0;
};

// perf's choose_best_symbol (tools/perf/util/symbol.c): true when `b` replaces `a`.
bool perf_prefers(const Alias& a, const Alias& b) {
    if ((a.size == 0) != (b.size == 0)) return a.size == 0;
    const bool wa = a.binding == STB_WEAK, wb = b.binding == STB_WEAK;
    if (wa != wb) return wa;
    const bool ga = a.binding == STB_GLOBAL, gb = b.binding == STB_GLOBAL;
    if (ga != gb) return gb;
    const auto ua = perf_rules::leading_underscores(a.name),
               ub = perf_rules::leading_underscores(b.name);
    if (ua != ub) return ub < ua;
    return b.name.size() > a.name.size();
}

}  // namespace resolver_detail

using resolver_detail::Alias;
using resolver_detail::perf_prefers;

// A pc range of a function's concrete code and the function's DIE (SymbolResolver::Impl holds
// them, so not in an anonymous namespace).
struct FunctionRange {
    Dwarf_Addr low = 0, high = 0;
    Dwarf_Die die{};
};
// A pc range of a compile unit, its DIE and the module's bias.
struct UnitRange {
    Dwarf_Addr low = 0, high = 0;
    Dwarf_Die die{};
    Dwarf_Addr bias = 0;
};

struct SymbolResolver::Impl {
    // Per module, at each address that several function symbols name, the one perf names:
    // built on the first symbol looked up in it (perf_names).
    std::map<Dwfl_Module*, std::unordered_map<std::uint64_t, std::string>> perf_name;
    Dwfl_Callbacks callbacks{};
    char* debuginfo_path = nullptr;
    Dwfl* dwfl = nullptr;
    mutable std::map<std::uint64_t, Location> cache;
    // The recorded mappings, start -> end. libdwfl gives a module the whole span of its ELF
    // segments, gaps and .bss included, where anonymous memory (JIT code) can be mapped; an
    // address outside every mapping belongs to no file.
    std::map<std::uint64_t, std::uint64_t> mapped;
    std::map<std::uint64_t, std::uint64_t> vdso;       // start -> end; not given to libdwfl
    std::map<Dwfl_Module*, std::vector<PltStub>> plt;  // per module, read on first need
    // Per compile unit (keyed by its DIE's bytes), the pc ranges of its functions' concrete
    // code, sorted by start: one walk of the unit on its first inline lookup. dwarf_getscopes
    // walks the whole unit on every call, which made annotating a big unity-built binary take
    // seconds natively and minutes under emulation.
    std::unordered_map<const void*, std::vector<FunctionRange>> functions;
    mutable std::unordered_map<std::uint64_t, std::vector<InlinedCall>> inline_cache;

    // The range of `ranges` (start -> end) that holds `address`, or end().
    static std::map<std::uint64_t, std::uint64_t>::const_iterator range_of(
        const std::map<std::uint64_t, std::uint64_t>& ranges, std::uint64_t address) {
        auto it = ranges.upper_bound(address);
        if (it == ranges.begin() || address >= std::prev(it)->second) return ranges.end();
        return std::prev(it);
    }
    // libdwfl's module for a mapped address; nullptr outside every recorded mapping.
    Dwfl_Module* module_at(std::uint64_t address) const {
        return range_of(mapped, address) != mapped.end() ? dwfl_addrmodule(dwfl, address) : nullptr;
    }

    // Per module without .debug_aranges, its compile units' pc ranges sorted by start, read on
    // first need (unit_at).
    std::map<Dwfl_Module*, std::vector<UnitRange>> unit_ranges;
    // The compile unit whose code holds `address`, and the module's bias in *bias. libdwfl
    // finds it through .debug_aranges, which clang does not write unless told to
    // (-gdwarf-aranges) and elfutils 0.188 (Debian 12) does not make up from the units
    // themselves: without them every line and inline chain of a clang-built program was
    // missing. Then the units' own ranges (DW_AT_low_pc/high_pc or DW_AT_ranges) are searched.
    Dwarf_Die* unit_at(Dwfl_Module* module, std::uint64_t address, Dwarf_Addr* bias) {
        if (Dwarf_Die* unit = dwfl_module_addrdie(module, address, bias)) return unit;
        auto [entry, first] = unit_ranges.try_emplace(module);
        std::vector<UnitRange>& units = entry->second;
        if (first) {
            Dwarf_Addr unit_bias = 0;
            for (Dwarf_Die* unit = dwfl_module_nextcu(module, nullptr, &unit_bias); unit;
                 unit = dwfl_module_nextcu(module, unit, &unit_bias)) {
                Dwarf_Addr base = 0, low = 0, high = 0;
                for (ptrdiff_t at = 0; (at = dwarf_ranges(unit, at, &base, &low, &high)) > 0;)
                    if (high > low) units.push_back({low, high, *unit, unit_bias});
            }
            std::sort(units.begin(), units.end(),
                      [](const UnitRange& a, const UnitRange& b) { return a.low < b.low; });
        }
        if (units.empty()) return nullptr;
        // Ranges of different units do not overlap: the last one starting at or below pc.
        const Dwarf_Addr pc = address - units.front().bias;
        auto it = std::upper_bound(units.begin(), units.end(), pc,
                                   [](Dwarf_Addr a, const UnitRange& u) { return a < u.low; });
        if (it == units.begin() || pc >= std::prev(it)->high) return nullptr;
        *bias = std::prev(it)->bias;
        return &std::prev(it)->die;
    }

    // Source file and line of `address` in `module`, {"", 0} without line information.
    std::pair<std::string, int> line_of(Dwfl_Module* module, std::uint64_t address) {
        if (auto line = dwfl_line_of(module, address); line.second > 0) return line;
        Dwarf_Addr bias = 0;
        Dwarf_Die* unit = unit_at(module, address, &bias);
        return unit ? unit_line_of(unit, address - bias) : std::pair<std::string, int>{};
    }

    ~Impl() {
        if (dwfl) dwfl_end(dwfl);
    }
};

SymbolResolver::SymbolResolver(const std::vector<measure::MappedModule>& modules)
    : impl_(std::make_unique<Impl>()) {
    impl_->callbacks.find_elf = dwfl_linux_proc_find_elf;
    impl_->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    impl_->callbacks.debuginfo_path = &impl_->debuginfo_path;
    impl_->dwfl = dwfl_begin(&impl_->callbacks);
    if (!impl_->dwfl) throw Error(fmt::format("elfutils: dwfl_begin failed: {}", dwfl_errmsg(-1)));
    std::map<std::string, bool> checked;
    for (const auto& m : modules) {
        impl_->mapped[m.start] = std::max(impl_->mapped[m.start], m.end);
        if (m.path == kVdso) {
            impl_->vdso[m.start] = m.end;
            continue;
        }
        if (!m.build_id.empty() && checked.try_emplace(m.path, true).second &&
            build_id_of(m.path) != m.build_id)
            changed_.push_back(m.path);
    }
    report_mappings(impl_->dwfl, modules);
}

void report_mappings(Dwfl* dwfl, const std::vector<measure::MappedModule>& modules) {
    std::string maps;
    std::map<std::string, std::size_t> inode;
    for (const auto& m : modules) {
        if (m.path == kVdso) continue;
        const std::size_t ino = inode.try_emplace(m.path, inode.size() + 1).first->second;
        maps += fmt::format("{:x}-{:x} {} {:08x} 00:00 {} {}\n", m.start, m.end,
                            m.permissions.empty() ? "r-xp" : m.permissions, m.offset, ino, m.path);
    }
    FILE* file = fmemopen(maps.data(), maps.size(), "r");
    if (!file) return;
    dwfl_report_begin(dwfl);
    if (!maps.empty()) dwfl_linux_proc_maps_report(dwfl, file);
    dwfl_report_end(dwfl, nullptr, nullptr);
    std::fclose(file);
}

SymbolResolver::~SymbolResolver() = default;
SymbolResolver::SymbolResolver(SymbolResolver&&) noexcept = default;
SymbolResolver& SymbolResolver::operator=(SymbolResolver&&) noexcept = default;

Location SymbolResolver::resolve(std::uint64_t address) const {
    if (auto it = impl_->cache.find(address); it != impl_->cache.end()) return it->second;
    return impl_->cache.emplace(address, lookup(address, true)).first->second;
}

Location SymbolResolver::resolve_symbol(std::uint64_t address) const {
    return lookup(address, false);
}

namespace {

// At each address of `module` that several function symbols name (glibc's aliases: "mmap",
// "__mmap", "mmap64"), the one perf keeps. Walking them in symbol-table order, each next one
// that choose_best_symbol prefers replaces the one kept; perf sizes them first
// (symbols__fixup_end): an empty symbol ends where the next one begins, which leaves the last
// of the address's aliases sized and the others empty.
std::unordered_map<std::uint64_t, std::string> perf_names(Dwfl_Module* module) {
    std::unordered_map<std::uint64_t, std::vector<Alias>> at;
    const int n = dwfl_module_getsymtab(module);
    for (int i = 1; i < n; ++i) {
        GElf_Sym sym;
        GElf_Addr value = 0;
        const char* name =
            dwfl_module_getsym_info(module, i, &sym, &value, nullptr, nullptr, nullptr);
        const int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
            (type != STT_FUNC && type != STT_GNU_IFUNC))
            continue;
        at[value].push_back({name, GELF_ST_BIND(sym.st_info), sym.st_size});
    }
    std::unordered_map<std::uint64_t, std::string> chosen;
    for (auto& [address, group] : at) {
        if (group.size() < 2) continue;
        if (group.back().size == 0) group.back().size = 1;
        const Alias* kept = &group.front();
        for (const auto& next : group)
            if (perf_prefers(*kept, next)) kept = &next;
        chosen.emplace(address, kept->name);
    }
    return chosen;
}

}  // namespace

Location SymbolResolver::lookup(std::uint64_t address, bool with_line) const {
    Location loc;
    if (auto v = Impl::range_of(impl_->vdso, address); v != impl_->vdso.end()) {
        loc.module = std::string(kVdso);
        loc.bias = v->first;
        return loc;
    }
    if (address >> 63) {
        loc.module = std::string(kKernel);
        return loc;
    }
    if (Dwfl_Module* module = impl_->module_at(address)) {
        const char* main_file = nullptr;
        const char* name = dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr,
                                            &main_file, nullptr);
        loc.module = main_file ? main_file : (name ? name : "");
        GElf_Off offset = 0;
        GElf_Sym sym{};
        Dwarf_Addr bias = 0;
        const char* symbol =
            dwfl_module_addrinfo(module, address, &offset, &sym, nullptr, nullptr, &bias);
        loc.bias = bias;
        if (!main_file) {
            // Make libdwfl load the ELF so main_file and the bias are known.
            Dwarf_Addr elf_bias = 0;
            if (dwfl_module_getelf(module, &elf_bias)) {
                loc.bias = elf_bias;
                dwfl_module_info(module, nullptr, nullptr, nullptr, nullptr, nullptr, &main_file,
                                 nullptr);
                if (main_file) loc.module = main_file;
            }
        }
        // An ARM mapping symbol ($x: A64 code starts here, $d: data) marks a kind of bytes, not
        // a function: libdwfl falls back to it where no function symbol covers the address
        // (the stubs of .plt, whose start carries a $x).
        if (symbol && is_mapping_symbol(symbol)) symbol = nullptr;
        if (symbol) {
            // libdwfl names an address by any of its aliases; perf's pick is the one name
            // every output uses (annotation, flamegraphs, folding a perf.data file).
            auto [names, first] = impl_->perf_name.try_emplace(module);
            if (first) names->second = perf_names(module);
            if (auto alias = names->second.find(address - offset); alias != names->second.end())
                symbol = alias->second.c_str();
            loc.linkage_name = symbol;
            loc.symbol = demangle(symbol);
            loc.offset = offset;
            loc.symbol_start = address - offset;
            loc.symbol_size = sym.st_size;
        } else if (!loc.module.empty()) {
            // No symbol covers a PLT stub; perf names it after the function it jumps to.
            auto [stubs, inserted] = impl_->plt.try_emplace(module);
            if (inserted) stubs->second = plt_stubs(loc.module);
            if (Dwarf_Addr elf_bias = 0; dwfl_module_getelf(module, &elf_bias)) loc.bias = elf_bias;
            const std::uint64_t at = address - loc.bias;
            auto stub =
                std::upper_bound(stubs->second.begin(), stubs->second.end(), at,
                                 [](std::uint64_t a, const PltStub& s) { return a < s.address; });
            if (stub != stubs->second.begin() &&
                at - std::prev(stub)->address < std::prev(stub)->size) {
                --stub;
                loc.linkage_name = stub->name + "@plt";
                loc.symbol = demangle(stub->name) + "@plt";
                loc.offset = at - stub->address;
                loc.symbol_start = address - loc.offset;
                loc.symbol_size = stub->size;
            }
        }
        if (with_line) std::tie(loc.source_file, loc.source_line) = impl_->line_of(module, address);
    }
    return loc;
}

std::pair<std::string, int> SymbolResolver::source_line(std::uint64_t address) const {
    if (auto it = impl_->cache.find(address); it != impl_->cache.end())
        return {it->second.source_file, it->second.source_line};
    Dwfl_Module* module = impl_->module_at(address);
    return module ? impl_->line_of(module, address) : std::pair<std::string, int>{};
}

std::vector<std::string> SymbolResolver::inlined_at(std::uint64_t address) const {
    std::vector<std::string> names;
    for (auto& call : inlined_calls(address)) names.push_back(std::move(call.function));
    return names;
}

namespace {

// The file a DW_AT_call_file index names, in the line table of the unit holding `die`.
std::string call_file_of(Dwarf_Die* die) {
    Dwarf_Attribute attribute;
    Dwarf_Word index = 0;
    if (!dwarf_attr(die, DW_AT_call_file, &attribute) || dwarf_formudata(&attribute, &index) != 0)
        return {};
    Dwarf_Die cu;
    if (!dwarf_diecu(die, &cu, nullptr, nullptr)) return {};
    Dwarf_Files* files = nullptr;
    std::size_t count = 0;
    if (dwarf_getsrcfiles(&cu, &files, &count) != 0 || index >= count) return {};
    Dwarf_Attribute comp_dir;
    return absolute_source(dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &comp_dir)),
                           dwarf_filesrc(files, index, nullptr, nullptr));
}

int call_line_of(Dwarf_Die* die) {
    Dwarf_Attribute attribute;
    Dwarf_Word line = 0;
    if (!dwarf_attr(die, DW_AT_call_line, &attribute) || dwarf_formudata(&attribute, &line) != 0)
        return 0;
    return static_cast<int>(line);
}

}  // namespace

namespace {

// Every function with code in the unit `die` belongs to, with each of its pc ranges: the
// definitions at the unit's top level and those inside namespaces and classes (GCC puts a
// namespace's function definitions there).
void collect_functions(Dwarf_Die* parent, std::vector<FunctionRange>& functions) {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
        switch (dwarf_tag(&child)) {
            case DW_TAG_subprogram: {
                Dwarf_Addr base = 0, low = 0, high = 0;
                for (ptrdiff_t at = 0; (at = dwarf_ranges(&child, at, &base, &low, &high)) > 0;)
                    if (high > low) functions.push_back({low, high, child});
                break;
            }
            case DW_TAG_namespace:
            case DW_TAG_class_type:
            case DW_TAG_structure_type:
            case DW_TAG_union_type:
            case DW_TAG_module:
                collect_functions(&child, functions);
                break;
            default:
                break;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace

std::vector<SymbolResolver::InlinedCall> SymbolResolver::inlined_calls(
    std::uint64_t address) const {
    if (auto it = impl_->inline_cache.find(address); it != impl_->inline_cache.end())
        return it->second;
    std::vector<InlinedCall> calls;
    Dwfl_Module* module = impl_->module_at(address);
    Dwarf_Addr bias = 0;
    Dwarf_Die* cu = module ? impl_->unit_at(module, address, &bias) : nullptr;
    if (!cu) return impl_->inline_cache.emplace(address, calls).first->second;
    const Dwarf_Addr pc = address - bias;
    auto [unit, first] = impl_->functions.try_emplace(cu->addr);
    if (first) {
        collect_functions(cu, unit->second);
        std::sort(unit->second.begin(), unit->second.end(),
                  [](const auto& a, const auto& b) { return a.low < b.low; });
    }
    // The function whose code holds pc, then down its tree through the scopes that hold pc
    // (lexical blocks, inlined instances): the inlined instances on that path are the inline
    // chain, as eu-addr2line -i climbs it. Innermost first.
    const auto& functions = unit->second;
    auto holder = std::upper_bound(functions.begin(), functions.end(), pc,
                                   [](Dwarf_Addr a, const auto& f) { return a < f.low; });
    if (holder != functions.begin() && pc < std::prev(holder)->high) {
        Dwarf_Die scope = std::prev(holder)->die;
        std::vector<Dwarf_Die> instances;  // outermost first
        for (;;) {
            Dwarf_Die child;
            bool inside = false;
            if (dwarf_child(&scope, &child) == 0) do {
                    inside = dwarf_haspc(&child, pc) == 1;
                } while (!inside && dwarf_siblingof(&child, &child) == 0);
            if (!inside) break;
            if (dwarf_tag(&child) == DW_TAG_inlined_subroutine) instances.push_back(child);
            scope = child;
        }
        for (auto instance = instances.rbegin(); instance != instances.rend(); ++instance) {
            // The linkage name sits on the declaration the inlined copy's abstract origin
            // refers to (through DW_AT_specification); _integrate follows both links.
            Dwarf_Attribute attribute;
            const char* linkage = nullptr;
            if (dwarf_attr_integrate(&*instance, DW_AT_linkage_name, &attribute))
                linkage = dwarf_formstring(&attribute);
            const char* plain = dwarf_diename(&*instance);
            if (linkage || plain)
                calls.push_back({linkage ? demangle(linkage) : std::string(plain),
                                 call_file_of(&*instance), call_line_of(&*instance)});
        }
    }
    return impl_->inline_cache.emplace(address, std::move(calls)).first->second;
}

}  // namespace lockprof::symbols
