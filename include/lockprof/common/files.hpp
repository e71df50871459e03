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

// The file execvp would run for `program`, "" when there is none: `program` itself when it
// holds a '/', otherwise the first PATH folder holding it, glibc's way: an empty PATH entry is
// the current folder, an unset PATH is the system's default (confstr _CS_PATH, /bin:/usr/bin).
// Only an executable regular file counts.
std::string find_program(std::string_view program);

// Whether `program` can be run: find_program() finds it.
bool program_exists(std::string_view program);

// The last component of `path`: "libc.so.6" for "/usr/lib/x86_64-linux-gnu/libc.so.6".
std::string base_name(const std::string& path);

}  // namespace lockprof
