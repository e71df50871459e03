#include "lockprof/common/files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace lockprof {

std::string read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
}

std::string first_line(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

namespace {

bool runnable(const std::string& file) {
    struct stat st {};
    return ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(file.c_str(), X_OK) == 0;
}

std::string default_path() {
    const std::size_t size = ::confstr(_CS_PATH, nullptr, 0);
    if (size == 0) return "/bin:/usr/bin";
    std::string path(size, '\0');
    ::confstr(_CS_PATH, path.data(), size);
    path.resize(size - 1);
    return path;
}

}  // namespace

std::string find_program(std::string_view program) {
    const std::string name(program);
    if (name.empty()) return "";
    if (name.find('/') != std::string::npos) return runnable(name) ? name : "";
    const char* path = std::getenv("PATH");
    const std::string list = path ? path : default_path();
    for (std::size_t start = 0; start <= list.size();) {
        std::size_t end = list.find(':', start);
        if (end == std::string::npos) end = list.size();
        const std::string candidate =
            end > start ? list.substr(start, end - start) + "/" + name : name;
        if (runnable(candidate)) return candidate;
        start = end + 1;
    }
    return "";
}

bool program_exists(std::string_view program) {
    return !find_program(program).empty();
}

std::string base_name(const std::string& path) {
    return std::filesystem::path(path).filename().string();
}

}  // namespace lockprof
