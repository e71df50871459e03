// Starting lockprof as a child the test can signal: its own process group (so a "terminal"
// signal can reach it and everything it starts), stdout and stderr to files, and waiting
// on conditions the kernel shows in /proc rather than on fixed sleeps.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace lockprof::test {

struct Child {
    pid_t pid = -1;
    int status = 0;
    bool reaped = false;

    // Starts ARGS (a path, no PATH search) with stdin /dev/null and stdout/stderr to the
    // files given, as the leader of a new process group.
    // With `stdout_fd` >= 0, stdout is that descriptor instead of `out`.
    static Child start(const std::vector<std::string>& args, const std::filesystem::path& out,
                       const std::filesystem::path& err, int stdout_fd = -1) {
        Child c;
        posix_spawn_file_actions_t files;
        posix_spawn_file_actions_init(&files);
        posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
        if (stdout_fd >= 0)
            posix_spawn_file_actions_adddup2(&files, stdout_fd, 1);
        else
            posix_spawn_file_actions_addopen(&files, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                             0644);
        posix_spawn_file_actions_addopen(&files, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                         0644);
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        posix_spawnattr_setflags(
            &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        posix_spawnattr_setpgroup(&attr, 0);
        sigset_t none, defaults;
        sigemptyset(&none);
        posix_spawnattr_setsigmask(&attr, &none);
        sigemptyset(&defaults);
        sigaddset(&defaults, SIGINT);
        sigaddset(&defaults, SIGTERM);
        posix_spawnattr_setsigdefault(&attr, &defaults);
        std::vector<char*> argv;
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        if (posix_spawn(&c.pid, argv[0], &files, &attr, argv.data(), environ) != 0) c.pid = -1;
        posix_spawn_file_actions_destroy(&files);
        posix_spawnattr_destroy(&attr);
        return c;
    }

    Child() = default;
    Child(Child&& o) noexcept : pid(o.pid), status(o.status), reaped(o.reaped) { o.pid = -1; }
    Child& operator=(Child&& o) noexcept {
        std::swap(pid, o.pid);
        std::swap(status, o.status);
        std::swap(reaped, o.reaped);
        return *this;
    }
    ~Child() {
        if (pid <= 0 || reaped) return;
        kill(-pid, SIGKILL);
        waitpid(pid, nullptr, 0);
    }

    bool running() {
        if (reaped) return false;
        if (waitpid(pid, &status, WNOHANG) == pid) reaped = true;
        return !reaped;
    }

    // Waits for it to end; a child still running after `limit` (a hang, not a slow machine:
    // make it generous) is killed with its group and reported as not finished.
    bool wait(std::chrono::seconds limit = std::chrono::seconds(120)) {
        const auto give_up = std::chrono::steady_clock::now() + limit;
        while (running()) {
            if (std::chrono::steady_clock::now() > give_up) {
                kill(-pid, SIGKILL);
                waitpid(pid, &status, 0);
                reaped = true;
                return false;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return true;
    }

    bool exited() const { return reaped && WIFEXITED(status); }
    int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
    int killed_by() const { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
    std::string describe() const {
        if (!reaped) return "still running";
        if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
        if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
        return "status " + std::to_string(status);
    }
};

// A field of /proc/PID/status ("ShdPnd"), "" when the process or field is gone.
inline std::string proc_status_field(pid_t pid, const std::string& field) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field + ":", 0) == 0) {
            std::string value = line.substr(field.size() + 1);
            value.erase(0, value.find_first_not_of(" \t"));
            return value;
        }
    return "";
}

// Whether `signal` is pending for the whole process (sent with kill(), not yet taken by a
// thread): two signals sent before the first is taken merge into one.
inline bool signal_pending(pid_t pid, int signal) {
    const std::string mask = proc_status_field(pid, "ShdPnd");
    if (mask.empty()) return false;
    return (std::stoull(mask, nullptr, 16) >> (signal - 1)) & 1;
}

// Whether `pid` has a handler installed for `signal` (SigCgt in /proc/PID/status).
inline bool signal_caught(pid_t pid, int signal) {
    const std::string mask = proc_status_field(pid, "SigCgt");
    if (mask.empty()) return false;
    return (std::stoull(mask, nullptr, 16) >> (signal - 1)) & 1;
}

// Waits (polling) until `done` holds or the child has ended; returns whether `done` held.
inline bool wait_for(Child& child, const std::function<bool()>& done,
                     std::chrono::seconds limit = std::chrono::seconds(60)) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < give_up) {
        if (done()) return true;
        if (!child.running()) return done();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
}

// Sends `signal` to the process and waits until a thread has taken it, so that the next one
// sent is delivered on its own. False when the process ended first.
inline bool signal_and_wait_taken(Child& child, int signal) {
    if (kill(child.pid, signal) != 0) return false;
    return wait_for(child, [&] { return !signal_pending(child.pid, signal); }) && child.running();
}

// The processes whose parent is `parent` (from /proc/*/stat).
inline std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream in(entry.path() / "stat");
        std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto close = stat.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(stat.substr(close + 2));
        char state = 0;
        long ppid = 0;
        rest >> state >> ppid;
        if (ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
    }
    return out;
}

inline std::string comm_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
    std::string comm;
    std::getline(in, comm);
    return comm;
}

}  // namespace lockprof::test
