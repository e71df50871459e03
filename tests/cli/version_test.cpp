// The git revision lockprof reports (`--version`, every result's provenance) is the source
// tree's at build time, not at configure time: a commit without a reconfigure once left it
// stale (issue 30). cmake/git_revision.cmake takes it on every build.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
using lockprof::test::find_program;
using lockprof::test::read_all;
using lockprof::test::run_lockprof;
using lockprof::test::shell;
using lockprof::test::shell_quote;
using lockprof::test::TempDir;

std::vector<std::string> version_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// `git ARGS` in `folder`, never touching its index file (a git command may run beside us).
lockprof::test::ShellResult git_in(const fs::path& folder, const std::string& args) {
    return shell("git --no-optional-locks -C " + shell_quote(folder.string()) + " " + args);
}

// What the build should have recorded for the tree at `folder`: its short HEAD, "-dirty" when
// tracked files have uncommitted changes; "" when `folder` is not the top of a git checkout.
std::string revision_of(const fs::path& folder) {
    const auto top = git_in(folder, "rev-parse --show-toplevel --short HEAD");
    const auto lines = version_lines(top.out);
    if (top.status != 0 || lines.size() != 2 ||
        fs::weakly_canonical(lines[0]) != fs::weakly_canonical(folder))
        return "";
    const auto status = git_in(folder, "status --porcelain --untracked-files=no");
    if (status.status != 0) return "";
    return lines[1] + (status.out.empty() ? "" : "-dirty");
}

TEST(CliVersion, NamesTheRevisionOfTheTreeItWasBuiltFrom) {
    if (find_program({"git"}).empty()) GTEST_SKIP() << "git is not installed";
    const std::string expected = revision_of(LOCKPROF_SOURCE_DIR);
    if (expected.empty())
        GTEST_SKIP() << LOCKPROF_SOURCE_DIR << " is not a git checkout: the revision is unknown";
    const auto version = run_lockprof({"--version"});
    ASSERT_EQ(version.exit_code, 0) << version.err;
    const std::string first = version.out.substr(0, version.out.find('\n'));
    EXPECT_EQ(first.rfind("lockprof ", 0), 0u) << first;
    EXPECT_NE(first.find(" (" + expected + ")"), std::string::npos)
        << first << "\nexpected the source tree's revision " << expected
        << " (was the tree changed after the build?)";
    // The result file's provenance says the same.
    TempDir dir;
    const auto run = run_lockprof({"--lock=tas", "--threads=1", "--acquires=1000", "--trials=1",
                                   "--quiet", "--output", (dir / "r.json").string()});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto doc = nlohmann::json::parse(read_all(dir / "r.json"));
    EXPECT_EQ(doc["provenance"]["git_revision"], expected);
}

// The script the build runs, on a repository of the test's own: it follows commits and
// uncommitted changes to tracked files, ignores untracked files, says "unknown" outside a
// checkout, and leaves its output untouched when nothing changed (so nothing recompiles).
TEST(CliVersion, TheBuildTakesTheRevisionFromTheTreeAsItIsNow) {
    if (find_program({"git"}).empty()) GTEST_SKIP() << "git is not installed";
    TempDir repo, out_dir;
    const fs::path out = out_dir / "git_revision.cpp";
    const std::string q = shell_quote(repo.path.string());
    const std::string commit =
        "git -c user.name=lockprof -c user.email=lockprof@example.invalid -c commit.gpgsign=false "
        "commit -q";
    ASSERT_EQ(shell("cd " + q + " && git init -q && echo one > tracked && git add tracked && " +
                    commit + " -m one")
                  .status,
              0);
    const auto generate = [&] {
        const auto r =
            shell(shell_quote(LOCKPROF_CMAKE) + " -DSOURCE_DIR=" + q +
                  " -DOUTPUT=" + shell_quote(out.string()) + " -P " +
                  shell_quote(std::string(LOCKPROF_SOURCE_DIR) + "/cmake/git_revision.cmake"));
        EXPECT_EQ(r.status, 0) << r.err;
        const std::string text = read_all(out);
        const auto at = text.find("return \"");
        return at == std::string::npos ? std::string("(none)")
                                       : text.substr(at + 8, text.find('"', at + 8) - at - 8);
    };
    const std::string first = revision_of(repo.path);
    ASSERT_FALSE(first.empty());
    EXPECT_EQ(generate(), first);
    const auto written = fs::last_write_time(out);
    EXPECT_EQ(generate(), first);
    EXPECT_EQ(fs::last_write_time(out), written) << "rewritten without a new revision";

    ASSERT_EQ(shell("cd " + q + " && echo two > tracked && " + commit + " -am two").status, 0);
    const std::string second = revision_of(repo.path);
    EXPECT_NE(second, first);
    EXPECT_EQ(generate(), second) << "a commit without a reconfigure";

    ASSERT_EQ(shell("cd " + q + " && echo three > tracked").status, 0);
    EXPECT_EQ(generate(), second + "-dirty");
    ASSERT_EQ(shell("cd " + q + " && echo two > tracked && echo new > untracked").status, 0);
    EXPECT_EQ(generate(), second) << "untracked files do not make a tree dirty";

    TempDir plain;
    const auto r =
        shell(shell_quote(LOCKPROF_CMAKE) + " -DSOURCE_DIR=" + shell_quote(plain.path.string()) +
              " -DOUTPUT=" + shell_quote(out.string()) + " -P " +
              shell_quote(std::string(LOCKPROF_SOURCE_DIR) + "/cmake/git_revision.cmake"));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(read_all(out).find("return \"unknown\";"), std::string::npos) << read_all(out);
}

}  // namespace

// The CLI tests ask the binary under test whether it has ASan (its --version lists its flags;
// tests/support/lockprof_under_test.hpp), and take the instrumented build's looser checks and
// skips when it has. Told apart here by another sign, ASan's runtime in the binary's symbols,
// for this build's binary and for the instrumented one scripts/test.sh points them at.
TEST(CliVersion, TheTestsTellAnInstrumentedBinaryFromAnother) {
    const auto r = run_lockprof({"--version"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\nflags: "), std::string::npos) << r.out;
    if (find_program({"nm"}).empty()) GTEST_SKIP() << "nm (binutils) is not installed";
    const auto symbols = shell("nm -- " + shell_quote(lockprof::test::lockprof_bin()) +
                               " | grep -c ' __asan_init$'");
    ASSERT_FALSE(symbols.out.empty()) << symbols.err;
    const bool runtime = std::stoi(symbols.out) > 0;
    EXPECT_EQ(lockprof::test::lockprof_bin_has_asan(), runtime)
        << lockprof::test::lockprof_bin() << ":\n"
        << r.out;
}
