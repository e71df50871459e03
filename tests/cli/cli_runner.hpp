// Runs the real lockprof binary for golden tests: captures stdout, stderr and the exit code.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace lockprof::test {

struct CliResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

inline std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A private temporary folder, removed on destruction.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "lockprof-test-XXXXXX");
        path = mkdtemp(pattern.data());
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::filesystem::path operator/(const std::string& name) const { return path / name; }
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

inline int count_lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

}  // namespace lockprof::test
