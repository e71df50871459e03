#include "lockprof/pmu/trace_uprobe.hpp"

#include <fcntl.h>
#include <linux/mount.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "lockprof/common/files.hpp"

namespace lockprof::pmu {
namespace {

constexpr const char* kGroupPrefix = "lockprof_";

// A /proc/self/mounts field: spaces, tabs, newlines and backslashes come as octal escapes.
std::string unescape_mount_field(const std::string& field) {
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        const std::string octal = field.substr(i + 1, 3);
        if (field[i] == '\\' && octal.size() == 3 &&
            octal.find_first_not_of("01234567") == std::string::npos) {
            out += static_cast<char>(std::stoi(octal, nullptr, 8));
            i += 3;
        } else {
            out += field[i];
        }
    }
    return out;
}

// Folders where tracefs is mounted: its own mounts, then debugfs's automount of it.
std::vector<std::string> mounted_tracefs() {
    std::vector<std::string> out, debugfs;
    std::istringstream in(read_all("/proc/self/mounts"));
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string device, folder, type;
        if (!(fields >> device >> folder >> type)) continue;
        if (type == "tracefs") out.push_back(unescape_mount_field(folder));
        if (type == "debugfs") debugfs.push_back(unescape_mount_field(folder) + "/tracing");
    }
    out.insert(out.end(), debugfs.begin(), debugfs.end());
    return out;
}

// A tracefs of lockprof's own that no folder shows: a detached mount (Linux 5.2), gone when
// the descriptor is closed. -errno on failure.
int private_tracefs() {
#if defined(SYS_fsopen) && defined(SYS_fsconfig) && defined(SYS_fsmount)
    const long fs = syscall(SYS_fsopen, "tracefs", FSOPEN_CLOEXEC);
    if (fs < 0) return -errno;
    if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) < 0) {
        const int error = errno;
        ::close(static_cast<int>(fs));
        return -error;
    }
    const long mount = syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
    const int error = errno;
    ::close(static_cast<int>(fs));
    return mount < 0 ? -error : static_cast<int>(mount);
#else
    return -ENOSYS;
#endif
}

std::string read_at(int root_fd, const std::string& name) {
    const int fd = ::openat(root_fd, name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    std::string text;
    char buffer[4096];
    ssize_t got;
    while ((got = ::read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, buffer + got);
    ::close(fd);
    return text;
}

bool can_define(int root_fd, int& error) {
    // Never O_TRUNC: opening uprobe_events truncated removes every probe on the machine.
    const int fd = ::openat(root_fd, "uprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        error = errno;
        return false;
    }
    ::close(fd);
    return true;
}

const char* errno_name(int error) {
    switch (error) {
        case EACCES:
            return "EACCES";
        case EPERM:
            return "EPERM";
        case ENOENT:
            return "ENOENT";
        case ENODEV:
            return "ENODEV";
        case ENOSYS:
            return "ENOSYS";
        default:
            return "error";
    }
}

}  // namespace

bool definable_path(const std::string& path) {
    return !path.empty() && path.find_first_of(" \t\n\r\"'\\") == std::string::npos;
}

std::vector<std::string> stale_definitions(const std::string& uprobe_events, int self,
                                           const std::function<bool(int)>& alive) {
    std::vector<std::string> out;
    std::istringstream in(uprobe_events);
    std::string line;
    while (std::getline(in, line)) {
        // "p:lockprof_123/p0 /path:0x..." or "r:..."
        const auto colon = line.find(':');
        const auto slash = line.find('/');
        const auto space = line.find(' ');
        if (colon == std::string::npos || slash == std::string::npos || slash < colon ||
            (space != std::string::npos && space < slash))
            continue;
        const std::string group = line.substr(colon + 1, slash - colon - 1);
        if (!group.starts_with(kGroupPrefix)) continue;
        const std::string digits = group.substr(std::strlen(kGroupPrefix));
        if (digits.empty() || digits.size() > 9 ||
            digits.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const int pid = std::stoi(digits);
        if (pid == self || !alive(pid))
            out.push_back(line.substr(
                colon + 1, space == std::string::npos ? std::string::npos : space - colon - 1));
    }
    return out;
}

std::unique_ptr<TraceUprobes> TraceUprobes::open(std::string& why) {
    std::string refused;
    for (const auto& folder : mounted_tracefs()) {
        const int fd = ::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) continue;
        int error = 0;
        if (can_define(fd, error))
            return std::unique_ptr<TraceUprobes>(new TraceUprobes(fd, folder));
        ::close(fd);
        if (refused.empty())
            refused = fmt::format("{}/uprobe_events cannot be written ({}: {})", folder,
                                  errno_name(error), std::strerror(error));
    }
    const int fd = private_tracefs();
    if (fd >= 0) {
        int error = 0;
        if (can_define(fd, error))
            return std::unique_ptr<TraceUprobes>(new TraceUprobes(fd, "a private tracefs mount"));
        ::close(fd);
        why = fmt::format(
            "tracefs has no uprobe_events ({}): this kernel lacks "
            "CONFIG_UPROBE_EVENTS",
            errno_name(error));
        return nullptr;
    }
    const int error = -fd;
    why = refused.empty()
              ? fmt::format("tracefs is not mounted and cannot be mounted by lockprof ({}: {}{})",
                            errno_name(error), std::strerror(error),
                            error == EPERM ? "; it needs root" : "")
              : refused +
                    (error == EPERM ? ", and lockprof cannot mount one of its own (EPERM)" : "");
    return nullptr;
}

TraceUprobes::TraceUprobes(int root_fd, std::string where)
    : root_fd_(root_fd),
      where_(std::move(where)),
      group_(fmt::format("{}{}", kGroupPrefix, ::getpid())) {
    remove_stale();
}

TraceUprobes::~TraceUprobes() {
    int error = 0;
    for (auto it = defined_.rbegin(); it != defined_.rend(); ++it)
        write_definition("-:" + *it, error);
    ::close(root_fd_);
}

std::string TraceUprobes::listing() const {
    return read_at(root_fd_, "uprobe_events");
}

void TraceUprobes::remove_stale() {
    int error = 0;
    const auto alive = [](int pid) { return ::kill(pid, 0) == 0 || errno == EPERM; };
    for (const auto& name :
         stale_definitions(read_at(root_fd_, "uprobe_events"), ::getpid(), alive))
        write_definition("-:" + name, error);
}

bool TraceUprobes::write_definition(const std::string& line, int& error) const {
    const int fd = ::openat(root_fd_, "uprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        error = errno;
        return false;
    }
    const std::string text = line + "\n";
    const ssize_t wrote = ::write(fd, text.data(), text.size());
    error = wrote < 0 ? errno : 0;
    ::close(fd);
    return wrote == static_cast<ssize_t>(text.size());
}

long TraceUprobes::define(const std::string& path, std::uint64_t file_offset, bool return_probe,
                          std::string& why) {
    if (!definable_path(path)) {
        why =
            fmt::format("tracefs cannot name the path '{}' (it holds whitespace or quotes)", path);
        return -EINVAL;
    }
    const std::string event = fmt::format("{}{}", return_probe ? 'r' : 'p', defined_.size());
    const std::string name = group_ + "/" + event;
    int error = 0;
    if (!write_definition(
            fmt::format("{}:{} {}:0x{:x}", return_probe ? 'r' : 'p', name, path, file_offset),
            error)) {
        why = fmt::format("tracefs refused the probe {}:0x{:x} ({})", path, file_offset,
                          std::strerror(error ? error : EIO));
        return -(error ? error : EIO);
    }
    defined_.push_back(name);
    const std::string id = read_at(root_fd_, "events/" + name + "/id");
    try {
        return std::stol(id);
    } catch (const std::exception&) {
        why = fmt::format("tracefs defined {} but gives no id for it", name);
        return -ENOENT;
    }
}

}  // namespace lockprof::pmu
