// Functions found by name in ELF files and their file offsets (what a uprobe is placed at),
// checked against where this very test binary has them mapped; libraries an executable needs.
#include "lockprof/symbols/elf_lookup.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

extern "C" __attribute__((noinline, used)) int lockprof_elf_lookup_target(int x) {
    asm volatile("" ::: "memory");
    return x + 1;
}

namespace lockprof::symbols {
namespace {

std::string self() {
    return std::filesystem::canonical("/proc/self/exe").string();
}

TEST(ElfLookup, FileOffsetIsWhereTheFunctionIsMapped) {
    const auto search = find_function(self(), "lockprof_elf_lookup_target");
    ASSERT_TRUE(search.readable);
    ASSERT_TRUE(search.found);
    EXPECT_TRUE(search.has_symtab);
    // The mapping that holds the function's runtime address gives its file offset.
    const auto address = reinterpret_cast<std::uint64_t>(&lockprof_elf_lookup_target);
    bool checked = false;
    for (const auto& m : process_modules())
        if (address >= m.start && address < m.end) {
            EXPECT_EQ(search.found->file_offset, address - m.start + m.offset);
            checked = true;
        }
    EXPECT_TRUE(checked);
    EXPECT_GT(search.found->size, 0u);
}

TEST(ElfLookup, VersionedExportsAndMissingNames) {
    // glibc's pthread_spin_lock is exported (versioned in .dynsym's version table).
    const auto libs = needed_libraries(self());
    const auto libc = std::find_if(libs.begin(), libs.end(), [](const std::string& p) {
        return p.find("libc.so") != std::string::npos;
    });
    ASSERT_NE(libc, libs.end()) << "libc not among the needed libraries";
    const auto spin = find_function(*libc, "pthread_spin_lock");
    ASSERT_TRUE(spin.found);
    EXPECT_TRUE(spin.found->exported);
    ElfImage image;
    ASSERT_TRUE(elf_image(*libc, image));
    EXPECT_EQ(file_offset_of(image, spin.found->address), spin.found->file_offset);

    const auto none = find_function(self(), "no_such_function_in_lockprof_tests");
    EXPECT_TRUE(none.readable);
    EXPECT_FALSE(none.found);
    EXPECT_FALSE(find_function("/nonexistent/file", "main").readable);
}

TEST(ElfLookup, OffsetsThroughSegments) {
    ElfImage image;
    image.segments.push_back(
        {.vaddr = 0, .memsz = 0x1000, .offset = 0, .filesz = 0x1000, .permissions = "r-xp"});
    image.segments.push_back({.vaddr = 0x2000,
                              .memsz = 0x3000,
                              .offset = 0x1000,
                              .filesz = 0x2000,
                              .permissions = "rw-p"});
    EXPECT_EQ(file_offset_of(image, 0x10), 0x10u);
    EXPECT_EQ(file_offset_of(image, 0x2010), 0x1010u);
    EXPECT_EQ(file_offset_of(image, 0x4800), std::nullopt);  // .bss: not in the file
    EXPECT_EQ(file_offset_of(image, 0x1800), std::nullopt);
}

}  // namespace
}  // namespace lockprof::symbols
