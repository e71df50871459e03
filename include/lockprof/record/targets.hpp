// Which processes and threads `lockprof record` attaches to, read from /proc: PID lists,
// processes whose name matches, their threads, and why the kernel may refuse to let us
// attach. `proc_root` is "/proc" except in tests.
#pragma once

#include <sys/types.h>

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace lockprof::record {

struct ProcessInfo {
    pid_t pid = 0;
    std::string comm;  // /proc/PID/comm: the kernel's 15-character name ("postgres")
    std::string exe;   // /proc/PID/exe target, "" when unreadable
    uid_t uid = 0;     // real uid
};

// "123,456" -> pids, in order, duplicates dropped. UsageError for anything that is not a
// positive number.
std::vector<pid_t> parse_pid_list(std::string_view text, std::string_view option);

// The value of "Key:" in the text of a /proc status file (the rest of its line, as the kernel
// wrote it), "" when absent.
std::string status_value(std::string_view status, std::string_view key);

// What read_process takes from /proc/PID/status: whether the process is gone (a zombie, or
// dead) and its real uid. The parser read_process uses, on the file's text (tests/fuzz feeds it).
struct ProcessStatus {
    bool gone = false;
    uid_t uid = 0;
};
ProcessStatus parse_process_status(std::string_view status);

// The process `pid`, or nullopt when it does not exist (or has exited).
std::optional<ProcessInfo> read_process(pid_t pid, const std::string& proc_root = "/proc");

// Thread ids of process `pid` (/proc/PID/task), ascending; empty when it is gone.
std::vector<pid_t> list_tasks(pid_t pid, const std::string& proc_root = "/proc");

// /proc/PID/task/TID/comm, "" when gone.
std::string task_comm(pid_t pid, pid_t tid, const std::string& proc_root = "/proc");

// How --match NAME selects processes: the whole comm equals NAME, or, when NAME holds regex
// characters, the ECMAScript regex NAME finds a match in comm. UsageError for a bad regex.
class NameMatcher {
  public:
    explicit NameMatcher(std::string pattern);
    bool matches(std::string_view comm) const;
    const std::string& pattern() const { return pattern_; }

  private:
    std::string pattern_;
    std::optional<std::regex> regex_;
};

// Processes whose comm matches, ascending by pid, without `exclude` (lockprof itself).
std::vector<pid_t> find_processes(const NameMatcher& matcher, pid_t exclude,
                                  const std::string& proc_root = "/proc");

// Why perf_event_open refused to attach to `target` (errno EACCES/EPERM), in one line with
// what to do. The facts are passed in so every cause can be tested.
struct AttachContext {
    uid_t our_uid = 0;
    bool cap_perfmon = false;  // CAP_PERFMON or CAP_SYS_ADMIN in our effective set
    int paranoid = 2;          // kernel.perf_event_paranoid
};
AttachContext attach_context();
std::string explain_attach_refusal(const ProcessInfo& target, const AttachContext& context);

}  // namespace lockprof::record
