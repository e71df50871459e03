#include "lockprof/symbols/disassembler.hpp"

#include <fcntl.h>
#include <gelf.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "lockprof/arch/cpu.hpp"
#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/symbols/mnemonics.hpp"
#include "lockprof/symbols/resolver.hpp"

extern char** environ;

namespace lockprof::symbols {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool all_hex(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c)) != 0;
    });
}

// x86 prefixes objdump prints as separate words; they belong to the mnemonic.
bool is_prefix(std::string_view word) {
    static constexpr std::string_view kPrefixes[] = {
        "lock", "rep",      "repz",     "repe",   "repnz",  "repne",  "notrack",
        "bnd",  "xacquire", "xrelease", "data16", "data32", "addr32", "cs",
        "ds",   "es",       "fs",       "gs",     "ss"};
    return std::find(std::begin(kPrefixes), std::end(kPrefixes), word) != std::end(kPrefixes);
}

struct Captured {
    int status = -1;
    std::string out;
    std::string err;
};

// Runs a program without a shell (paths may hold anything) and captures both streams.
Captured capture(const std::vector<std::string>& argv) {
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0) throw Error("pipe failed");
    if (pipe2(err_pipe, O_CLOEXEC) != 0) throw Error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out_pipe[1]);
    close(err_pipe[1]);
    Captured c;
    if (rc != 0) {
        close(out_pipe[0]);
        close(err_pipe[0]);
        throw Error(fmt::format("cannot run '{}': {}; install binutils or pass --objdump PATH",
                                argv[0], std::strerror(rc)));
    }
    // objdump writes far more to stdout than to stderr; read stdout to the end first.
    char buffer[65536];
    for (ssize_t n; (n = read(out_pipe[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        c.out.append(buffer, static_cast<std::size_t>(n));
    }
    for (ssize_t n; (n = read(err_pipe[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        c.err.append(buffer, static_cast<std::size_t>(n));
    }
    close(out_pipe[0]);
    close(err_pipe[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return c;
}

}  // namespace

bool Instruction::is_branch() const {
    return classify_mnemonic(mnemonic) == InstructionClass::branch;
}

bool Instruction::is_call() const {
    return mnemonic.starts_with("call") || mnemonic == "bl";
}

std::string Instruction::listing_text() const {
    if (!is_call() || reference.empty()) return text();
    return text() + " <" + reference + ">";
}

bool Instruction::is_atomic() const {
    if (mnemonic == "bl") return is_outline_atomic_helper(reference);
    // x86 xchg is a locked read-modify-write only on memory: between registers it is a swap,
    // and `xchg %ax,%ax` is the two-byte nop compilers pad with.
    if (mnemonic == "xchg" && operands.find('(') == std::string::npos) return false;
    return symbols::is_atomic(classify_mnemonic(mnemonic));
}

std::vector<Instruction> parse_objdump(std::string_view output) {
    std::vector<Instruction> out;
    std::size_t pos = 0;
    while (pos < output.size()) {
        std::size_t eol = output.find('\n', pos);
        if (eol == std::string_view::npos) eol = output.size();
        std::string_view line = output.substr(pos, eol - pos);
        pos = eol + 1;

        // "  64270:\t55                   \tpush   %rbp"
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view address = trim(line.substr(0, colon));
        // A 64-bit address: at most 16 hex digits.
        if (!all_hex(address) || address.size() > 16 || line.size() <= colon + 1 ||
            line[colon + 1] != '\t')
            continue;
        std::string_view rest = line.substr(colon + 2);
        const std::size_t tab = rest.find('\t');
        if (tab == std::string_view::npos) continue;  // a bytes-only continuation line
        Instruction insn;
        insn.address = std::stoull(std::string(address), nullptr, 16);
        std::string_view bytes = trim(rest.substr(0, tab));
        bool encoding = true;  // the column between the tabs is hex words: "f0 0f b1", "b8a28001"
        while (!bytes.empty()) {
            const std::size_t space = bytes.find(' ');
            const std::string_view word = bytes.substr(0, space);
            if (!all_hex(word)) {
                encoding = false;
                break;
            }
            // x86 prints bytes, aarch64 one 32-bit word (most significant byte first).
            for (std::size_t i = 0; i + 1 < word.size(); i += 2)
                insn.bytes.push_back(static_cast<std::uint8_t>(
                    std::stoul(std::string(word.substr(i, 2)), nullptr, 16)));
            if (space == std::string_view::npos) break;
            bytes = trim(bytes.substr(space));
        }
        if (!encoding) continue;  // not an instruction line, whatever its start looked like
        std::string_view text = trim(rest.substr(tab + 1));
        if (text.empty() || text == "(bad)") continue;
        // Comments: aarch64 "// ...", x86 "# ..." (aarch64 immediates "#1" have no space).
        std::size_t comment = text.find("//");
        if (comment == std::string_view::npos) comment = text.find("# ");
        if (comment != std::string_view::npos) {
            insn.comment = std::string(trim(text.substr(comment + (text[comment] == '#' ? 1 : 2))));
            text = trim(text.substr(0, comment));
            if (text.empty()) continue;  // a comment alone is no instruction
        }
        // Mnemonic: first word, with x86 prefixes joined.
        std::string mnemonic;
        while (!text.empty()) {
            const std::size_t end = text.find_first_of(" \t");
            const std::string_view word = text.substr(0, end);
            mnemonic += mnemonic.empty() ? std::string(word) : " " + std::string(word);
            text = end == std::string_view::npos ? std::string_view() : trim(text.substr(end));
            if (!is_prefix(word)) break;
        }
        insn.mnemonic = std::move(mnemonic);
        std::string_view operands = text;
        const std::size_t ref = operands.find('<');
        if (ref != std::string_view::npos && operands.back() == '>') {
            insn.reference = std::string(operands.substr(ref + 1, operands.size() - ref - 2));
            operands = trim(operands.substr(0, ref));
        }
        insn.operands = std::string(operands);
        if (!insn.reference.empty() || insn.is_branch()) {
            // The target is the last operand: "642c0", "w1, 400550", "w0, #3, 400550".
            std::string_view last = operands;
            const std::size_t sep = last.find_last_of(", ");
            if (sep != std::string_view::npos) last = last.substr(sep + 1);
            if (last.rfind("0x", 0) == 0) last.remove_prefix(2);
            if (all_hex(last) && last.size() <= 16)
                insn.branch_target = std::stoull(std::string(last), nullptr, 16);
        }
        out.push_back(std::move(insn));
    }
    return out;
}

std::string default_objdump(const std::filesystem::path& binary) {
    std::ifstream in(binary, std::ios::binary);
    unsigned char header[20] = {};
    in.read(reinterpret_cast<char*>(header), sizeof header);
    if (in && std::memcmp(header, "\177ELF", 4) == 0) {
        const unsigned machine =
            header[5] == 1 ? header[18] | (header[19] << 8) : (header[18] << 8) | header[19];
        // The host's own objdump reads its own architecture; a foreign one needs the cross
        // binutils. An aarch64 lockprof under qemu-user on an x86 host also lands here: the
        // `objdump` it would exec is the host's x86 one, so the cross one wins where present.
        if (machine == EM_AARCH64 &&
            (arch::kArchName != "aarch64" || program_exists("aarch64-linux-gnu-objdump")))
            return "aarch64-linux-gnu-objdump";
        if (arch::kArchName != "x86_64" && machine == EM_X86_64) return "x86_64-linux-gnu-objdump";
    }
    return "objdump";
}

std::vector<Instruction> Disassembler::disassemble(const std::filesystem::path& binary,
                                                   std::uint64_t start, std::uint64_t end) const {
    const std::string objdump = objdump_for(binary);
    const Captured c = capture({objdump, "-d", "-w", fmt::format("--start-address=0x{:x}", start),
                                fmt::format("--stop-address=0x{:x}", end), binary.string()});
    if (c.status != 0) {
        std::string why(trim(c.err));
        if (const auto nl = why.find('\n'); nl != std::string::npos) why.resize(nl);
        throw Error(fmt::format("{} failed on '{}' (exit {}): {}", objdump, binary.string(),
                                c.status, why.empty() ? "no message" : why));
    }
    return parse_objdump(c.out);
}

std::vector<FunctionCode> function_symbols(const std::filesystem::path& binary) {
    const int fd = open(binary.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw Error(fmt::format("cannot open '{}': {}", binary.string(), std::strerror(errno)));
    elf_version(EV_CURRENT);
    Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        if (elf) elf_end(elf);
        close(fd);
        throw Error(fmt::format("'{}' is not an ELF file", binary.string()));
    }
    std::vector<FunctionCode> functions;
    for (const Elf64_Word wanted : {SHT_SYMTAB, SHT_DYNSYM}) {
        for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
            GElf_Shdr shdr;
            if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != wanted) continue;
            Elf_Data* data = elf_getdata(scn, nullptr);
            const std::size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
            for (std::size_t i = 0; data && i < count; ++i) {
                GElf_Sym sym;
                if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
                if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size == 0 ||
                    sym.st_shndx == SHN_UNDEF)
                    continue;
                const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
                if (!name) continue;
                FunctionCode f;
                f.mangled = name;
                f.name = demangle(name);
                f.address = sym.st_value;
                f.size = sym.st_size;
                functions.push_back(std::move(f));
            }
        }
        if (!functions.empty()) break;  // .symtab has everything .dynsym has
    }
    elf_end(elf);
    close(fd);
    std::sort(functions.begin(), functions.end(),
              [](const auto& a, const auto& b) { return a.address < b.address; });
    functions.erase(
        std::unique(functions.begin(), functions.end(),
                    [](const auto& a, const auto& b) { return a.address == b.address; }),
        functions.end());
    return functions;
}

std::vector<FunctionCode> Disassembler::disassemble_functions(const std::filesystem::path& binary,
                                                              std::string_view pattern,
                                                              std::size_t limit) const {
    std::vector<FunctionCode> matches, exact;
    for (auto& f : function_symbols(binary)) {
        const bool is_exact =
            f.mangled == pattern || f.name == pattern ||
            (f.name.size() > pattern.size() && f.name.compare(0, pattern.size(), pattern) == 0 &&
             f.name[pattern.size()] == '(');
        if (is_exact && exact.size() < limit) exact.push_back(f);
        if (f.name.find(pattern) != std::string::npos && matches.size() < limit)
            matches.push_back(std::move(f));
    }
    // A name that matches exactly means that function, not also its .cold parts or others
    // that merely contain the name.
    if (!exact.empty()) matches = std::move(exact);
    for (auto& f : matches) f.instructions = disassemble(binary, f.address, f.address + f.size);
    return matches;
}

}  // namespace lockprof::symbols
