#include "lockprof/symbols/elf_lookup.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

namespace lockprof::symbols {
namespace {

// An ELF file open for reading; closed on destruction.
struct ElfFile {
    int fd = -1;
    Elf* elf = nullptr;
    explicit ElfFile(const std::string& path) {
        fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return;
        elf_version(EV_CURRENT);
        elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
        if (elf && elf_kind(elf) != ELF_K_ELF) {
            elf_end(elf);
            elf = nullptr;
        }
    }
    ~ElfFile() {
        if (elf) elf_end(elf);
        if (fd >= 0) close(fd);
    }
    ElfFile(const ElfFile&) = delete;
    ElfFile& operator=(const ElfFile&) = delete;
};

bool name_matches(std::string_view symbol, std::string_view name) {
    if (!symbol.starts_with(name)) return false;
    return symbol.size() == name.size() || symbol[name.size()] == '@';
}

// Searches the section of type `type` (SHT_SYMTAB, SHT_DYNSYM); sets `present` when it exists.
std::optional<FunctionSymbol> search(Elf* elf, unsigned type, const std::string& name,
                                     bool& present) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type || shdr.sh_entsize == 0) continue;
        present = true;
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (!data) continue;
        const std::size_t count = shdr.sh_size / shdr.sh_entsize;
        for (std::size_t i = 0; i < count; ++i) {
            GElf_Sym sym;
            if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
            const int kind = GELF_ST_TYPE(sym.st_info);
            if ((kind != STT_FUNC && kind != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
                sym.st_value == 0)
                continue;
            const char* symbol = elf_strptr(elf, shdr.sh_link, sym.st_name);
            if (!symbol || !name_matches(symbol, name)) continue;
            FunctionSymbol f;
            f.name = symbol;
            f.address = sym.st_value;
            f.size = sym.st_size;
            f.exported = type == SHT_DYNSYM;
            return f;
        }
    }
    return std::nullopt;
}

std::string debug_file(const std::string& build_id, const std::string& debug_root) {
    if (build_id.size() < 3) return "";
    return fmt::format("{}/.build-id/{}/{}.debug", debug_root, build_id.substr(0, 2),
                       build_id.substr(2));
}

struct Dynamic {
    int machine = -1;
    std::vector<std::string> needed, search;  // search: rpath/runpath folders, $ORIGIN expanded
};

Dynamic read_dynamic(const std::string& path) {
    Dynamic out;
    ElfFile file(path);
    if (!file.elf) return out;
    GElf_Ehdr ehdr;
    if (!gelf_getehdr(file.elf, &ehdr)) return out;
    out.machine = ehdr.e_machine;
    const std::string origin = std::filesystem::path(path).parent_path().string();
    for (Elf_Scn* scn = elf_nextscn(file.elf, nullptr); scn; scn = elf_nextscn(file.elf, scn)) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC || shdr.sh_entsize == 0)
            continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        if (!data) continue;
        for (std::size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; ++i) {
            GElf_Dyn dyn;
            if (!gelf_getdyn(data, static_cast<int>(i), &dyn)) continue;
            if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH)
                continue;
            const char* text = elf_strptr(file.elf, shdr.sh_link, dyn.d_un.d_val);
            if (!text) continue;
            if (dyn.d_tag == DT_NEEDED) {
                out.needed.emplace_back(text);
                continue;
            }
            std::string list = text;
            std::size_t start = 0;
            while (start <= list.size()) {
                std::size_t end = list.find(':', start);
                if (end == std::string::npos) end = list.size();
                std::string dir = list.substr(start, end - start);
                for (const char* token : {"$ORIGIN", "${ORIGIN}"})
                    if (const auto at = dir.find(token); at != std::string::npos)
                        dir.replace(at, std::string_view(token).size(), origin);
                if (!dir.empty()) out.search.push_back(dir);
                start = end + 1;
            }
        }
    }
    return out;
}

void add_conf(const std::filesystem::path& conf, std::vector<std::string>& dirs, int depth) {
    std::ifstream in(conf);
    std::string line;
    while (depth < 4 && std::getline(in, line)) {
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
        if (line.starts_with("include ")) {
            std::string pattern = line.substr(8);
            std::filesystem::path folder = std::filesystem::path(pattern).parent_path();
            if (folder.is_relative()) folder = conf.parent_path() / folder;
            std::error_code ec;
            std::set<std::filesystem::path> files;
            for (const auto& e : std::filesystem::directory_iterator(folder, ec))
                if (e.path().extension() == ".conf") files.insert(e.path());
            for (const auto& f : files) add_conf(f, dirs, depth + 1);
        } else if (line.starts_with('/')) {
            dirs.push_back(line);
        }
    }
}

std::vector<std::string> system_folders() {
    std::vector<std::string> dirs;
    add_conf("/etc/ld.so.conf", dirs, 0);
    for (const char* d : {"/lib", "/usr/lib", "/lib64", "/usr/lib64"}) dirs.emplace_back(d);
    // Debian's multiarch folders (/lib/x86_64-linux-gnu); the machine check picks the right one.
    for (const char* base : {"/lib", "/usr/lib"}) {
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator(base, ec))
            if (e.path().filename().string().ends_with("-linux-gnu") && e.is_directory(ec))
                dirs.push_back(e.path().string());
    }
    return dirs;
}

int machine_of(const std::string& path) {
    ElfFile file(path);
    GElf_Ehdr ehdr;
    return file.elf && gelf_getehdr(file.elf, &ehdr) ? ehdr.e_machine : -1;
}

}  // namespace

std::optional<std::uint64_t> file_offset_of(const ElfImage& image, std::uint64_t address) {
    for (const auto& seg : image.segments)
        if (address >= seg.vaddr && address < seg.vaddr + seg.filesz)
            return address - seg.vaddr + seg.offset;
    return std::nullopt;
}

FunctionSearch find_function(const std::string& path, const std::string& name,
                             const std::string& debug_root) {
    FunctionSearch out;
    ElfImage image;
    if (!elf_image(path, image)) return out;
    out.readable = true;
    std::optional<FunctionSymbol> found;
    {
        ElfFile file(path);
        if (!file.elf) return out;
        bool dyn = false;
        found = search(file.elf, SHT_SYMTAB, name, out.has_symtab);
        if (found) {
            // The same function exported too: say so.
            bool ignored = false;
            found->exported = search(file.elf, SHT_DYNSYM, name, ignored).has_value();
        } else {
            found = search(file.elf, SHT_DYNSYM, name, dyn);
        }
    }
    if (!found && !out.has_symtab) {
        const std::string debug = debug_file(build_id_of(path), debug_root);
        if (!debug.empty() && std::filesystem::exists(debug)) {
            ElfFile file(debug);
            if (file.elf) found = search(file.elf, SHT_SYMTAB, name, out.has_symtab);
        }
    }
    if (!found) return out;
    const auto offset = file_offset_of(image, found->address);
    if (!offset) return out;
    found->file_offset = *offset;
    out.found = std::move(found);
    return out;
}

std::vector<std::string> needed_libraries(const std::string& path) {
    std::vector<std::string> out;
    const Dynamic top = read_dynamic(path);
    if (top.machine < 0) return out;
    std::vector<std::string> environment;
    if (const char* env = std::getenv("LD_LIBRARY_PATH")) {
        std::string list = env;
        std::size_t start = 0;
        while (start <= list.size()) {
            std::size_t end = list.find(':', start);
            if (end == std::string::npos) end = list.size();
            if (end > start) environment.push_back(list.substr(start, end - start));
            start = end + 1;
        }
    }
    const std::vector<std::string> system = system_folders();
    std::set<std::string> names_done;
    std::deque<std::pair<std::string, std::vector<std::string>>> queue;  // name, rpath folders
    for (const auto& n : top.needed) queue.emplace_back(n, top.search);
    while (!queue.empty()) {
        auto [name, rpath] = std::move(queue.front());
        queue.pop_front();
        if (!names_done.insert(name).second) continue;
        std::string found;
        if (name.find('/') != std::string::npos) {
            if (machine_of(name) == top.machine) found = name;
        } else {
            const std::vector<std::string>* lists[] = {&rpath, &environment, &system};
            for (const auto* list : lists) {
                for (const auto& dir : *list) {
                    const std::string candidate = dir + "/" + name;
                    if (::access(candidate.c_str(), R_OK) == 0 &&
                        machine_of(candidate) == top.machine) {
                        found = candidate;
                        break;
                    }
                }
                if (!found.empty()) break;
            }
        }
        if (found.empty()) continue;
        std::error_code ec;
        const auto canonical = std::filesystem::canonical(found, ec);
        if (!ec) found = canonical.string();
        if (std::find(out.begin(), out.end(), found) != out.end()) continue;
        out.push_back(found);
        const Dynamic lib = read_dynamic(found);
        for (const auto& n : lib.needed) queue.emplace_back(n, lib.search);
    }
    return out;
}

}  // namespace lockprof::symbols
