// Folded stacks (Brendan Gregg's format): one line per unique stack, frames root first joined by
// ';', a space, and a weight: "main;lock;s_lock 12". Readable by flamegraph.pl, inferno and
// speedscope. FoldedStacks aggregates weights; parse_folded reads files with a bad-input policy
// (report file:line, skip or fail) so users' own folded files never crash the renderer.
// The export module's namespace is lockprof::exporting: `export` is a C++ keyword.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace lockprof::exporting {

// Lines longer than this are refused: a folded line that long is corrupt input, and bounding it
// keeps a broken file from exhausting memory.
inline constexpr std::size_t kMaxFoldedLineBytes = 1024 * 1024;

// Makes one frame name safe for the folded format. ';' separates frames and '\n'/'\r' separate
// lines, so both would change the stack's shape: ';' becomes ':' (reads naturally in C++ names
// like "a::b") and CR/LF/other control characters become ' '. Trailing blanks are dropped (the
// reader would drop them from a leaf frame), and a name left empty becomes "[unknown]" (an empty
// frame would read as an empty stack element). Invalid UTF-8 bytes become '?', so every stored
// frame renders as valid XML.
std::string sanitize_frame(std::string_view frame);

class FoldedStacks {
  public:
    // Adds `weight` to the stack whose frames are given root first. Each frame is sanitised with
    // sanitize_frame(). An empty frame list or zero weight adds nothing.
    void add(const std::vector<std::string>& frames_root_first, std::uint64_t weight);
    // Adds `weight` to an already ';'-joined stack. The caller vouches for the text: it is
    // stored as given (parse_folded validates before calling this). Empty stacks are ignored.
    void add_line(std::string_view stack, std::uint64_t weight);
    // Adds every stack of `other`, each prefixed with `root` as a new root frame when non-empty
    // (one file holding a whole sweep, one root per cell).
    void merge(const FoldedStacks& other, std::string_view root = {});

    std::uint64_t total() const { return total_; }
    bool empty() const { return stacks_.empty(); }
    std::size_t size() const { return stacks_.size(); }
    const std::map<std::string, std::uint64_t>& stacks() const { return stacks_; }

  private:
    std::map<std::string, std::uint64_t> stacks_;
    std::uint64_t total_ = 0;
};

// The comment line lockprof's folded files start with when their counts are not sample
// counts ("# lockprof folded stacks; counts are ns of CPU time"), so that `lockprof
// flamegraph` (and a reader) knows the unit. Lines starting with '#' are comments to
// parse_folded; flamegraph.pl and inferno skip them as lines without a count.
inline constexpr std::string_view kFoldedUnitComment = "# lockprof folded stacks; counts are ";

// "a;b;c 12\n" lines, sorted by stack (byte order), so output is deterministic and diffable;
// after the unit comment when `unit` is given and is not "samples".
std::string to_folded_text(const FoldedStacks& stacks, std::string_view unit = {});

struct ParseOptions {
    // Throw UsageError at the first malformed line instead of skipping it.
    bool strict = false;
};

struct ParseReport {
    std::size_t lines = 0;    // lines read, including skipped and blank ones
    std::size_t skipped = 0;  // malformed lines left out
    std::size_t used = 0;     // stack lines read into the result
    // "file:line: why", one per skipped line, capped at kMaxReportedProblems (skipped counts all).
    std::vector<std::string> problems;
    // What the counts are, from lockprof's unit comment; "" when the file does not say.
    std::string unit;
};
inline constexpr std::size_t kMaxReportedProblems = 100;

// Reads folded text. Blank lines and comments (lines starting with '#') are ignored; the unit
// comment sets report.unit. Malformed lines (no count, negative or
// non-numeric or overflowing count, a count taking the total over 2^64-1, empty stack or empty
// frame, line over kMaxFoldedLineBytes, invalid UTF-8, CRLF line ending, NUL byte) are recorded
// in `report` and skipped; with options.strict the first one throws UsageError("file:line: why
// ..."). A count of 0 is valid and adds nothing. Repeated stacks are summed. Input whose every
// non-blank line is malformed throws UsageError (the wrong file, not a folded one with a few bad
// lines).
FoldedStacks parse_folded(std::istream& in, const std::string& filename,
                          const ParseOptions& options, ParseReport& report);

}  // namespace lockprof::exporting
