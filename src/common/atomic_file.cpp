#include "lockprof/common/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <random>

#include <fmt/format.h>
#include <unistd.h>

#include "lockprof/common/error.hpp"

namespace lockprof {
namespace {
std::filesystem::path temporary_beside(const std::filesystem::path& target) {
    std::random_device random;
    auto name = fmt::format(".{}.tmp.{}.{:x}", target.filename().string(), getpid(), random());
    return target.parent_path() / name;
}
}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target)
    : target_(std::move(target)), temporary_(temporary_beside(target_)) {
    out_.open(temporary_, std::ios::binary | std::ios::trunc);
    if (!out_)
        throw UsageError(fmt::format("cannot write '{}': {}; choose a writable location",
                                     target_.string(), std::strerror(errno)));
}

AtomicFile::~AtomicFile() {
    if (!committed_) {
        out_.close();
        std::error_code ignored;
        std::filesystem::remove(temporary_, ignored);
    }
}

void AtomicFile::commit() {
    out_.flush();
    const bool ok = static_cast<bool>(out_);
    out_.close();
    if (!ok) throw Error(fmt::format("writing '{}' failed (disk full?)", target_.string()));
    std::error_code ec;
    std::filesystem::rename(temporary_, target_, ec);
    if (ec)
        throw Error(fmt::format("cannot move output into place at '{}': {}", target_.string(),
                                ec.message()));
    committed_ = true;
}

void AtomicFile::check_writable(const std::filesystem::path& target, const std::string& option) {
    std::error_code ec;
    if (std::filesystem::is_directory(target, ec))
        throw UsageError(
            fmt::format("--{}: '{}' is a directory; give a file name", option, target.string()));
    const auto folder =
        target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
    if (!std::filesystem::is_directory(folder, ec))
        throw UsageError(fmt::format("--{}: folder '{}' does not exist; create it first", option,
                                     folder.string()));
    if (access(folder.c_str(), W_OK) != 0)
        throw UsageError(fmt::format("--{}: cannot write into '{}': {}", option, folder.string(),
                                     std::strerror(errno)));
}

void write_file_atomically(const std::filesystem::path& target, const std::string& content) {
    AtomicFile file(target);
    file.stream() << content;
    file.commit();
}

}  // namespace lockprof
