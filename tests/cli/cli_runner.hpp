// Runs the real lockprof binary for golden tests, and shell commands for integration tests:
// captures stdout, stderr and the exit code.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "support/lockprof_under_test.hpp"
#include "support/temp_dir.hpp"

namespace lockprof::test {

struct CliResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

inline std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// Runs `lockprof ARGS...` (no shell interpretation of args) with stdin from /dev/null, in
// `cwd` when given, with environment variables `env` ({"PATH=/empty"}) set for lockprof only.
inline CliResult run_lockprof_in(const std::vector<std::string>& args, const std::string& cwd,
                                 const std::vector<std::string>& env) {
    TempDir capture;
    std::string command = cwd.empty() ? "" : "cd " + shell_quote(cwd) + " && ";
    if (!env.empty()) command += "env";
    for (const auto& e : env) command += " " + shell_quote(e);
    command += " " + shell_quote(LOCKPROF_BIN);
    for (const auto& a : args) command += " " + shell_quote(a);
    command += " </dev/null >" + shell_quote((capture / "out").string()) + " 2>" +
               shell_quote((capture / "err").string());
    const int status = std::system(command.c_str());
    CliResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_all(capture / "out");
    r.err = read_all(capture / "err");
    return r;
}

inline CliResult run_lockprof(const std::vector<std::string>& args, const std::string& cwd = "") {
    return run_lockprof_in(args, cwd, {});
}

inline CliResult run_lockprof_with_env(const std::vector<std::string>& env,
                                       const std::vector<std::string>& args) {
    return run_lockprof_in(args, "", env);
}

// Whether the binary under test (support/lockprof_under_test.hpp) is built with AddressSanitizer:
// its `--version` lists -fsanitize=address among its flags. Asked once per test program.
inline bool lockprof_bin_has_asan() {
    static const bool asan =
        run_lockprof({"--version"}).out.find("-fsanitize=address") != std::string::npos;
    return asan;
}

// The first of `names` found on PATH, "" when none is.
inline std::string find_program(const std::vector<std::string>& names) {
    for (const auto& name : names)
        if (std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0) return name;
    return {};
}

struct ShellResult {
    int status = -1;  // the exit status, or 128 + the signal that ended it
    std::string out, err;
};

// `command` through /bin/sh, stdin from /dev/null; stdout and stderr captured. The command's
// own redirections win: it runs as a group ({ ...; }) whose streams are these.
inline ShellResult shell(const std::string& command) {
    TempDir capture;
    const int s =
        std::system(("{ " + command + "\n} </dev/null >" + shell_quote((capture / "o").string()) +
                     " 2>" + shell_quote((capture / "e").string()))
                        .c_str());
    return {WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s), read_all(capture / "o"),
            read_all(capture / "e")};
}

// How many times `what` occurs in `text` (overlapping occurrences counted).
inline int occurrences(const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// Folded stacks as lockprof writes them, without the comment lines (the unit comment,
// exporting::kFoldedUnitComment): the stack lines only.
inline std::string folded_stack_lines(const std::string& text) {
    std::istringstream in(text);
    std::string out;
    for (std::string line; std::getline(in, line);)
        if (!line.starts_with('#')) out += line + "\n";
    return out;
}

inline int count_lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

}  // namespace lockprof::test
