#include "lockprof/common/output_file.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lockprof/common/error.hpp"
#include "lockprof/common/output_registry.hpp"

namespace lockprof {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxSymlinks = 40;  // as the kernel's ELOOP limit

std::string shown(const std::string& path) {
    return path == "-" ? std::string("standard output") : fmt::format("'{}'", path);
}

// What to do about a failed write, the last part of the one-line error.
const char* advice(int err) {
    switch (err) {
        case ENOSPC:
        case EDQUOT:
        case EFBIG:
            return "free some space or write somewhere else";
        case EPIPE:
            return "whatever reads it stopped before the end; keep the reader open until "
                   "lockprof exits";
        case EIO:
            return "the device reported an I/O error; check it (dmesg) or write somewhere else";
        case EACCES:
        case EPERM:
        case EROFS:
            return "choose a writable location";
        default:
            return "check the path or write somewhere else";
    }
}

[[noreturn]] void write_failed(const std::string& path, int err) {
    throw Error(
        fmt::format("cannot write {}: {}; {}", shown(path), std::strerror(err), advice(err)));
}

// EPIPE as an error to report instead of a silent death by SIGPIPE, while a stream is written.
class IgnoreSigpipe {
  public:
    IgnoreSigpipe() {
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        sigaction(SIGPIPE, &ignore, &previous_);
    }
    ~IgnoreSigpipe() { sigaction(SIGPIPE, &previous_, nullptr); }
    IgnoreSigpipe(const IgnoreSigpipe&) = delete;
    IgnoreSigpipe& operator=(const IgnoreSigpipe&) = delete;

  private:
    struct sigaction previous_ {};
};

// Writes all of `content` (short writes continue where they stopped); the errno on failure.
int write_all(int fd, std::string_view content) {
    while (!content.empty()) {
        const ssize_t n = ::write(fd, content.data(), content.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return EIO;  // no progress and no error: the device took nothing
        content.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
}

fs::path folder_of(const fs::path& path) {
    return path.parent_path().empty() ? fs::path(".") : path.parent_path();
}

bool on_procfs(const fs::path& folder) {
    struct statfs s {};
    return ::statfs(folder.c_str(), &s) == 0 && s.f_type == PROC_SUPER_MAGIC;
}

// The final object `path` names, and its type; throws with `prefix` leading the message.
OutputTarget resolve(const std::string& path, const std::string& prefix) {
    OutputTarget target;
    if (path == "-") {
        target.kind = OutputKind::standard_output;
        return target;
    }
    if (path.empty()) throw UsageError(prefix + "an empty file name; give a file name or '-'");
    fs::path p = path;
    for (int hop = 0; hop <= kMaxSymlinks; ++hop) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) {
            if (errno == ENOENT) {  // a new file (its folder is checked when it is written)
                target.kind = OutputKind::replace;
                target.path = p;
                return target;
            }
            throw UsageError(fmt::format("{}cannot use '{}': {}; check the path", prefix, path,
                                         std::strerror(errno)));
        }
        if (S_ISLNK(st.st_mode)) {
            // /proc's links (/proc/self/fd/1, what /dev/stdout names) stand for open files,
            // not paths: renaming over what they print would replace a file the shell opened
            // (`>> log`), or fail for a pipe. Write through the link instead.
            if (on_procfs(folder_of(p))) {
                struct stat pointed {};
                if (::stat(p.c_str(), &pointed) == 0 && S_ISDIR(pointed.st_mode))
                    throw UsageError(
                        fmt::format("{}'{}' is a directory; give a file name", prefix, path));
                target.kind = OutputKind::stream;
                target.path = p;
                target.append = ::stat(p.c_str(), &pointed) == 0 && S_ISREG(pointed.st_mode);
                return target;
            }
            std::error_code ec;
            const fs::path next = fs::read_symlink(p, ec);
            if (ec)
                throw UsageError(fmt::format("{}cannot follow the link '{}': {}; check it", prefix,
                                             p.string(), ec.message()));
            p = next.is_absolute() ? next : p.parent_path() / next;
            continue;
        }
        if (S_ISDIR(st.st_mode))
            throw UsageError(fmt::format("{}'{}' is a directory; give a file name", prefix, path));
        if (S_ISBLK(st.st_mode))
            throw UsageError(fmt::format(
                "{}'{}' is a block device; lockprof does not write to disks, give a file name",
                prefix, path));
        target.kind = S_ISREG(st.st_mode) ? OutputKind::replace : OutputKind::stream;
        target.path = p;
        return target;
    }
    throw UsageError(
        fmt::format("{}'{}': too many levels of symbolic links; check the links", prefix, path));
}

// A Unix socket is connected to, not opened.
int connect_socket(const fs::path& path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.native().size() >= sizeof(address.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    std::memcpy(address.sun_path, path.c_str(), path.native().size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
        const int err = errno;
        ::close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

void write_stream(const std::string& path, const OutputTarget& target, std::string_view content) {
    struct stat st {};
    const bool socket = ::stat(target.path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
    const int fd = socket ? connect_socket(target.path)
                          : ::open(target.path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC |
                                                            (target.append ? O_APPEND : 0));
    if (fd < 0) write_failed(path, errno);
    IgnoreSigpipe sigpipe;
    int err = write_all(fd, content);
    if (::close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
    if (err != 0) write_failed(path, err);
}

void write_standard_output(std::string_view content) {
    // What was printed before goes first, then the file, straight to the descriptor.
    finish_standard_output();
    IgnoreSigpipe sigpipe;
    if (const int err = write_all(STDOUT_FILENO, content); err != 0) write_failed("-", err);
}

// Removes the temporary file unless it was renamed into place.
class Temporary {
  public:
    explicit Temporary(fs::path path) : path_(std::move(path)) {}
    ~Temporary() {
        if (fd_ >= 0) ::close(fd_);
        if (!path_.empty()) ::unlink(path_.c_str());
    }
    Temporary(const Temporary&) = delete;
    Temporary& operator=(const Temporary&) = delete;

    const fs::path& path() const { return path_; }
    int& fd() { return fd_; }
    void renamed() { path_.clear(); }

  private:
    fs::path path_;
    int fd_ = -1;
};

fs::path temporary_beside(const fs::path& target) {
    std::random_device random;
    return folder_of(target) /
           fmt::format(".{}.tmp.{}.{:x}", target.filename().string(), getpid(), random());
}

void write_replacing(const std::string& path, const fs::path& target, std::string_view content) {
    struct stat existing {};
    const bool exists = ::stat(target.c_str(), &existing) == 0;
    // As `>` would: a file we may not write is refused, not replaced behind its owner's back.
    if (exists && ::access(target.c_str(), W_OK) != 0) write_failed(path, errno);
    Temporary temporary(temporary_beside(target));
    outputs::writing(path, temporary.path());  // before it exists: an abort removes it
    temporary.fd() =
        ::open(temporary.path().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (temporary.fd() < 0) {
        const int err = errno;
        temporary.renamed();  // nothing was created
        write_failed(path, err);
    }
    if (exists) {
        // The replacement keeps the file's owner where we may set it, and its permissions
        // (without set-id bits, which an output file has no use for).
        if (::fchown(temporary.fd(), existing.st_uid, existing.st_gid) != 0) {
            // Not ours to give away: the new file is ours, with the old permissions.
        }
        if (::fchmod(temporary.fd(), existing.st_mode & 0777) != 0) {
            // A filesystem without modes (vfat): it keeps its default.
        }
    }
    if (const int err = write_all(temporary.fd(), content); err != 0) write_failed(path, err);
    if (::fsync(temporary.fd()) != 0 && errno != EINVAL && errno != EROFS)
        write_failed(path, errno);
    const int fd = temporary.fd();
    temporary.fd() = -1;
    if (::close(fd) != 0 && errno != EINTR) write_failed(path, errno);
    if (::rename(temporary.path().c_str(), target.c_str()) != 0) write_failed(path, errno);
    temporary.renamed();
    // The rename itself survives a crash once the folder is synced; best effort.
    const int folder = ::open(folder_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (folder >= 0) {
        if (::fsync(folder) != 0) {
            // A folder that cannot be synced (some network filesystems) still has the file.
        }
        ::close(folder);
    }
}

}  // namespace

void finish_standard_output() {
    errno = 0;
    std::cout.flush();
    const bool flushed = std::fflush(stdout) == 0;
    const int err = errno;
    if (!flushed || std::ferror(stdout) != 0 || !std::cout) {
        // An earlier write failed and its errno is gone: say so rather than guess one.
        if (err == 0)
            throw Error(
                "cannot write standard output: an earlier write to it failed (a full disk or a "
                "closed pipe?); write somewhere else or check the device");
        write_failed("-", err);
    }
}

OutputTarget resolve_output(const std::string& path) {
    return resolve(path, "");
}

void check_output(const std::string& path, const std::string& option) {
    outputs::planned(path);
    const std::string prefix = fmt::format("--{}: ", option);
    const OutputTarget target = resolve(path, prefix);
    switch (target.kind) {
        case OutputKind::standard_output:
            if (::fcntl(STDOUT_FILENO, F_GETFD) < 0)
                throw UsageError(prefix + "standard output is closed; give a file name");
            return;
        case OutputKind::stream:
            if (::access(target.path.c_str(), W_OK) != 0)
                throw UsageError(fmt::format("{}cannot write '{}': {}; choose a writable location",
                                             prefix, path, std::strerror(errno)));
            return;
        case OutputKind::replace: {
            const fs::path folder = folder_of(target.path);
            std::error_code ec;
            if (!fs::is_directory(folder, ec))
                throw UsageError(fmt::format("{}folder '{}' does not exist; create it first",
                                             prefix, folder.string()));
            if (::access(folder.c_str(), W_OK) != 0)
                throw UsageError(
                    fmt::format("{}cannot write into '{}': {}; choose a writable "
                                "location",
                                prefix, folder.string(), std::strerror(errno)));
            if (::access(target.path.c_str(), F_OK) == 0 &&
                ::access(target.path.c_str(), W_OK) != 0)
                throw UsageError(fmt::format("{}cannot write '{}': {}; choose a writable location",
                                             prefix, path, std::strerror(errno)));
            return;
        }
    }
}

void write_output(const std::string& path, std::string_view content) {
    // Its progress, for a signal handler (output_registry.hpp): being written (a replaced file
    // says so again with its temporary), then in place, or not written after all.
    struct Progress {
        const std::string& path;
        bool done = false;
        ~Progress() {
            if (!done) outputs::abandoned(path);
        }
    } progress{path};
    outputs::writing(path, {});
    const OutputTarget target = resolve(path, "");
    switch (target.kind) {
        case OutputKind::standard_output:
            write_standard_output(content);
            break;
        case OutputKind::stream:
            write_stream(path, target, content);
            break;
        case OutputKind::replace:
            write_replacing(path, target.path, content);
            break;
    }
    outputs::written(path);
    progress.done = true;
}

}  // namespace lockprof
