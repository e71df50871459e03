// Temporary folders and whole-file reads for every test executable (unit, CLI, integration).
// Test files share helpers through headers like this one: in CI's unity builds several test
// files form one translation unit, where two files' own helpers of one name would collide.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace lockprof::test {

// A file's whole content ("" when it cannot be read).
inline std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A private temporary folder, removed with everything in it on destruction.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "lockprof-test-XXXXXX");
        path = mkdtemp(pattern.data());
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::filesystem::path operator/(const std::string& name) const { return path / name; }
    // Writes `content` to `name` (a relative path; its folders are made) and returns its path.
    std::filesystem::path write(const std::string& name, const std::string& content) const {
        const auto file = path / name;
        std::filesystem::create_directories(file.parent_path());
        std::ofstream(file, std::ios::binary) << content;
        return file;
    }
};

}  // namespace lockprof::test
