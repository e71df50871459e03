// write_output(): every kind of path an output may name, with device nodes, FIFOs, sockets and
// links of the test's own in a temporary folder (never /dev itself).
#include "lockprof/common/output_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lockprof/common/error.hpp"
#include "support/temp_dir.hpp"

namespace lockprof {
namespace {

namespace fs = std::filesystem;

mode_t type_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & S_IFMT;
}

// The names in `dir`, to see that no temporary file was left behind.
std::vector<std::string> names_in(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// A device node of the test's own; false where the sandbox does not allow mknod.
bool make_device(const std::string& path, mode_t type, unsigned major, unsigned minor) {
    return ::mknod(path.c_str(), type | 0666, makedev(major, minor)) == 0;
}

// What write_output() threw, or "" when it did not throw that type.
template <typename E>
std::string error_of(const std::string& path, std::string_view content) {
    try {
        write_output(path, content);
    } catch (const E& e) {
        return e.what();
    }
    return "";
}

TEST(OutputFile, NewFileIsWrittenWholeWithNothingBeside) {
    test::TempDir dir;
    write_output(dir / "r.json", "{}\n");
    EXPECT_EQ(test::read_all(dir / "r.json"), "{}\n");
    EXPECT_EQ(names_in(dir.path), std::vector<std::string>{"r.json"});
    EXPECT_EQ(resolve_output(dir / "r.json").kind, OutputKind::replace);
}

TEST(OutputFile, ReplacingAFileKeepsItsPermissions) {
    test::TempDir dir;
    std::ofstream(dir / "r.json") << "old";
    fs::permissions(dir / "r.json", fs::perms(0640));
    write_output(dir / "r.json", "new");
    EXPECT_EQ(test::read_all(dir / "r.json"), "new");
    EXPECT_EQ(fs::status(dir / "r.json").permissions(), fs::perms(0640));
    EXPECT_EQ(names_in(dir.path), std::vector<std::string>{"r.json"});
}

TEST(OutputFile, SymlinkIsWrittenThroughAndStaysALink) {
    test::TempDir dir;
    fs::create_directory(dir.path / "real");
    std::ofstream(dir / "real/target.svg") << "old";
    fs::create_symlink("real/target.svg", dir / "link.svg");  // relative, as users make them
    fs::create_symlink("link.svg", dir / "link2.svg");        // a chain
    write_output(dir / "link2.svg", "<svg/>");
    EXPECT_EQ(type_of(dir / "link.svg"), S_IFLNK);
    EXPECT_EQ(type_of(dir / "link2.svg"), S_IFLNK);
    EXPECT_EQ(test::read_all(dir / "real/target.svg"), "<svg/>");
    EXPECT_EQ(resolve_output(dir / "link2.svg").path, dir.path / "real/target.svg");
    EXPECT_EQ(names_in(dir.path / "real"), std::vector<std::string>{"target.svg"});
}

TEST(OutputFile, DanglingSymlinkGetsItsTargetCreated) {
    test::TempDir dir;
    fs::create_symlink(dir / "made.json", dir / "link.json");
    write_output(dir / "link.json", "x");
    EXPECT_EQ(type_of(dir / "link.json"), S_IFLNK);
    EXPECT_EQ(test::read_all(dir / "made.json"), "x");
}

TEST(OutputFile, SymlinkLoopIsRefused) {
    test::TempDir dir;
    fs::create_symlink("b", dir / "a");
    fs::create_symlink("a", dir / "b");
    const auto e = error_of<UsageError>(dir / "a", "x");
    EXPECT_NE(e.find("too many levels of symbolic links"), std::string::npos) << e;
}

TEST(OutputFile, CharacterDeviceIsStreamedAndStaysADevice) {
    test::TempDir dir;
    if (!make_device(dir / "null", S_IFCHR, 1, 3))
        GTEST_SKIP() << "mknod is not permitted here (" << std::strerror(errno) << ")";
    EXPECT_EQ(resolve_output(dir / "null").kind, OutputKind::stream);
    check_output(dir / "null", "output");
    write_output(dir / "null", "{}\n");
    EXPECT_EQ(type_of(dir / "null"), S_IFCHR);
    EXPECT_EQ(names_in(dir.path), std::vector<std::string>{"null"});
}

TEST(OutputFile, FullDeviceIsOneLineNamingTheFile) {
    test::TempDir dir;
    if (!make_device(dir / "full", S_IFCHR, 1, 7))
        GTEST_SKIP() << "mknod is not permitted here (" << std::strerror(errno) << ")";
    const auto e = error_of<Error>(dir / "full", "{}\n");
    EXPECT_NE(e.find(dir / "full"), std::string::npos) << e;
    EXPECT_NE(e.find(std::strerror(ENOSPC)), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    EXPECT_EQ(type_of(dir / "full"), S_IFCHR);
    EXPECT_EQ(names_in(dir.path), std::vector<std::string>{"full"});
}

TEST(OutputFile, BlockDeviceAndDirectoryAreRefused) {
    test::TempDir dir;
    EXPECT_NE(error_of<UsageError>(dir.path.string(), "x").find("is a directory"),
              std::string::npos);
    EXPECT_THROW(check_output(dir.path.string(), "output"), UsageError);
    if (!make_device(dir / "disk", S_IFBLK, 7, 0))
        GTEST_SKIP() << "mknod is not permitted here (" << std::strerror(errno) << ")";
    const auto e = error_of<UsageError>(dir / "disk", "x");
    EXPECT_NE(e.find("block device"), std::string::npos) << e;
    EXPECT_EQ(type_of(dir / "disk"), S_IFBLK);
}

TEST(OutputFile, FifoGetsTheDataAndStaysAFifo) {
    test::TempDir dir;
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    check_output(dir / "fifo", "output");     // must not open it: nobody reads yet
    const std::string content(200'000, 'x');  // more than a pipe holds
    std::string received;
    std::thread reader([&] { received = test::read_all(dir / "fifo"); });
    write_output(dir / "fifo", content);
    reader.join();
    EXPECT_EQ(received, content);
    EXPECT_EQ(type_of(dir / "fifo"), S_IFIFO);
}

TEST(OutputFile, ReaderGoneIsBrokenPipeNotADeath) {
    test::TempDir dir;
    ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
    // The reader opens (which waits for the writer) and leaves without reading.
    std::thread reader([&] { ::close(::open((dir / "fifo").c_str(), O_RDONLY)); });
    const auto e = error_of<Error>(dir / "fifo", std::string(1'000'000, 'x'));
    reader.join();
    EXPECT_NE(e.find(std::strerror(EPIPE)), std::string::npos) << e;
    EXPECT_NE(e.find(dir / "fifo"), std::string::npos) << e;
}

TEST(OutputFile, UnixSocketIsConnectedTo) {
    test::TempDir dir;
    const int listener = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(listener, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string path = dir / "sock";
    if (path.size() >= sizeof(address.sun_path)) GTEST_SKIP() << "temporary path too long";
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    ASSERT_EQ(::listen(listener, 1), 0);
    std::string received;
    std::thread server([&] {
        const int connection = ::accept(listener, nullptr, nullptr);
        char buffer[4096];
        for (ssize_t n; (n = ::read(connection, buffer, sizeof buffer)) > 0;)
            received.append(buffer, static_cast<std::size_t>(n));
        ::close(connection);
    });
    write_output(path, "over a socket");
    server.join();
    ::close(listener);
    EXPECT_EQ(received, "over a socket");
    EXPECT_EQ(type_of(path), S_IFSOCK);
}

bool have_procfs() {
    struct statfs s {};
    return ::statfs("/proc/self/fd", &s) == 0 && s.f_type == PROC_SUPER_MAGIC;
}

// /dev/stdout names /proc/self/fd/1: the open file, not the path it prints.
TEST(OutputFile, ProcFdLinkWritesAtTheEndOfTheOpenFile) {
    if (!have_procfs()) GTEST_SKIP() << "no procfs at /proc";
    test::TempDir dir;
    std::ofstream(dir / "log") << "before\n";
    struct stat before {};
    ASSERT_EQ(::stat((dir / "log").c_str(), &before), 0);
    const int fd = ::open((dir / "log").c_str(), O_WRONLY | O_APPEND);  // as `>> log`
    ASSERT_GE(fd, 0);
    write_output("/proc/self/fd/" + std::to_string(fd), "after\n");
    ::close(fd);
    EXPECT_EQ(test::read_all(dir / "log"), "before\nafter\n");
    struct stat after {};
    ASSERT_EQ(::stat((dir / "log").c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino) << "the file the link stood for was replaced";
}

TEST(OutputFile, ProcFdLinkToAClosedPipeIsBrokenPipe) {
    if (!have_procfs()) GTEST_SKIP() << "no procfs at /proc";
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ::close(fds[0]);
    const auto e = error_of<Error>("/proc/self/fd/" + std::to_string(fds[1]), "x");
    ::close(fds[1]);
    EXPECT_NE(e.find(std::strerror(EPIPE)), std::string::npos) << e;
}

TEST(OutputFile, CheckRefusesAMissingFolderAndCreatesNothing) {
    test::TempDir dir;
    try {
        check_output(dir / "nope/r.json", "csv");
        FAIL() << "accepted a missing folder";
    } catch (const UsageError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("--csv: ", 0), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
    }
    check_output(dir / "r.json", "output");
    check_output("-", "output");
    EXPECT_TRUE(fs::is_empty(dir.path));
}

// A failed write of a regular file leaves the old file as it was and no temporary beside it:
// a full filesystem of the test's own (a tiny tmpfs), where mounting is allowed.
TEST(OutputFile, FullFilesystemKeepsTheOldFileAndLeavesNoTemporary) {
    test::TempDir dir;
    const std::string mount_point = dir / "small";
    fs::create_directory(mount_point);
    if (::mount("lockprof-test", mount_point.c_str(), "tmpfs", 0, "size=16k") != 0)
        GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << ")";
    struct Unmount {
        std::string path;
        ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
    } unmount{mount_point};
    const std::string target = mount_point + "/r.json";
    std::ofstream(target) << "old";
    const auto e = error_of<Error>(target, std::string(1 << 20, 'x'));
    EXPECT_NE(e.find(std::strerror(ENOSPC)), std::string::npos) << e;
    EXPECT_NE(e.find(target), std::string::npos) << e;
    EXPECT_EQ(test::read_all(target), "old");
    EXPECT_EQ(names_in(mount_point), std::vector<std::string>{"r.json"});
}

}  // namespace
}  // namespace lockprof
