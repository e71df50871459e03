#include "lockprof/record/targets.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/files.hpp"
#include "lockprof/common/parse.hpp"
#include "lockprof/pmu/events.hpp"

namespace lockprof::record {
namespace {

namespace fs = std::filesystem;

std::optional<long> to_number(std::string_view text) {
    long value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string user_name(uid_t uid) {
    passwd entry{}, *found = nullptr;
    std::vector<char> buffer(16384);
    if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found)
        return found->pw_name;
    return std::to_string(uid);
}

}  // namespace

std::vector<pid_t> parse_pid_list(std::string_view text, std::string_view option) {
    std::vector<pid_t> out;
    for (const auto& item : split_list(text, option)) {
        const auto value = to_number(item);
        if (!value || *value <= 0 || *value > 0x3fffffff)
            throw UsageError(fmt::format(
                "--{}: '{}' is not a process id; give positive numbers such as 1234,5678", option,
                item));
        const auto pid = static_cast<pid_t>(*value);
        if (std::find(out.begin(), out.end(), pid) == out.end()) out.push_back(pid);
    }
    return out;
}

std::string status_value(std::string_view status, std::string_view key) {
    std::size_t pos = 0;
    while (pos < status.size()) {
        std::size_t eol = status.find('\n', pos);
        if (eol == std::string_view::npos) eol = status.size();
        const std::string_view line = status.substr(pos, eol - pos);
        if (line.size() > key.size() && line.substr(0, key.size()) == key &&
            line[key.size()] == ':')
            return std::string(line.substr(key.size() + 1));
        pos = eol + 1;
    }
    return "";
}

ProcessStatus parse_process_status(std::string_view status) {
    ProcessStatus s;
    const std::string state = status_value(status, "State");
    s.gone = state.find('Z') != std::string::npos || state.find('X') != std::string::npos;
    std::istringstream uids(status_value(status, "Uid"));
    long uid = 0;
    if (uids >> uid) s.uid = static_cast<uid_t>(uid);
    return s;
}

std::optional<ProcessInfo> read_process(pid_t pid, const std::string& proc_root) {
    const fs::path dir = fs::path(proc_root) / std::to_string(pid);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return std::nullopt;
    // A zombie has no memory left to profile: treat it as gone.
    const ProcessStatus status = parse_process_status(read_all(dir / "status"));
    if (status.gone) return std::nullopt;
    ProcessInfo p;
    p.pid = pid;
    p.comm = first_line(dir / "comm");
    p.exe = fs::read_symlink(dir / "exe", ec).string();
    p.uid = status.uid;
    return p;
}

std::vector<pid_t> list_tasks(pid_t pid, const std::string& proc_root) {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& entry :
         fs::directory_iterator(fs::path(proc_root) / std::to_string(pid) / "task", ec))
        if (const auto tid = to_number(entry.path().filename().string()))
            out.push_back(static_cast<pid_t>(*tid));
    std::sort(out.begin(), out.end());
    return out;
}

std::string task_comm(pid_t pid, pid_t tid, const std::string& proc_root) {
    return first_line(fs::path(proc_root) / std::to_string(pid) / "task" / std::to_string(tid) /
                      "comm");
}

NameMatcher::NameMatcher(std::string pattern) : pattern_(std::move(pattern)) {
    if (pattern_.empty())
        throw UsageError("--match: the name is empty; give a process name such as postgres");
    if (pattern_.find_first_of("^$.*+?()[]{}|\\") == std::string::npos) return;
    try {
        regex_.emplace(pattern_, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        throw UsageError(fmt::format(
            "--match: '{}' is not a valid regular expression ({}); give a plain process name "
            "or fix the pattern",
            pattern_, e.what()));
    }
}

bool NameMatcher::matches(std::string_view comm) const {
    if (!regex_) return comm == pattern_;
    return std::regex_search(comm.begin(), comm.end(), *regex_);
}

std::vector<pid_t> find_processes(const NameMatcher& matcher, pid_t exclude,
                                  const std::string& proc_root) {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(proc_root, ec)) {
        const auto pid = to_number(entry.path().filename().string());
        if (!pid || *pid == exclude) continue;
        if (matcher.matches(first_line(entry.path() / "comm")))
            out.push_back(static_cast<pid_t>(*pid));
    }
    std::sort(out.begin(), out.end());
    return out;
}

AttachContext attach_context() {
    AttachContext c;
    c.our_uid = geteuid();
    c.paranoid = pmu::perf_event_paranoid();
    const std::string caps = status_value(read_all("/proc/self/status"), "CapEff");
    std::uint64_t effective = 0;
    try {
        effective = std::stoull(caps, nullptr, 16);
    } catch (const std::exception&) {
    }
    constexpr int kCapSysAdmin = 21, kCapPerfmon = 38;
    c.cap_perfmon = (effective >> kCapPerfmon & 1) || (effective >> kCapSysAdmin & 1);
    return c;
}

std::string explain_attach_refusal(const ProcessInfo& target, const AttachContext& context) {
    const std::string who = fmt::format("{} ({})", target.pid, target.comm);
    if (!context.cap_perfmon && target.uid != context.our_uid)
        return fmt::format(
            "cannot attach to {}: it runs as user {} and lockprof as user {}, without "
            "CAP_PERFMON; run lockprof as that user (`sudo -u {} lockprof record ...`) or as "
            "root, or grant it CAP_PERFMON (`sudo setcap cap_perfmon+ep $(which lockprof)`). "
            "kernel.yama.ptrace_scope does not matter here",
            who, user_name(target.uid), user_name(context.our_uid), user_name(target.uid));
    if (!context.cap_perfmon && context.paranoid > 2)
        return fmt::format(
            "cannot attach to {}: kernel.perf_event_paranoid is {} ({}); allow user-space "
            "profiling of your own processes with `sudo sysctl kernel.perf_event_paranoid=2`, "
            "or run as root",
            who, context.paranoid, pmu::paranoid_meaning(context.paranoid));
    return fmt::format(
        "cannot attach to {}: permission denied although it runs as the same user: it made "
        "itself non-dumpable (prctl PR_SET_DUMPABLE, as setuid programs and ssh-agent do), or a "
        "security module (SELinux, AppArmor, a container seccomp profile) forbids "
        "perf_event_open; run as root, or check the audit log",
        who);
}

}  // namespace lockprof::record
