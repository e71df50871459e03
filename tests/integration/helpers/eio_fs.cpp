// A FUSE test filesystem that fails with EIO (the fault battery's "EIO on a filesystem";
// docs/reliability.md). One flat in-memory folder where files can be created, written, renamed
// and unlinked, as lockprof's atomic writes need (a temporary beside the target, then a rename),
// and where every file created after the mount fails, by MODE, with EIO:
//
//   write     every write
//   after:N   once the file holds N bytes: the write crossing N is cut short there, the next fails
//   fsync     fsync (the writes succeed)
//   flush     close (FUSE's flush; the writes and fsync succeed)
//
// Usage: lockprof_eio_fs MODE MOUNTPOINT [NAME=CONTENT...]
// Each NAME=CONTENT is a file present from the start, which never fails (the file an output
// replaces). Runs in the foreground, single-threaded, until unmounted (umount2 MNT_DETACH or
// fusermount3 -u).
#define FUSE_USE_VERSION 31
#include <fuse.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace {

enum class Mode { write, after, fsync, flush };

struct File {
    std::string data;
    mode_t mode = 0644;
    bool faulty = true;  // false for the files given on the command line
};

Mode g_mode = Mode::write;
std::size_t g_after = 0;
std::map<std::string, File> g_files;  // by path, "/name"

File* find(const char* path) {
    const auto it = g_files.find(path);
    return it == g_files.end() ? nullptr : &it->second;
}

int eio_getattr(const char* path, struct stat* st, fuse_file_info*) {
    std::memset(st, 0, sizeof *st);
    st->st_uid = getuid();
    st->st_gid = getgid();
    if (std::strcmp(path, "/") == 0) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
        return 0;
    }
    const File* f = find(path);
    if (!f) return -ENOENT;
    st->st_mode = S_IFREG | f->mode;
    st->st_nlink = 1;
    st->st_size = static_cast<off_t>(f->data.size());
    return 0;
}

int eio_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info*,
                fuse_readdir_flags) {
    if (std::strcmp(path, "/") != 0) return -ENOTDIR;
    fill(buf, ".", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
    fill(buf, "..", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
    for (const auto& [name, file] : g_files)
        fill(buf, name.c_str() + 1, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
    return 0;
}

int eio_create(const char* path, mode_t mode, fuse_file_info*) {
    if (find(path)) return -EEXIST;
    g_files[path].mode = mode & 07777;
    return 0;
}

int eio_open(const char* path, fuse_file_info* fi) {
    File* f = find(path);
    if (!f) return -ENOENT;
    if (fi->flags & O_TRUNC) f->data.clear();
    return 0;
}

int eio_read(const char* path, char* buf, size_t size, off_t offset, fuse_file_info*) {
    const File* f = find(path);
    if (!f) return -ENOENT;
    const auto at = static_cast<std::size_t>(offset);
    if (at >= f->data.size()) return 0;
    const std::size_t n = std::min(size, f->data.size() - at);
    std::memcpy(buf, f->data.data() + at, n);
    return static_cast<int>(n);
}

int eio_write(const char* path, const char* buf, size_t size, off_t offset, fuse_file_info*) {
    File* f = find(path);
    if (!f) return -ENOENT;
    const auto at = static_cast<std::size_t>(offset);
    if (f->faulty && g_mode == Mode::write) return -EIO;
    if (f->faulty && g_mode == Mode::after) {
        if (at >= g_after) return -EIO;
        size = std::min(size, g_after - at);  // cut short at N; the next write fails
    }
    if (f->data.size() < at + size) f->data.resize(at + size);
    std::memcpy(f->data.data() + at, buf, size);
    return static_cast<int>(size);
}

int eio_truncate(const char* path, off_t size, fuse_file_info*) {
    File* f = find(path);
    if (!f) return -ENOENT;
    f->data.resize(static_cast<std::size_t>(size));
    return 0;
}

int eio_unlink(const char* path) {
    return g_files.erase(path) ? 0 : -ENOENT;
}

int eio_rename(const char* from, const char* to, unsigned int flags) {
    if (flags != 0) return -EINVAL;
    const auto it = g_files.find(from);
    if (it == g_files.end()) return -ENOENT;
    File moved = std::move(it->second);
    g_files.erase(it);
    g_files[to] = std::move(moved);
    return 0;
}

int eio_chmod(const char* path, mode_t mode, fuse_file_info*) {
    File* f = find(path);
    if (!f) return -ENOENT;
    f->mode = mode & 07777;
    return 0;
}

int eio_chown(const char* path, uid_t, gid_t, fuse_file_info*) {
    return find(path) ? 0 : -ENOENT;
}

int eio_utimens(const char* path, const timespec*, fuse_file_info*) {
    return find(path) || std::strcmp(path, "/") == 0 ? 0 : -ENOENT;
}

int eio_fsync(const char* path, int, fuse_file_info*) {
    const File* f = find(path);
    return f && f->faulty && g_mode == Mode::fsync ? -EIO : 0;
}

int eio_flush(const char* path, fuse_file_info*) {
    const File* f = find(path);
    return f && f->faulty && g_mode == Mode::flush ? -EIO : 0;
}

bool parse_mode(const std::string& s) {
    if (s == "write")
        g_mode = Mode::write;
    else if (s == "fsync")
        g_mode = Mode::fsync;
    else if (s == "flush")
        g_mode = Mode::flush;
    else if (s.rfind("after:", 0) == 0 && s.size() > 6) {
        g_mode = Mode::after;
        char* end = nullptr;
        g_after = std::strtoull(s.c_str() + 6, &end, 10);
        return *end == '\0';
    } else
        return false;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3 || !parse_mode(argv[1])) {
        std::fprintf(stderr, "usage: %s write|after:N|fsync|flush MOUNTPOINT [NAME=CONTENT...]\n",
                     argv[0]);
        return 2;
    }
    for (int i = 3; i < argc; ++i) {
        const std::string seed = argv[i];
        const auto eq = seed.find('=');
        if (eq == std::string::npos || eq == 0 || seed.find('/') < eq) {
            std::fprintf(stderr, "%s: '%s' is not NAME=CONTENT\n", argv[0], argv[i]);
            return 2;
        }
        File& f = g_files["/" + seed.substr(0, eq)];
        f.data = seed.substr(eq + 1);
        f.faulty = false;
    }
    fuse_operations ops{};
    ops.getattr = eio_getattr;
    ops.readdir = eio_readdir;
    ops.create = eio_create;
    ops.open = eio_open;
    ops.read = eio_read;
    ops.write = eio_write;
    ops.truncate = eio_truncate;
    ops.unlink = eio_unlink;
    ops.rename = eio_rename;
    ops.chmod = eio_chmod;
    ops.chown = eio_chown;
    ops.utimens = eio_utimens;
    ops.fsync = eio_fsync;
    ops.flush = eio_flush;
    std::vector<char*> args = {argv[0],
                               const_cast<char*>("-f"),
                               const_cast<char*>("-s"),
                               const_cast<char*>("-o"),
                               const_cast<char*>("fsname=lockprof-eio,subtype=eio"),
                               argv[2]};
    return fuse_main(static_cast<int>(args.size()), args.data(), &ops, nullptr);
}
