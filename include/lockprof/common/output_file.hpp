// The one way lockprof writes an output file, for every output of every subcommand
// (docs/reliability.md). What the path names decides how it is written:
//   - "-": standard output, streamed;
//   - a regular file, or a name that does not exist yet: written whole or not at all, to a
//     temporary file beside it (fsync'd) renamed over it, keeping an existing file's mode;
//   - a symlink: followed to its final target, which is then written as above (the link stays
//     a link, a dangling link gets its target created);
//   - a character device, FIFO or socket: streamed directly, never created, truncated or
//     replaced; a link under /proc (/dev/stdout, /proc/self/fd/N) is opened through and
//     written at its end, as the open file it stands for;
//   - a directory or block device: refused.
// A write error (ENOSPC, EIO, EPIPE, a failed fsync or close) throws Error naming the file, and
// leaves no temporary file behind.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace lockprof {

enum class OutputKind {
    standard_output,  // "-"
    replace,          // written atomically at `path`
    stream,           // opened at `path` and written in place
};

struct OutputTarget {
    OutputKind kind = OutputKind::replace;
    std::filesystem::path path;  // the final target: symlinks followed (not for "-")
    bool append = false;         // stream: a regular file reached through a /proc link
};

// What `path` names and how it would be written; throws UsageError (one line, naming `path`)
// for a directory, a block device, a symlink loop or an unreadable path.
OutputTarget resolve_output(const std::string& path);

// Fails early (UsageError, "--OPTION: ...") if `path` could not be written, before a long run
// ends in an unwritable path. Creates and opens nothing (a FIFO is not opened).
void check_output(const std::string& path, const std::string& option);

// Writes `content` to `path` as the header describes. Throws Error (exit 1) on a write error.
void write_output(const std::string& path, std::string_view content);

// Flushes what was printed on standard output (std::cout and C stdio); throws Error if any of
// it could not be written (`lockprof list-locks > /dev/full` is not a success).
void finish_standard_output();

}  // namespace lockprof
