// `record -- CMD`'s child: forked to wait until the recording has opened its instruments on
// it, then exec'd (CommandChild); and, once a signal asked the recording to stop, asked to end
// and then made to (CommandStop).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "record/notes.hpp"

namespace lockprof::record {

class CommandChild {
  public:
    // Forks; the child waits until release() before it becomes `command` (program and
    // arguments, found in PATH). Throws Error when it cannot be forked.
    explicit CommandChild(const std::vector<std::string>& command);
    ~CommandChild();
    CommandChild(const CommandChild&) = delete;
    CommandChild& operator=(const CommandChild&) = delete;

    pid_t pid() const { return pid_; }
    // Lets it exec; throws CommandError (exit 127 not found, 126 not executable, as a shell)
    // when the exec failed, the child reaped.
    void release();
    // Kills and reaps it (instruments could not be opened on it).
    void kill_and_reap();
    // Its exit status once it has ended (128 + the signal that killed it), nullopt while it runs.
    std::optional<int> poll();

  private:
    std::string program_;
    pid_t pid_ = -1;
    int gate_ = -1;         // write end: one byte lets the child exec
    int exec_status_ = -1;  // read end: the exec's errno, or EOF once it succeeded
};

// A signal asked the recording to stop: the command is asked to end, then made to (see
// record()). step() is called every poll until it has exited.
class CommandStop {
  public:
    // `program`: the command's, to name it; `on_step`: told each step as it is taken (may be
    // empty); each step is a note too.
    CommandStop(std::string program, std::chrono::milliseconds grace,
                std::function<void(const std::string&)> on_step, Notes& notes);

    void step(pid_t child, int signal);

  private:
    using Clock = std::chrono::steady_clock;
    void send(pid_t child, int signal, std::string step);

    std::string program_;
    std::chrono::milliseconds grace_;
    std::function<void(const std::string&)> on_step_;
    Notes& notes_;
    // When the signal was seen, when SIGTERM was sent, whether SIGKILL was.
    std::optional<Clock::time_point> stopping_since_, terminated_since_;
    bool killed_ = false;
};

}  // namespace lockprof::record
