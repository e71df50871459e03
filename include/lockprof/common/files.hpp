// The running system's small files and programs: a /proc or /sys file read whole or its first
// line, and whether a program can be run. Every module reads them through these.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace lockprof {

// The whole content of `path`, "" when it cannot be read. Meant for small files (/proc, /sys).
std::string read_all(const std::filesystem::path& path);

// The first line of `path` without its newline, "" when it cannot be read or is empty.
std::string first_line(const std::filesystem::path& path);

// Whether `program` can be run: a path (it has a '/') to an executable file, or a name that is
// an executable file in one of PATH's folders; with PATH unset, /usr/bin:/bin.
bool program_exists(std::string_view program);

// The last component of `path`: "libc.so.6" for "/usr/lib/x86_64-linux-gnu/libc.so.6".
std::string base_name(const std::string& path);

}  // namespace lockprof
