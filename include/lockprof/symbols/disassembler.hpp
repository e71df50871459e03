// Disassembly with GNU objdump, parsed into instructions.
//
// Why objdump and not a library: Capstone 4 (the Debian version) cannot decode the ARMv8.1
// LSE atomics (swpal, casa) this tool exists to compare, and objdump is what perf annotate
// uses. aarch64 binaries on another host need binutils-aarch64-linux-gnu's objdump;
// default_objdump() picks it from the ELF header.
//
// Reusable beyond annotation: `lockprof list-locks --disasm` disassembles a lock's kernels by
// name with disassemble_functions().
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockprof::symbols {

struct Instruction {
    std::uint64_t address = 0;        // file (link-time) address, as objdump prints it
    std::vector<std::uint8_t> bytes;  // encoding as objdump prints it (aarch64: one word)
    std::string mnemonic;             // with x86 prefixes joined: "lock cmpxchg"
    std::string operands;             // without objdump's "<symbol+off>" and comments
    std::string reference;            // the "<symbol+off>" objdump appended, "" if none
    std::string comment;              // after "#" (x86) or "//" (aarch64)
    std::optional<std::uint64_t> branch_target;  // direct branches and calls

    std::string text() const { return operands.empty() ? mnemonic : mnemonic + " " + operands; }
    // A direct call ("call" on x86, "bl" on aarch64).
    bool is_call() const;
    // text() as a listing shows it: a call names what it reaches, "call 1030
    // <pthread_spin_lock@plt>", where a bare address says nothing.
    std::string listing_text() const;
    bool is_branch() const;  // any direct or conditional jump (not calls): mnemonics.hpp
    // An atomic read-modify-write (mnemonics.hpp's is_atomic; an x86 xchg only with a memory
    // operand) or a call to an outline-atomics helper ("bl __aarch64_swp4_acq").
    bool is_atomic() const;
    bool is_backward_branch() const {
        return is_branch() && branch_target && *branch_target <= address;
    }
};

// A function from a binary's symbol table, with its instructions.
struct FunctionCode {
    std::string name;           // demangled
    std::string mangled;        // as in the symbol table
    std::uint64_t address = 0;  // file address
    std::uint64_t size = 0;
    std::vector<Instruction> instructions;
};

// Parses `objdump -d -w` output (x86-64 AT&T or aarch64). Lines that are not instructions
// (headers, labels, "...") are skipped.
std::vector<Instruction> parse_objdump(std::string_view output);

// The objdump that can read `binary`: aarch64-linux-gnu-objdump for aarch64 ELF files on other
// hosts, else objdump.
std::string default_objdump(const std::filesystem::path& binary);

class Disassembler {
  public:
    // `objdump`: program to run; "" picks default_objdump() per binary.
    explicit Disassembler(std::string objdump = "") : objdump_(std::move(objdump)) {}

    // The objdump that disassembles `binary`: the one given, else default_objdump(binary).
    std::string objdump_for(const std::filesystem::path& binary) const {
        return objdump_.empty() ? default_objdump(binary) : objdump_;
    }

    // Instructions in [start, end) (file addresses) of `binary`. Throws Error when objdump
    // cannot be run or fails.
    std::vector<Instruction> disassemble(const std::filesystem::path& binary, std::uint64_t start,
                                         std::uint64_t end) const;

    // The functions of `binary` named `pattern` (demangled, with or without the parameter
    // list, or mangled); when none is, every function whose demangled name contains it. Up to
    // `limit`, in address order. Throws Error for unreadable binaries.
    std::vector<FunctionCode> disassemble_functions(const std::filesystem::path& binary,
                                                    std::string_view pattern,
                                                    std::size_t limit = 64) const;

  private:
    std::string objdump_;
};

// Function symbols (STT_FUNC with a size) of an ELF file: name demangled, file address, size.
std::vector<FunctionCode> function_symbols(const std::filesystem::path& binary);

}  // namespace lockprof::symbols
