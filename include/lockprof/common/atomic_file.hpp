// Output files appear whole or not at all: written to a temporary file beside the target and
// renamed over it on commit(). A destroyed, uncommitted AtomicFile removes its temporary.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace lockprof {

class AtomicFile {
  public:
    // Opens the temporary file; throws UsageError when the target's folder is not writable.
    explicit AtomicFile(std::filesystem::path target);
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    std::ostream& stream() { return out_; }
    // Flushes, checks for write errors, renames into place. Throws Error on failure.
    void commit();

    // Fails early (UsageError) if `target` could not be written, leaving nothing behind.
    static void check_writable(const std::filesystem::path& target, const std::string& option);

  private:
    std::filesystem::path target_;
    std::filesystem::path temporary_;
    std::ofstream out_;
    bool committed_ = false;
};

// Writes `content` to `target` atomically.
void write_file_atomically(const std::filesystem::path& target, const std::string& content);

}  // namespace lockprof
