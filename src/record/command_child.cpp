// `record -- CMD`'s child, started, waited for and stopped (command_child.hpp).
#include "record/command_child.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "lockprof/record/recorder.hpp"

namespace lockprof::record {
namespace {

constexpr const char* kStopping = "stopping the command";

// In the forked child: waits for the gate's byte, then becomes `args`; an exec that failed
// writes its errno to `exec_status`.
[[noreturn]] void exec_when_released(int gate, int exec_status, std::vector<char*>& args) {
    char go = 0;
    while (::read(gate, &go, 1) < 0 && errno == EINTR) {
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execvp(args[0], args.data());
    const int error = errno;
    [[maybe_unused]] auto ignored = ::write(exec_status, &error, sizeof error);
    _exit(127);
}

void close_if_open(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

}  // namespace

CommandChild::CommandChild(const std::vector<std::string>& command) : program_(command.at(0)) {
    int gate[2], status_pipe[2];
    if (pipe2(gate, O_CLOEXEC) != 0 || pipe2(status_pipe, O_CLOEXEC) != 0)
        throw Error(
            fmt::format("cannot start '{}': pipe failed ({})", program_, std::strerror(errno)));
    std::vector<char*> args;
    for (const auto& a : command) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0)
        throw Error(
            fmt::format("cannot start '{}': fork failed ({})", program_, std::strerror(errno)));
    if (pid_ == 0) exec_when_released(gate[0], status_pipe[1], args);
    ::close(gate[0]);
    ::close(status_pipe[1]);
    gate_ = gate[1];
    exec_status_ = status_pipe[0];
}

CommandChild::~CommandChild() {
    close_if_open(gate_);
    close_if_open(exec_status_);
}

void CommandChild::release() {
    const char go = 1;
    [[maybe_unused]] auto ignored = ::write(gate_, &go, 1);
    close_if_open(gate_);
    int exec_error = 0;
    ssize_t got;
    do {
        got = ::read(exec_status_, &exec_error, sizeof exec_error);
    } while (got < 0 && errno == EINTR);
    close_if_open(exec_status_);
    if (got == static_cast<ssize_t>(sizeof exec_error)) {
        waitpid(pid_, nullptr, 0);
        const bool missing = exec_error == ENOENT || exec_error == ENOTDIR;
        throw CommandError(fmt::format("{}: {}: {}", program_,
                                       missing ? "command not found" : std::strerror(exec_error),
                                       missing ? "check the name and PATH (exit 127, as a shell)"
                                               : "check its permissions (exit 126, as a shell)"),
                           missing ? 127 : 126);
    }
}

void CommandChild::kill_and_reap() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
}

std::optional<int> CommandChild::poll() {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
    return WIFEXITED(status)     ? WEXITSTATUS(status)
           : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                 : 1;
}

CommandStop::CommandStop(std::string program, std::chrono::milliseconds grace,
                         std::function<void(const std::string&)> on_step, Notes& notes)
    : program_(std::move(program)), grace_(grace), on_step_(std::move(on_step)), notes_(notes) {}

void CommandStop::step(pid_t child, int signal) {
    const auto now = Clock::now();
    const double grace_s = std::chrono::duration<double>(grace_).count();
    const std::string who = fmt::format("'{}' (pid {})", program_, child);
    if (!stopping_since_) {
        stopping_since_ = now;
        // Ctrl-C reaches the command from the terminal too; a SIGTERM is for lockprof.
        if (signal == SIGTERM)
            send(child, SIGTERM, fmt::format("{}: passed SIGTERM on to {}", kStopping, who));
        return;
    }
    if (!terminated_since_ && now - *stopping_since_ >= grace_)
        send(child, SIGTERM,
             fmt::format("{}: {} was still running {:.1f} s after SIGINT; sent it SIGTERM",
                         kStopping, who, grace_s));
    else if (terminated_since_ && !killed_ && now - *terminated_since_ >= grace_) {
        killed_ = true;
        send(child, SIGKILL,
             fmt::format("{}: {} was still running {:.1f} s after SIGTERM; sent it SIGKILL",
                         kStopping, who, grace_s));
    }
}

void CommandStop::send(pid_t child, int signal, std::string step) {
    if (signal == SIGTERM) terminated_since_ = Clock::now();
    kill(child, signal);
    if (on_step_) on_step_(step);
    notes_.add(std::move(step));
}

}  // namespace lockprof::record
