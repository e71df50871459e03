// Reading small system files and finding programs: the one copy every module uses.
#include "lockprof/common/files.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <optional>

namespace lockprof {
namespace {

// Sets PATH (or unsets it, nullopt) for one test and puts the old value back.
class ScopedPath {
  public:
    explicit ScopedPath(const std::optional<std::string>& value) {
        if (const char* old = std::getenv("PATH")) old_ = old;
        if (value)
            setenv("PATH", value->c_str(), 1);
        else
            unsetenv("PATH");
    }
    ~ScopedPath() {
        if (old_)
            setenv("PATH", old_->c_str(), 1);
        else
            unsetenv("PATH");
    }

  private:
    std::optional<std::string> old_;
};

TEST(Files, ReadAllKeepsEveryByte) {
    test::TempDir dir;
    EXPECT_EQ(read_all(dir.write("maps", "a\nb\n")), "a\nb\n");
    EXPECT_EQ(read_all(dir.write("nul", std::string("x\0y", 3))), std::string("x\0y", 3));
    EXPECT_EQ(read_all(dir.write("empty", "")), "");
    EXPECT_EQ(read_all(dir.path / "missing"), "");
}

TEST(Files, FirstLineWithoutItsNewline) {
    test::TempDir dir;
    EXPECT_EQ(first_line(dir.write("comm", "postgres\n")), "postgres");
    EXPECT_EQ(first_line(dir.write("two", "one\ntwo\n")), "one");
    EXPECT_EQ(first_line(dir.write("no-newline", "7")), "7");
    // Nothing is trimmed but the newline: DMI strings keep their padding for the caller.
    EXPECT_EQ(first_line(dir.write("padded", "QEMU  \n")), "QEMU  ");
    EXPECT_EQ(first_line(dir.path / "missing"), "");
}

TEST(Files, ProgramExistsSearchesPath) {
    test::TempDir dir;
    const auto tool = dir.write("lockprof-test-tool", "#!/bin/sh\n");
    chmod(tool.c_str(), 0755);
    dir.write("lockprof-test-data", "");  // not executable
    {
        ScopedPath path("/nonexistent::" + dir.path.string());
        EXPECT_TRUE(program_exists("lockprof-test-tool"));
        EXPECT_FALSE(program_exists("lockprof-test-data"));
        EXPECT_FALSE(program_exists("lockprof-no-such-tool"));
    }
    {
        ScopedPath path(std::string("/nonexistent"));
        EXPECT_FALSE(program_exists("lockprof-test-tool"));
        // A name with a slash is a path, not looked up in PATH.
        EXPECT_TRUE(program_exists(tool.string()));
        EXPECT_FALSE(program_exists((dir.path / "lockprof-test-data").string()));
    }
}

// With PATH unset a program is looked for where execvp would look: the system's default path.
TEST(Files, ProgramExistsWithoutPathLooksInUsrBinAndBin) {
    ScopedPath path(std::nullopt);
    EXPECT_TRUE(program_exists("sh"));
    EXPECT_FALSE(program_exists("lockprof-no-such-tool"));
    const std::string sh = find_program("sh");
    EXPECT_TRUE(sh == "/bin/sh" || sh == "/usr/bin/sh") << sh;
}

// find_program names the file execvp runs: the first folder that has it, an empty PATH entry
// being the current folder (record --spin plans its probes on that file before the exec).
TEST(Files, FindProgramIsTheFileExecvpRuns) {
    test::TempDir first, second;
    for (const auto* dir : {&first, &second}) {
        const auto tool = dir->write("lockprof-test-tool", "#!/bin/sh\n");
        chmod(tool.c_str(), 0755);
    }
    std::filesystem::create_directory(first.path / "lockprof-test-dir");
    chmod((first.path / "lockprof-test-dir").c_str(), 0755);
    {
        ScopedPath path(first.path.string() + ":" + second.path.string());
        EXPECT_EQ(find_program("lockprof-test-tool"), (first.path / "lockprof-test-tool").string());
        // A folder is not a program, even one the search may enter.
        EXPECT_EQ(find_program("lockprof-test-dir"), "");
        EXPECT_EQ(find_program(""), "");
    }
    const auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(second.path);
    {
        ScopedPath path("/nonexistent::" + first.path.string());
        EXPECT_EQ(find_program("lockprof-test-tool"), "lockprof-test-tool");
    }
    {
        ScopedPath path("/nonexistent:" + first.path.string() + ":");
        EXPECT_EQ(find_program("lockprof-test-tool"), (first.path / "lockprof-test-tool").string());
    }
    {
        ScopedPath path("/nonexistent:");
        EXPECT_EQ(find_program("lockprof-test-tool"), "lockprof-test-tool");
    }
    std::filesystem::current_path(cwd);
}

}  // namespace
}  // namespace lockprof
