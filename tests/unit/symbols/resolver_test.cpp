// Address to symbol and line for this test binary, live and from saved mappings.
#include "lockprof/symbols/resolver.hpp"

#include "lockprof/symbols/disassembler.hpp"
#include "support/sanitizers.hpp"
#include "support/temp_dir.hpp"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace lockprof::symbols {
namespace {

__attribute__((noinline)) int lockprof_resolver_probe(int x) {
    asm volatile("" ::: "memory");
    return x * 3 + 1;
}

std::uint64_t probe_address() {
    return reinterpret_cast<std::uint64_t>(&lockprof_resolver_probe);
}

TEST(SymbolResolver, ResolvesAFunctionOfThisProcess) {
    ASSERT_EQ(lockprof_resolver_probe(1), 4);
    const auto resolver = SymbolResolver::for_process();
    const auto loc = resolver.resolve(probe_address() + 1);
    ASSERT_TRUE(loc.has_symbol());
    EXPECT_NE(loc.symbol.find("lockprof_resolver_probe"), std::string::npos) << loc.symbol;
    EXPECT_EQ(loc.offset, 1u);
    EXPECT_EQ(loc.symbol_start, probe_address());
    EXPECT_GT(loc.symbol_size, 1u);
    EXPECT_NE(loc.module.find("lockprof_unit_tests"), std::string::npos) << loc.module;
    EXPECT_NE(loc.source_file.find("resolver_test.cpp"), std::string::npos) << loc.source_file;
    EXPECT_GT(loc.source_line, 0);
}

// clang writes no .debug_aranges unless told to (-gdwarf-aranges), and libdwfl of elfutils 0.188
// finds a unit only through them: lines and inline chains of clang-built code were missing.
TEST(SymbolResolver, LinesOfClangBuiltCodeWithoutArangesAreFound) {
    if (std::system("command -v clang++ >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "clang++ is not installed (scripts/setup.sh --extras installs it)";
    const test::TempDir dir;
    const auto source = dir.path / "clang_lines.cpp";
    const auto library = dir.path / "libclang_lines.so";
    std::ofstream(source) << "extern \"C\" int lockprof_clang_lines(int x) {\n"
                             "    return x * 7 + 3;\n"
                             "}\n";
    // For this process's machine, as uname(2) gives it: under qemu-user the shell's clang++ is
    // the host's, and the library must be one this (emulated) process can load. No C library
    // is needed, so none is linked, and any clang cross-compiles it.
    utsname machine{};
    ASSERT_EQ(uname(&machine), 0);
    const std::string compile = std::string("clang++ --target=") + machine.machine +
                                "-linux-gnu -nostdlib -O1 -g -fPIC -shared -o '" +
                                library.string() + "' '" + source.string() + "'";
    ASSERT_EQ(std::system(compile.c_str()), 0) << compile;
    void* handle = dlopen(library.c_str(), RTLD_NOW);
    ASSERT_NE(handle, nullptr) << dlerror();
    auto* function = reinterpret_cast<int (*)(int)>(dlsym(handle, "lockprof_clang_lines"));
    ASSERT_NE(function, nullptr);
    EXPECT_EQ(function(1), 10);
    const auto resolver = SymbolResolver::for_process();
    const auto loc = resolver.resolve(reinterpret_cast<std::uint64_t>(function));
    EXPECT_EQ(loc.symbol, "lockprof_clang_lines");
    EXPECT_EQ(loc.source_file, source.string());
    EXPECT_GE(loc.source_line, 1);
    EXPECT_LE(loc.source_line, 2);
    EXPECT_EQ(resolver.source_line(reinterpret_cast<std::uint64_t>(function)).first,
              source.string());
    dlclose(handle);
}

// No ELF symbol covers a PLT stub: it is named after the function it jumps to, as perf names it
// ("strlen@plt"), not left unnamed (x86_64) or given the "$x" mapping symbol that marks the
// start of aarch64's .plt (libdwfl's fallback where no function symbol covers an address).
TEST(SymbolResolver, PltStubIsNamedAfterTheFunctionItJumpsTo) {
    const auto resolver = SymbolResolver::for_process();
    const auto probe = resolver.resolve(probe_address());
    ASSERT_TRUE(probe.has_symbol());
    const auto stubs = plt_stubs(probe.module);
    const auto named =
        std::find_if(stubs.begin(), stubs.end(), [](const PltStub& s) { return !s.name.empty(); });
    ASSERT_NE(named, stubs.end()) << probe.module << " has no named PLT stub";
    const std::uint64_t start = named->address + probe.bias;
    const auto loc = resolver.resolve(start + 4);
    EXPECT_EQ(loc.symbol, demangle(named->name) + "@plt") << loc.linkage_name;
    EXPECT_EQ(loc.linkage_name, named->name + "@plt");
    EXPECT_EQ(loc.symbol_start, start);
    EXPECT_EQ(loc.offset, 4u);
    EXPECT_EQ(loc.symbol_size, named->size);
    for (const auto& stub : stubs) {
        const auto in = resolver.resolve(stub.address + probe.bias);
        EXPECT_FALSE(in.symbol.starts_with("$")) << in.symbol << " names a PLT stub";
        EXPECT_TRUE(in.symbol.ends_with("@plt")) << in.symbol;
    }
}

// Of glibc's aliases (several names at one address) every lookup names the one perf names:
// resolve() took libdwfl's pick, so the annotation called x86_64's pthread_spin_unlock
// "pthread_spin_init" (where perf report and folding said pthread_spin_unlock), and its samples
// missed the release phase that the measured loop's call to pthread_spin_unlock@plt gives them.
TEST(SymbolResolver, AliasesAreNamedAlikeByEveryLookup) {
    const auto resolver = SymbolResolver::for_process();
    int compared = 0;
    for (const char* name : {"pthread_spin_unlock", "pthread_spin_init", "pthread_spin_lock",
                             "mmap", "mmap64", "pthread_mutex_lock", "munmap", "sched_yield"}) {
        void* at = dlsym(RTLD_DEFAULT, name);
        if (!at) continue;
        const auto address = reinterpret_cast<std::uint64_t>(at);
        const auto full = resolver.resolve(address);
        const auto plain = resolver.resolve_symbol(address);
        if (!full.has_symbol()) continue;
        ++compared;
        EXPECT_EQ(full.symbol, plain.symbol) << name;
        EXPECT_EQ(full.linkage_name, plain.linkage_name) << name;
    }
    EXPECT_GT(compared, 0) << "no libc function resolved";
    void* unlock = dlsym(RTLD_DEFAULT, "pthread_spin_unlock");
    if (!unlock || unlock != dlsym(RTLD_DEFAULT, "pthread_spin_init"))
        GTEST_SKIP() << "this libc's pthread_spin_unlock is no alias of pthread_spin_init";
    // Both sized, global and without leading underscores: the longer name wins, as perf report
    // printed on Debian 12's glibc 2.36 ("pthread_spin_unlock@@GLIBC_2.34").
    // (The symbol keeps its version: "pthread_spin_unlock@@GLIBC_2.34".)
    const auto symbol = resolver.resolve(reinterpret_cast<std::uint64_t>(unlock)).symbol;
    EXPECT_EQ(symbol.substr(0, symbol.find('@')), "pthread_spin_unlock") << symbol;
}

TEST(ParseMaps, KeepsFilesAndTheVdso) {
    const auto modules = parse_maps(
        "55d0c0000000-55d0c0100000 r-xp 00001000 fd:01 1234 /usr/lib/postgresql/15/bin/postgres\n"
        "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 [vdso]\n"
        "7f0000002000-7f0000003000 r-xp 00000000 fd:01 99 /tmp/lib.so (deleted)\n"
        "7f0000004000-7f0000005000 rw-p 00000000 00:00 0 \n"
        "7f0000006000-7f0000007000 r-xp 00000000 fd:01 98 /tmp/with spaces/lib.so\n");
    ASSERT_EQ(modules.size(), 3u);
    EXPECT_EQ(modules[0].path, "/usr/lib/postgresql/15/bin/postgres");
    EXPECT_EQ(modules[0].start, 0x55d0c0000000u);
    EXPECT_EQ(modules[0].end, 0x55d0c0100000u);
    EXPECT_EQ(modules[0].offset, 0x1000u);
    EXPECT_EQ(modules[0].permissions, "r-xp");
    EXPECT_EQ(modules[1].path, kVdso);
    EXPECT_EQ(modules[2].path, "/tmp/with spaces/lib.so");
}

// maps_entries is the one reader of maps text: every mapping, anonymous memory and the
// kernel's special pages included (record finds the [uprobes] page and the executable
// mappings through it); parse_maps keeps its files and the vDSO.
TEST(ParseMaps, EntriesAreEveryMappingAndParseMapsTheirFiles) {
    const std::string text =
        "55d0c0000000-55d0c0100000 r-xp 00001000 fd:01 1234 /usr/bin/prog\n"
        "7f0000004000-7f0000005000 rw-p 00000000 00:00 0 \n"
        "7fff00000000-7fff00001000 r-xp 00000000 00:00 0 [uprobes]\n"
        "zz-10 r-xp 00000000 fd:01 1 /usr/bin/b\n";
    const auto entries = maps_entries(text);
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[1].path, "");
    EXPECT_EQ(entries[1].permissions, "rw-p");
    EXPECT_EQ(entries[2].path, "[uprobes]");
    EXPECT_EQ(entries[2].start, 0x7fff00000000u);
    const auto files = parse_maps(text);
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(files[0], entries[0]);
}

// Found by fuzz_proc_maps: an address past 64 bits or not hex threw std::out_of_range or
// std::invalid_argument from stoull, which `record` would report as "internal error: stoull".
// A line that does not say where a file is mapped is no mapping: skipped.
TEST(ParseMaps, MalformedLinesAreSkipped) {
    const auto modules = parse_maps(
        "1ffffffffffffffff-2ffffffffffffffff r-xp 00000000 fd:01 1 /usr/bin/a\n"
        "zz-10 r-xp 00000000 fd:01 1 /usr/bin/b\n"
        "1000 r-xp 00000000 fd:01 1 /usr/bin/c\n"
        "1000-2000 r-xp 1ffffffffffffffff fd:01 1 /usr/bin/d\n"
        "2000-1000 r-xp 00000000 fd:01 1 /usr/bin/e\n"
        "1000-2000 r-xp 00000000 fd:01 1 /usr/bin/ok\n");
    ASSERT_EQ(modules.size(), 1u);
    EXPECT_EQ(modules[0].path, "/usr/bin/ok");
}

TEST(SymbolResolver, SavedMappingsResolveLikeTheLiveProcess) {
    const auto modules = process_modules();
    ASSERT_FALSE(modules.empty());
    bool has_build_id = false;
    for (const auto& m : modules) has_build_id |= !m.build_id.empty();
    EXPECT_TRUE(has_build_id);
    const SymbolResolver saved(modules);
    const auto live = SymbolResolver::for_process().resolve(probe_address() + 2);
    const auto again = saved.resolve(probe_address() + 2);
    EXPECT_EQ(again.symbol, live.symbol);
    EXPECT_EQ(again.bias, live.bias);
    EXPECT_EQ(again.source_line, live.source_line);
    EXPECT_TRUE(saved.changed_modules().empty());
}

TEST(SymbolResolver, ChangedBuildIdIsReported) {
    auto modules = process_modules();
    for (auto& m : modules)
        if (!m.build_id.empty()) m.build_id = "00";
    const SymbolResolver saved(modules);
    EXPECT_FALSE(saved.changed_modules().empty());
}

TEST(SymbolResolver, SavedMappingsFollowACopyOfTheBinaryThatRan) {
    // This test binary, as if it had run on another machine: recorded under a path that does
    // not exist here, annotated from a copy with the same build id.
    auto modules = process_modules();
    const std::string self = std::filesystem::canonical("/proc/self/exe").string();
    std::size_t recorded = 0;
    for (auto& m : modules)
        if (m.path == self) {
            m.path = "/elsewhere/lockprof_unit_tests";
            ++recorded;
        }
    ASSERT_GT(recorded, 0u);
    const auto copy = std::filesystem::temp_directory_path() / "lockprof-resolver-copy";
    std::filesystem::copy_file(self, copy, std::filesystem::copy_options::overwrite_existing);
    const auto redirected = redirect_modules(modules, copy.string(), build_id_of(copy.string()));
    EXPECT_TRUE(redirected.refusal.empty()) << redirected.refusal;
    EXPECT_EQ(redirected.mappings, recorded);
    const SymbolResolver resolver(modules);
    EXPECT_TRUE(resolver.changed_modules().empty());
    const auto loc = resolver.resolve(probe_address());
    EXPECT_NE(loc.symbol.find("lockprof_resolver_probe"), std::string::npos) << loc.symbol;
    EXPECT_EQ(loc.module, copy.string());
    std::filesystem::remove(copy);
}

TEST(SymbolResolver, ACopyWithAnotherBuildIdIsRefused) {
    std::vector<measure::MappedModule> modules = {
        {std::string(kVdso), 0x7000, 0x8000, 0, "r-xp", ""},
        {"/root/lockprof", 0x1000, 0x2000, 0, "r-xp", "aaaa"},
        {"/lib/libc.so.6", 0x3000, 0x4000, 0, "r-xp", "cccc"}};
    auto r = redirect_modules(modules, "/tmp/x/lockprof", "bbbb");
    EXPECT_EQ(r.mappings, 0u);
    EXPECT_EQ(r.refusal,
              "--binary: '/tmp/x/lockprof' is not the binary that ran: its build id is bbbb, the "
              "run's '/root/lockprof' had aaaa; copy that very file (a rebuild differs)");
    EXPECT_EQ(modules[1].path, "/root/lockprof");  // nothing changed
    // Compared with the recorded file of the same name, else the first one mapped.
    EXPECT_NE(redirect_modules(modules, "/tmp/libc.so.6", "dddd").refusal.find("'/lib/libc.so.6'"),
              std::string::npos);
    EXPECT_NE(redirect_modules(modules, "/tmp/other", "dddd").refusal.find("'/root/lockprof'"),
              std::string::npos);
    EXPECT_NE(redirect_modules(modules, "/tmp/x/lockprof", "").refusal.find("no GNU build id"),
              std::string::npos);
    // A library copy redirects only its own mappings.
    r = redirect_modules(modules, "/tmp/libc.so.6", "cccc");
    EXPECT_TRUE(r.refusal.empty());
    EXPECT_EQ(r.mappings, 1u);
    EXPECT_EQ(modules[2].path, "/tmp/libc.so.6");
    EXPECT_EQ(modules[1].path, "/root/lockprof");
}

TEST(SymbolResolver, UnmappedAddressHasNoSymbol) {
    const auto loc = SymbolResolver::for_process().resolve(0x10);
    EXPECT_FALSE(loc.has_symbol());
    EXPECT_TRUE(loc.module.empty());
}

// A user-space-only hardware sample can still carry a kernel address: the overflow interrupt
// may be taken after the thread entered the kernel (skid; QEMU raises it at the end of a
// translation block). Such frames are the kernel's, not "[unknown]".
TEST(SymbolResolver, KernelHalfAddressesAreTheKernels) {
    const auto resolver = SymbolResolver::for_process();
    for (const std::uint64_t address : {0xffff800008123456ull, 0xffffffff81000000ull}) {
        const auto loc = resolver.resolve(address);
        EXPECT_FALSE(loc.has_symbol());
        EXPECT_EQ(loc.module, kKernel) << std::hex << address;
    }
}

TEST(SymbolResolver, InlineChainReachesTheLockInsideTheMeasuredLoop) {
#if defined(LOCKPROF_TEST_TSAN)
    GTEST_SKIP() << "TSan turns atomics into calls into its runtime: there is no xchg/cmpxchg "
                    "instruction to find. Runs in the other builds";
#endif
    // The tas kernel linked into this binary: its exchange is TasLock::exchange inlined into
    // retry_acquire, TasLock::lock and the loop of measured_loop. The annotation's acquire-loop
    // marking relies on seeing lock() in that chain.
    const auto resolver = SymbolResolver::for_process();
    const std::uint64_t bias = resolver.resolve(probe_address()).bias;
    const Disassembler disassembler;
    const auto functions =
        disassembler.disassemble_functions(std::filesystem::read_symlink("/proc/self/exe"),
                                           "TasLock<(lockprof::arch::Delay)0>, false>");
    ASSERT_FALSE(functions.empty());
    bool found = false;
    for (const auto& i : functions[0].instructions) {
        // x86 xchg; aarch64 swp (LSE), ldxr/stxr (LL/SC) or a call to the outline-atomics
        // helper (GCC's default on Debian aarch64).
        const bool outline_call =
            i.mnemonic == "bl" && i.reference.find("__aarch64_swp") != std::string::npos;
        if (i.mnemonic != "xchg" && i.mnemonic.rfind("swp", 0) != 0 &&
            i.mnemonic.rfind("stxr", 0) != 0 && i.mnemonic.rfind("ldxr", 0) != 0 && !outline_call)
            continue;
        const auto chain = resolver.inlined_at(i.address + bias);
        std::string all;
        for (const auto& name : chain) all += name + "\n";
        EXPECT_NE(all.find("TasLock<(lockprof::arch::Delay)0>::lock("), std::string::npos) << all;
        EXPECT_NE(all.find("TasLock<(lockprof::arch::Delay)0>::exchange("), std::string::npos)
            << all;
        found = true;
    }
    EXPECT_TRUE(found) << "no exchange instruction in " << functions[0].name;
    EXPECT_TRUE(resolver.inlined_at(probe_address()).empty());
}

// The inline chain as libdw's dwarf_getscopes gives it (what the resolver did before it
// indexed each unit's functions, and what eu-addr2line -i does): the innermost inlined
// instance holding pc, then each inlined instance around it. Names only, innermost first.
std::vector<std::string> getscopes_chain(Dwfl* dwfl, std::uint64_t address) {
    std::vector<std::string> names;
    Dwfl_Module* module = dwfl_addrmodule(dwfl, address);
    Dwarf_Addr bias = 0;
    Dwarf_Die* cu = module ? dwfl_module_addrdie(module, address, &bias) : nullptr;
    // clang writes no .debug_aranges, and then libdw finds no unit by address: each unit's
    // ranges, as the resolver reads them too.
    for (Dwarf_Die* unit = nullptr;
         !cu && module && (unit = dwfl_module_nextcu(module, unit, &bias)) != nullptr;)
        if (dwarf_haspc(unit, address - bias) > 0) cu = unit;
    if (!cu) return names;
    Dwarf_Die* scopes = nullptr;
    int n = dwarf_getscopes(cu, address - bias, &scopes);
    for (int i = 0; i < n;) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) {
            ++i;
            continue;
        }
        Dwarf_Attribute attribute;
        const char* linkage = nullptr;
        if (dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &attribute))
            linkage = dwarf_formstring(&attribute);
        const char* plain = dwarf_diename(&scopes[i]);
        if (linkage || plain) names.push_back(linkage ? demangle(linkage) : std::string(plain));
        Dwarf_Die instance = scopes[i];
        std::free(scopes);
        scopes = nullptr;
        n = dwarf_getscopes_die(&instance, &scopes);
        i = 1;
    }
    std::free(scopes);
    return names;
}

// The resolver finds the function holding an address in a per-unit index and climbs only its
// scopes; for every instruction of the measured loop of tas (inlined lock(), exchange, delays,
// the harness) the chain is the one libdw's whole-unit walk gives.
TEST(SymbolResolver, IndexedInlineChainsAreThoseOfTheWholeUnitWalk) {
    const auto resolver = SymbolResolver::for_process();
    const std::uint64_t bias = resolver.resolve(probe_address()).bias;
    if (resolver.source_line(probe_address()).first.empty())
        GTEST_SKIP() << "this build has no debug information (-g): no inline chains to compare";
    const Disassembler disassembler;
    const auto functions =
        disassembler.disassemble_functions(std::filesystem::read_symlink("/proc/self/exe"),
                                           "TasLock<(lockprof::arch::Delay)0>, false>");
    ASSERT_FALSE(functions.empty());
    char* debuginfo_path = nullptr;
    const Dwfl_Callbacks callbacks{dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, nullptr,
                                   &debuginfo_path};
    Dwfl* dwfl = dwfl_begin(&callbacks);
    ASSERT_NE(dwfl, nullptr);
    ASSERT_EQ(dwfl_linux_proc_report(dwfl, getpid()), 0);
    ASSERT_EQ(dwfl_report_end(dwfl, nullptr, nullptr), 0);
    // Every instruction, up to 120 of them (the whole-unit walk is slow under emulation).
    const auto& code = functions[0].instructions;
    const std::size_t step = std::max<std::size_t>(1, code.size() / 120);
    std::size_t compared = 0, inlined = 0;
    std::vector<std::pair<std::uint64_t, std::vector<std::string>>> references;
    for (std::size_t k = 0; k < code.size(); k += step) {
        const std::uint64_t address = code[k].address + bias;
        references.emplace_back(address, getscopes_chain(dwfl, address));
    }
    dwfl_end(dwfl);
#if defined(__clang__)
    // libdw 0.188's dwarf_getscopes finds the unit of a clang build but no scope in it ("no
    // address value"), though dwarf_haspc holds for the same pc: nothing to compare with.
    if (std::all_of(references.begin(), references.end(),
                    [](const auto& r) { return r.second.empty(); }))
        GTEST_SKIP() << "libdw's dwarf_getscopes reads no scope of this clang build: the "
                        "reference walk has nothing to compare with (GCC builds compare)";
#endif
    for (std::size_t k = 0; k < code.size(); k += step) {
        const std::uint64_t address = code[k].address + bias;
        const auto& expected = references[k / step].second;
        EXPECT_EQ(resolver.inlined_at(address), expected) << code[k].text();
        // Asked twice: the cached answer is the same.
        EXPECT_EQ(resolver.inlined_at(address), expected) << code[k].text();
        ++compared;
        inlined += !expected.empty();
    }
    EXPECT_GT(inlined, compared / 4) << "too few inlined instructions to say anything";
}

TEST(Names, DemangleAndShorten) {
    EXPECT_EQ(demangle("_ZN8lockprof5locks4demoEv"), "lockprof::locks::demo()");
    EXPECT_EQ(demangle("plain_c_name"), "plain_c_name");
    EXPECT_EQ(short_name("void lockprof::workload::native::measured_loop<lockprof::locks::native::"
                         "TasLock<(lockprof::arch::Delay)1>, false>(void*, "
                         "lockprof::workload::LoopArgs const&)"),
              "measured_loop<TasLock<(Delay)1>, false>");
    EXPECT_EQ(short_name("s_lock"), "s_lock");
    EXPECT_EQ(short_name("lockprof::cli::main(int, char**)"), "main");
}

// Names as real programs' libraries give them (libstdc++, glibc's versioned symbols), which
// `lockprof record` shows in its hottest-symbol table and flamegraphs.
TEST(Names, ShortNamesOfLibraryFunctions) {
    // A class template's scope stays: the member name alone would not say which class.
    EXPECT_EQ(short_name("std::basic_filebuf<char, std::char_traits<char> >::open(char const*, "
                         "std::_Ios_Openmode)"),
              "basic_filebuf<char, char_traits<char> >::open");
    EXPECT_EQ(short_name("lockprof::locks::native::TasLock<(lockprof::arch::Delay)1>::lock()"),
              "TasLock<(Delay)1>::lock");
    // Operators keep their token and the spaces that belong to it.
    EXPECT_EQ(short_name("operator delete(void*)"), "operator delete");
    EXPECT_EQ(short_name("operator new[](unsigned long)"), "operator new[]");
    EXPECT_EQ(short_name("std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
                         "<std::char_traits<char> >(std::basic_ostream<char, "
                         "std::char_traits<char> >&, char const*)"),
              "operator<< <char_traits<char> >");
    EXPECT_EQ(short_name("app::Hasher::operator()(int) const"), "operator()");
    EXPECT_EQ(short_name("std::vector<int, std::allocator<int> >::operator[](unsigned long)"),
              "vector<int, allocator<int> >::operator[]");
    EXPECT_EQ(short_name("app::Flag::operator bool() const"), "operator bool");
    EXPECT_EQ(short_name("bool app::operator<(app::Key const&, app::Key const&)"), "operator<");
    // Anonymous namespaces are qualifiers like any other.
    EXPECT_EQ(short_name("(anonymous namespace)::helper(int)"), "helper");
    EXPECT_EQ(short_name("void app::(anonymous namespace)::run<int>(int)"), "run<int>");
    // Symbol versions of glibc's exported functions go.
    EXPECT_EQ(short_name("pthread_spin_lock@@GLIBC_2.34"), "pthread_spin_lock");
    EXPECT_EQ(short_name("llseek@GLIBC_2.2.5"), "llseek");
    // A PLT stub is not the function it jumps to.
    EXPECT_EQ(short_name("pthread_spin_lock@plt"), "pthread_spin_lock@plt");
    EXPECT_EQ(short_name("s_lock"), "s_lock");
}

}  // namespace
}  // namespace lockprof::symbols
