#include "lockprof/export/folded.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "lockprof/common/error.hpp"
#include "lockprof/export/utf8.hpp"

namespace lockprof::exporting {

std::string sanitize_frame(std::string_view frame) {
    if (frame.empty()) return "[unknown]";
    std::string out;
    out.reserve(frame.size());
    std::size_t i = 0;
    while (i < frame.size()) {
        const auto c = static_cast<unsigned char>(frame[i]);
        if (c >= 0x80) {
            const std::size_t n = utf8_sequence_length(frame.substr(i));
            if (n == 0) {
                out += '?';
                ++i;
            } else {
                out.append(frame.substr(i, n));
                i += n;
            }
            continue;
        }
        if (c == ';')
            out += ':';
        else if (c < 0x20 || c == 0x7f)
            out += ' ';
        else
            out += static_cast<char>(c);
        ++i;
    }
    // The folded reader ends a stack at its last non-blank byte and refuses a line that starts
    // with one (an indented line is not folded text), so a frame ending or starting in a blank
    // would not read back as written: frame names never do.
    while (!out.empty() && out.back() == ' ') out.pop_back();
    const auto first = out.find_first_not_of(' ');
    if (first == std::string::npos) return "[unknown]";
    return out.substr(first);
}

void FoldedStacks::add(const std::vector<std::string>& frames_root_first, std::uint64_t weight) {
    if (frames_root_first.empty() || weight == 0) return;
    std::string line;
    for (const auto& frame : frames_root_first) {
        if (!line.empty()) line += ';';
        line += sanitize_frame(frame);
    }
    add_line(line, weight);
}

void FoldedStacks::add_line(std::string_view stack, std::uint64_t weight) {
    if (stack.empty() || weight == 0) return;
    // The map's comparator is not transparent (the public type is std::map<std::string, ...>),
    // so lookup needs a std::string; try_emplace does it in one search.
    std::string line(stack);
    // A line starting with '#' is a comment to the folded reader: a root frame named so (a
    // process called "#x", a fuzzed perf script header) starts with '?' instead, as other bytes
    // a frame name cannot hold are rewritten (sanitize_frame), so that every stack reads back.
    if (line.front() == '#') line.front() = '?';
    auto [it, inserted] = stacks_.try_emplace(std::move(line), 0);
    it->second += weight;
    total_ += weight;
}

void FoldedStacks::merge(const FoldedStacks& other, std::string_view root) {
    if (root.empty()) {
        for (const auto& [stack, weight] : other.stacks()) add_line(stack, weight);
        return;
    }
    const std::string prefix = sanitize_frame(root) + ';';
    for (const auto& [stack, weight] : other.stacks()) add_line(prefix + stack, weight);
}

std::string to_folded_text(const FoldedStacks& stacks, std::string_view unit) {
    std::string out;
    std::size_t bytes = 0;
    for (const auto& [stack, weight] : stacks.stacks()) bytes += stack.size() + 22;
    out.reserve(bytes + kFoldedUnitComment.size() + unit.size() + 1);
    if (!unit.empty() && unit != "samples") {
        out += kFoldedUnitComment;
        out += sanitize_frame(unit);  // one line, valid UTF-8
        out += '\n';
    }
    char number[24];
    for (const auto& [stack, weight] : stacks.stacks()) {
        out += stack;
        out += ' ';
        const auto end = std::to_chars(number, number + sizeof number, weight).ptr;
        out.append(number, end);
        out += '\n';
    }
    return out;
}

namespace {

// Why a folded line is malformed, or "" when it is fine. On success `stack` and `count` hold
// the parsed parts.
std::string check_line(std::string_view line, std::string_view& stack, std::uint64_t& count) {
    if (!line.empty() && line.back() == '\r')
        return "CRLF line ending; convert the file with dos2unix or `tr -d '\\r'`";
    if (line.find('\0') != std::string_view::npos) return "NUL byte in line";
    if (const auto bad = first_invalid_utf8(line); bad != std::string_view::npos)
        return fmt::format("invalid UTF-8 at byte {}", bad + 1);
    const auto space = line.find_last_of(" \t");
    if (space == std::string_view::npos)
        return "no count: expected 'frame;frame;... COUNT' with the count after the last space";
    const std::string_view number = line.substr(space + 1);
    if (number.empty()) return "no count after the last space";
    if (number[0] == '-') return fmt::format("negative count '{}'", number);
    for (char c : number)
        if (c < '0' || c > '9') return fmt::format("non-numeric count '{}'", number);
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), count);
    if (ec != std::errc() || ptr != number.data() + number.size())
        return fmt::format("count '{}' is too large (over 2^64-1)", number);
    stack = line.substr(0, space);
    while (!stack.empty() && (stack.back() == ' ' || stack.back() == '\t')) stack.remove_suffix(1);
    if (stack.empty()) return "empty stack before the count";
    // No folder indents; indented text (a JSON document, YAML) is not folded stacks.
    if (stack.front() == ' ' || stack.front() == '\t')
        return "starts with whitespace (a folded line begins with its root frame)";
    for (std::size_t i = 0; i < stack.size(); ++i) {
        const auto c = static_cast<unsigned char>(stack[i]);
        if (c < 0x20 && c != '\t') return fmt::format("control character 0x{:02x} in stack", c);
    }
    std::size_t start = 0;
    while (true) {
        const auto end = stack.find(';', start);
        const auto frame = stack.substr(start, end == std::string_view::npos ? end : end - start);
        if (frame.empty()) return "empty frame name (';;' or a ';' at either end of the stack)";
        if (end == std::string_view::npos) break;
        start = end + 1;
    }
    return {};
}

}  // namespace

FoldedStacks parse_folded(std::istream& in, const std::string& filename,
                          const ParseOptions& options, ParseReport& report) {
    FoldedStacks stacks;
    std::string line;
    bool overlong = false;
    std::vector<char> buffer(1 << 16);

    auto finish_line = [&]() {
        ++report.lines;
        std::string why;
        std::string_view stack;
        std::uint64_t count = 0;
        if (overlong)
            why = fmt::format("line longer than {} bytes", kMaxFoldedLineBytes);
        else if (line.empty() || line == "\r" || line.front() == '#')
            why.clear();  // blank lines and comments are harmless
        else
            why = check_line(line, stack, count);
        if (!overlong && line.starts_with(kFoldedUnitComment))
            report.unit = line.substr(kFoldedUnitComment.size());
        // The total (every flamegraph's 100%) must stay a count: no wrap-around past 2^64-1.
        if (why.empty() && count > std::numeric_limits<std::uint64_t>::max() - stacks.total())
            why = fmt::format("count {} takes the file's total over 2^64-1", count);
        const bool blank = !overlong && (line.empty() || line == "\r" || line.front() == '#');
        if (!why.empty()) {
            auto problem = fmt::format("{}:{}: {}", filename, report.lines, why);
            if (options.strict)
                throw UsageError(problem + "; fix the line or run without --strict to skip it");
            ++report.skipped;
            if (report.problems.size() < kMaxReportedProblems)
                report.problems.push_back(std::move(problem));
        } else if (!blank) {
            stacks.add_line(stack, count);
            ++report.used;
        }
        line.clear();
        overlong = false;
    };

    bool pending = false;  // a line has started but not yet ended
    while (in) {
        in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
        const auto got = static_cast<std::size_t>(in.gcount());
        if (got == 0) break;
        std::string_view chunk(buffer.data(), got);
        while (!chunk.empty()) {
            const auto newline = chunk.find('\n');
            const auto piece = chunk.substr(0, newline);
            pending = true;
            // Bounded: an overlong line is counted once and the rest of it discarded.
            if (!overlong) {
                if (line.size() + piece.size() > kMaxFoldedLineBytes) {
                    overlong = true;
                    line.clear();
                } else {
                    line.append(piece);
                }
            }
            if (newline == std::string_view::npos) break;
            finish_line();
            pending = false;
            chunk.remove_prefix(newline + 1);
        }
    }
    if (in.bad())
        throw Error(fmt::format("reading '{}' failed; check the file and try again", filename));
    if (pending) finish_line();  // last line without '\n'
    // Not one usable line: the wrong file (a binary, a result JSON), not a folded file with a
    // few bad lines. Empty input stays an empty profile.
    if (report.used == 0 && report.skipped > 0)
        throw UsageError(
            fmt::format("{}: none of its {} lines is a folded stack ({}); give a folded file "
                        "('frame;frame COUNT' lines, as `lockprof fold` writes)",
                        filename, report.lines, report.problems.front()));
    return stacks;
}

}  // namespace lockprof::exporting
